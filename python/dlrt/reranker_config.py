"""Writes reranker_config.json for a sentence-transformers 6 LLM reranker whose pairs go through its chat template.

    python -m dlrt.reranker_config FOLDER [--output FILE | --output -]

dlrt does not render Jinja chat templates itself. This tool renders the folder's template once, the way
sentence-transformers 6.2's CrossEncoder.predict does for a (query, document) pair: the messages
[{"role": "system", "content": PROMPT}] (only when there is a prompt), {"role": "query", ...},
{"role": "document", ...}, in the message format of sentence_bert_config.json's modality_config, with
processing_kwargs' chat_template arguments (add_generation_prompt, ...) and the tokenizer's named special
tokens (bos_token, ...) as template variables. The query, the document and the prompt are unique
sentinel strings, which become {query}, {document} and {instruction} in the template that dlrt fills
per pair. The template comes from where transformers 5 loads it (a processor's files when the folder names a
processor_class, else the tokenizer's; see _chat_template); a processor's prompt gets the tokenizer's special
tokens unless it starts with the BOS token, a tokenizer's never ("special_tokens"). A template that gives the
prompt a system turn only when there is one gets a second template for requests with an instruction
("instruction_template"). The result is checked on probe pairs (spaces, case, markup, quotes, braces, line breaks,
non-ASCII, empty): a template that changes the content in any way other than putting it in place
(trims, escapes, case changes, branches on it), drops it, reads the date, or fails to render is
refused with the reason and exit status 1. Needs jinja2 (`pip install jinja2`).
"""
import argparse
import json
import os
import sys

SENTINELS = {"query": "\u2063DLRTQUERY9f41\u2063", "document": "\u2063DLRTDOCUMENT5c07\u2063",
             "instruction": "\u2063DLRTINSTRUCTION3b6e\u2063"}
PLACEHOLDERS = ("{instruction}", "{query}", "{document}")
# (query, document, instruction) contents that a template must put in place unchanged.
PROBES = [
    ("What is the capital of China?", "The capital of China is Beijing.", "Given a question, find the answer"),
    ("  leading and trailing spaces  ", "\n\nline\nbreaks\n", " \t"),
    ("UPPER lower Title", "<b>&amp; \"double\" 'single'</b>", "{{ braces }} {% raw %} {query} {document}"),
    ("", "", "x"),
    ("0", "1 2 3 4", "Caf\u00e9 na\u00efve \u6f22\u5b57 \U0001F642"),
    ("yes", "no", "system"),
]
# apply_chat_template's size arguments: dlrt takes the maximum length from the folder, not from these.
SIZE_KWARGS = ("truncation", "max_length", "return_tensors")
# apply_chat_template's arguments that change the tokenization or the rendered messages.
UNREAD_KWARGS = ("sanitize_control_tokens", "continue_final_message", "tools", "documents")


class RefusedError(Exception):
    """The folder cannot be served through a rendered prompt; the message says why."""


def _read_json(path, default=None):
    if not os.path.exists(path):
        return default
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise RefusedError(f"{path}: {e}") from e


def _read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _processor_class(folder):
    """The processor class transformers' AutoProcessor finds in the folder's files (None: a tokenizer loads)."""
    for name in ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json",
                 "tokenizer_config.json", "config.json"):
        cls = (_read_json(os.path.join(folder, name), {}) or {}).get("processor_class")
        if isinstance(cls, str) and cls:
            return cls
    return None


def _template_files(folder):
    """chat_template.jinja and additional_chat_templates/*.jinja as transformers 5 reads them: a string, a dict of
    named templates ("default": chat_template.jinja), or None."""
    templates = {}
    extra = os.path.join(folder, "additional_chat_templates")
    if os.path.isdir(extra):
        for name in sorted(os.listdir(extra)):
            if name.endswith(".jinja"):
                templates[name[:-len(".jinja")]] = _read_text(os.path.join(extra, name))
    if os.path.exists(os.path.join(folder, "chat_template.jinja")):
        templates["default"] = _read_text(os.path.join(folder, "chat_template.jinja"))
    if list(templates) == ["default"]:
        return templates["default"], os.path.join(folder, "chat_template.jinja")
    return (templates or None), extra


def _chat_template(folder, st_config, requested):
    """The template sentence-transformers 6.2's CrossEncoder renders with, from where transformers 5 loads it, and
    whether a processor (not a bare tokenizer) applies it. A tokenizer: sentence_bert_config.json's processor_kwargs
    chat_template, else chat_template.jinja (with additional_chat_templates/), else tokenizer_config.json's
    chat_template. A processor (a processor_class in its files): processor_kwargs' chat_template, else
    processor_config.json's chat_template, else chat_template.json's, else chat_template.jinja (with
    additional_chat_templates/). `requested`: processing_kwargs' chat_template argument (a name or a template)."""
    kwargs = st_config.get("processor_kwargs", st_config.get("tokenizer_args")) or {}
    cls = _processor_class(folder)
    # sentence-transformers renders PaliGemma's text-only pairs with its tokenizer.
    processor = cls is not None and cls != "PaliGemmaProcessor"
    template, path = None, None
    if isinstance(kwargs, dict) and kwargs.get("chat_template") is not None:
        template, path = kwargs["chat_template"], os.path.join(folder, "sentence_bert_config.json")
    elif processor:
        pc = os.path.join(folder, "processor_config.json")
        legacy = os.path.join(folder, "chat_template.json")
        if (_read_json(pc, {}) or {}).get("chat_template") is not None:
            template, path = _read_json(pc)["chat_template"], pc
        elif os.path.exists(legacy):
            if os.path.isdir(os.path.join(folder, "additional_chat_templates")):
                raise RefusedError(f"{legacy}: transformers refuses a chat_template.json beside "
                                   "additional_chat_templates/")
            template, path = (_read_json(legacy, {}) or {}).get("chat_template"), legacy
        else:
            template, path = _template_files(folder)
    else:
        template, path = _template_files(folder)
        if template is None:
            path = os.path.join(folder, "tokenizer_config.json")
            template = (_read_json(path, {}) or {}).get("chat_template")
    if isinstance(template, list):  # named templates
        template = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
    if isinstance(template, dict):
        name = requested if requested is not None else "default"
        if name not in template and requested is None:
            raise RefusedError(f"{path}: named chat templates {sorted(template)} and none is \"default\"")
        template = template.get(name, requested)
    elif requested is not None:
        template = requested  # apply_chat_template's chat_template argument is the template itself
    if not isinstance(template, str) or not template:
        where = ("processor_config.json's chat_template, chat_template.json or chat_template.jinja" if processor
                 else "chat_template.jinja or tokenizer_config.json's chat_template")
        raise RefusedError(f"{folder}: the {'processor' if processor else 'tokenizer'} has no chat template ({where}); "
                           "dlrt serves such a reranker as it is, without reranker_config.json")
    return template, path, processor


def _special_tokens(folder):
    """The named special tokens transformers passes to the template (bos_token, eos_token, ...)."""
    config = _read_json(os.path.join(folder, "tokenizer_config.json"), {}) or {}
    legacy = _read_json(os.path.join(folder, "special_tokens_map.json"), {}) or {}
    out = {}
    for name in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
        value = config.get(name, legacy.get(name))
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[name] = value
    return out


def _environment():
    """A Jinja environment with the options, filters and globals transformers gives chat templates."""
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as e:
        raise RefusedError("rendering a chat template needs jinja2: pip install jinja2") from e

    class GenerationTag(jinja2.ext.Extension):
        # {% generation %}...{% endgeneration %} marks assistant text for training masks; it renders its body.
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def strftime_now(_format):
        raise RefusedError("the chat template reads the current date (strftime_now), so its prompt is not fixed")

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now, dict=dict)
    return env, jinja2


def _message_format(st_config, model_type, template):
    """sentence-transformers' message format: modality_config's, else inferred from the template as it does."""
    fmt = ((st_config.get("modality_config") or {}).get("message") or {}).get("format", "auto")
    if fmt in ("flat", "structured"):
        return fmt
    if model_type in ("apertus", "deepseek_v3", "gpt_oss", "seed_oss"):
        return "flat"
    patterns = ("content[0]", ".type", "'type'", '"type"', "item.type", "message.content[")
    return "structured" if any(p in template for p in patterns) else "flat"


def fill(template, instruction, query, document, empty_text=""):
    """dlrt's substitution (llm_reranker.cpp): {instruction}, {query}, {document} replaced in one pass; an empty
    query or document by `empty_text`."""
    out, i = [], 0
    values = {"{instruction}": instruction, "{query}": query or empty_text, "{document}": document or empty_text}
    while i < len(template):
        for key in PLACEHOLDERS:
            if template.startswith(key, i):
                out.append(values[key])
                i += len(key)
                break
        else:
            out.append(template[i])
            i += 1
    return "".join(out)


class _Renderer:
    def __init__(self, folder):
        modules = _read_json(os.path.join(folder, "modules.json"))
        types = [m.get("type", "") for m in modules] if isinstance(modules, list) else []
        if len(types) != 2 or not types[1].endswith(".LogitScore"):
            raise RefusedError(f"{folder}: not a sentence-transformers CrossEncoder over a causal LM (modules.json "
                               f"listing a Transformer and a LogitScore); it lists {types or 'nothing'}")
        st = _read_json(os.path.join(folder, "sentence_bert_config.json"), {}) or {}
        if "message" not in (st.get("modality_config") or {}):
            raise RefusedError(f"{folder}: sentence_bert_config.json's modality_config has no \"message\": "
                               "sentence-transformers tokenizes its pairs as text pairs, and dlrt serves the folder "
                               "as it is, without reranker_config.json")
        kwargs = dict(((st.get("processing_kwargs") or {}).get("chat_template")) or {})
        self.restore_suffix = bool(kwargs.pop("restore_suffix", True))
        for bucket in ("text", "common"):
            for key in (st.get("processing_kwargs") or {}).get(bucket) or {}:
                if key not in ("padding", "padding_side"):
                    raise RefusedError(f"{folder}: sentence_bert_config.json's processing_kwargs.{bucket}.{key} "
                                       "is not read by dlrt")
        if any(k in kwargs for k in SIZE_KWARGS):
            raise RefusedError(f"{folder}: sentence_bert_config.json's processing_kwargs.chat_template sets "
                               f"{[k for k in SIZE_KWARGS if k in kwargs]}, which dlrt does not read")
        kwargs.pop("padding", None)
        if any(kwargs.get(k) for k in UNREAD_KWARGS):
            raise RefusedError(f"{folder}: sentence_bert_config.json's processing_kwargs.chat_template sets "
                               f"{[k for k in UNREAD_KWARGS if kwargs.get(k)]}, which dlrt does not read")
        for k in UNREAD_KWARGS:
            kwargs.pop(k, None)
        requested = kwargs.pop("chat_template", None)
        self.template, self.template_path, self.processor = _chat_template(folder, st, requested)
        config = _read_json(os.path.join(folder, "config.json"), {}) or {}
        self.format = _message_format(st, config.get("model_type"), self.template)
        env, self.jinja2 = _environment()
        try:
            self.compiled = env.from_string(self.template)
        except self.jinja2.TemplateError as e:
            raise RefusedError(f"{self.template_path}: the chat template does not parse: {e}") from e
        self.special = _special_tokens(folder)
        self.variables = {**self.special, **kwargs}
        self.variables.setdefault("add_generation_prompt", False)
        cst = _read_json(os.path.join(folder, "config_sentence_transformers.json"), {}) or {}
        name = cst.get("default_prompt_name")
        self.default_prompt = (cst.get("prompts") or {}).get(name) if name else None
        if self.default_prompt is not None and not isinstance(self.default_prompt, str):
            raise RefusedError(f"{folder}: config_sentence_transformers.json's prompt {name!r} is not a string")
        self.default_prompt = self.default_prompt or None  # an empty prompt adds no system message

    def _message(self, role, text):
        if self.format == "flat":
            # A processor's apply_chat_template (tokenize=True) makes an empty content an empty list.
            return {"role": role, "content": [] if self.processor and text == "" else text}
        return {"role": role, "content": [{"type": "text", "text": text}]}

    def render(self, query, document, system=None):
        messages = [self._message("query", query), self._message("document", document)]
        if system is not None:
            messages.insert(0, self._message("system", system))
        try:
            return self.compiled.render(messages=messages, tools=None, documents=None, **self.variables)
        except RefusedError as e:
            raise RefusedError(f"{self.template_path}: {e}") from e
        except Exception as e:  # a template's raise_exception, an undefined call, a sandbox refusal
            raise RefusedError(f"{self.template_path}: the chat template fails to render a pair: "
                               f"{type(e).__name__}: {e}") from e


def _with_placeholders(rendered, path, roles):
    for p in PLACEHOLDERS:
        if p in rendered:
            raise RefusedError(f"{path}: the rendered prompt holds the text {p}, which dlrt would fill")
    leftover = rendered
    for sentinel in SENTINELS.values():
        leftover = leftover.replace(sentinel, "")
    for role in roles:
        if SENTINELS[role] not in rendered:
            if "\u2063DLRT" in leftover.upper():
                raise RefusedError(f"{path}: the chat template changes the content it is given (the {role} "
                                   "came out altered)")
            raise RefusedError(f"{path}: the {role} does not reach the rendered prompt")
    for role, sentinel in SENTINELS.items():
        rendered = rendered.replace(sentinel, "{" + role + "}")
    if "\u2063DLRT" in leftover.upper():
        raise RefusedError(f"{path}: the chat template changes the content it is given (a marker came out altered)")
    return rendered


def _empty_text(renderer, template, default_instruction):
    """What an empty query or document renders as: itself, or (a processor's, in the flat format) an empty list."""
    want = renderer.render("", "", renderer.default_prompt)
    for candidate in ("", renderer.compiled.environment.from_string("{{ x }}").render(x=[])):
        if fill(template, default_instruction or "", "", "", candidate) == want:
            return candidate
    return ""  # neither: the probes say how the template changes the content


def _check(renderer, template, default_instruction, instruction_template=None, empty_text=""):
    """Every probe pair renders as dlrt fills the template; else the template transforms the content."""
    with_instruction = instruction_template or template
    for query, document, instruction in PROBES:
        cases = [(with_instruction, instruction, renderer.render(query, document, instruction))] \
            if "{instruction}" in with_instruction else []
        cases.append((template, default_instruction or "", renderer.render(query, document, renderer.default_prompt)))
        for tmpl, instr, want in cases:
            got = fill(tmpl, instr, query, document, empty_text)
            if got != want:
                at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                raise RefusedError(
                    f"{renderer.template_path}: the chat template does more than put the content in place: for the "
                    f"query {query!r}, document {document!r} and instruction {instr!r} it renders "
                    f"{want[max(0, at - 30):at + 30]!r} where the content put in place gives "
                    f"{got[max(0, at - 30):at + 30]!r}")


def _default_instruction(with_system, without):
    """The text the {instruction} slot of `with_system` holds in `without` (the prompt rendered with no system
    message), or None when `without` is not `with_system` with some text in that slot."""
    head, _, rest = with_system.partition("{instruction}")
    if "{instruction}" in rest or not (without.startswith(head) and without.endswith(rest)):
        return None
    if len(without) < len(head) + len(rest):
        return None
    candidate = without[len(head):len(without) - len(rest)]
    return candidate if fill(with_system, candidate, "{query}", "{document}") == without else None


def make_config(folder):
    """The reranker_config.json contents for `folder` (a dict); RefusedError with the reason otherwise."""
    r = _Renderer(folder)
    s = SENTINELS
    pair = ("query", "document")
    with_system = _with_placeholders(r.render(s["query"], s["document"], s["instruction"]), r.template_path, pair)
    # Without an instruction a pair gets the default prompt as its system message, or no system message.
    if r.default_prompt is not None:
        template = with_system
        default_instruction = r.default_prompt if "{instruction}" in template else None
    else:
        without = _with_placeholders(r.render(s["query"], s["document"]), r.template_path, pair)
        default_instruction = _default_instruction(with_system, without) if "{instruction}" in with_system else None
        # No slot an instruction fills without changing the rest (a system turn only with one): the prompt
        # without one, and the prompt with one for a request that gives an instruction.
        template = with_system if default_instruction is not None else without
    instruction_template = with_system if "{instruction}" in with_system and template != with_system else None
    empty_text = _empty_text(r, template, default_instruction)
    _check(r, template, default_instruction, instruction_template, empty_text)
    config = {"prefix": "", "template": template, "suffix": "",
              "special_tokens": _special_tokens_added(r, [t for t in (template, instruction_template) if t]),
              "restore_suffix": r.restore_suffix}
    if default_instruction is not None:
        config["instruction"] = default_instruction
    if instruction_template is not None:
        config["instruction_template"] = instruction_template
    if empty_text:
        config["empty_text"] = empty_text
    return config


def _special_tokens_added(renderer, templates):
    """Whether the tokenizer's post-processor adds its special tokens to the rendered prompt: a tokenizer's
    apply_chat_template never does; a processor's does unless the prompt starts with the BOS token."""
    if not renderer.processor:
        return False
    bos = renderer.special.get("bos_token")
    starts = {bool(bos) and t.startswith(bos) for t in templates}
    if bos and any(t.startswith(p) for t in templates for p in PLACEHOLDERS) or len(starts) != 1:
        raise RefusedError(f"{renderer.template_path}: whether the prompt starts with the BOS token {bos!r}, which "
                           "decides whether the processor adds special tokens, depends on the content")
    return not starts.pop()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m dlrt.reranker_config", description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="the sentence-transformers CrossEncoder folder")
    ap.add_argument("--output", help="where to write (default FOLDER/reranker_config.json; - for stdout)")
    args = ap.parse_args(argv)
    try:
        config = make_config(args.folder)
    except RefusedError as e:
        print(f"dlrt.reranker_config: {e}", file=sys.stderr)
        return 1
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    out = args.output or os.path.join(args.folder, "reranker_config.json")
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
