"""python -m dlrt.reranker_config on sentence-transformers 6.2's LLM reranker with a chat template
(tests/models/st_modules/st6_llm_reranker_chat, made by tests/models/make_st_modules.py): the prompt it
writes is the text CrossEncoder renders, dlrt.CrossEncoder then scores as CrossEncoder.predict (within
1e-5, with and without an instruction, cut pairs included), and templates that do more than put the
query and document in place, or folders it does not apply to, are refused with the reason and exit 1."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlrt
from conftest import ROOT

pytest.importorskip("jinja2", reason="dlrt.reranker_config renders chat templates with jinja2 "
                                     "(scripts/pins.sh's PYTHON_TEST_PACKAGES installs it)")
from dlrt import reranker_config  # noqa: E402

ST = os.path.join(ROOT, "tests", "models", "st_modules")
CHAT = os.path.join(ST, "st6_llm_reranker_chat")


def want():
    with open(os.path.join(ST, "st6_reference.json"), encoding="utf-8") as f:
        return json.load(f)["folders"]["llm_reranker_chat"]


def copy_chat(tmp_path, template=None):
    folder = tmp_path / "chat"
    shutil.copytree(CHAT, folder)
    if template is not None:
        (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return folder


def test_output_is_the_committed_config():
    # The C++ tests read the committed copy: it must be what the tool writes today.
    with open(os.path.join(ST, "st6_llm_reranker_chat.reranker_config.json"), encoding="utf-8") as f:
        assert reranker_config.make_config(CHAT) == json.load(f)


def test_prompt_is_the_rendered_chat_template():
    w = want()
    config = reranker_config.make_config(CHAT)
    assert config["restore_suffix"] is True and config["special_tokens"] is False
    for text, rendered in zip(w["texts"], w["rendered"]):
        assert reranker_config.fill(config["template"], config["instruction"], w["query"], text) == rendered


def test_scores_are_predicts(tmp_path):
    w = want()
    folder = copy_chat(tmp_path)
    with pytest.raises(dlrt.Error, match="python -m dlrt.reranker_config"):
        dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    run = subprocess.run([sys.executable, "-m", "dlrt.reranker_config", str(folder)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert (folder / "reranker_config.json").exists()
    c = dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    assert c.is_llm_reranker
    pairs = [(w["query"], t) for t in w["texts"]]
    assert sum(n == w["max_length"] for n in w["lengths"]) >= 3  # pairs cut to the maximum length are compared
    np.testing.assert_allclose(c.predict(pairs), w["scores"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(c.predict(pairs, instruction=w["instruction"]), w["scores_instruction"],
                               atol=1e-5, rtol=0)


def test_a_tail_inside_the_user_turn_is_restored(tmp_path):
    # A line break after the document: sentence-transformers' tail starts with it, so a cut pair keeps it
    # (a prefix / middle / suffix split at <|im_end|> would cut it with the document).
    w = want()
    folder = copy_chat(tmp_path, w["variant_template"])
    assert reranker_config.main([str(folder)]) == 0
    c = dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    got = c.predict([(w["query"], t) for t in w["texts"]])
    np.testing.assert_allclose(got, w["scores_variant"], atol=1e-5, rtol=0)
    assert np.abs(np.array(w["scores_variant"]) - np.array(w["scores"])).max() > 1e-3  # the variant is another prompt


TEMPLATE = open(os.path.join(CHAT, "chat_template.jinja"), encoding="utf-8").read()


@pytest.mark.parametrize("template, reason", [
    ("{% if messages %}", "does not parse"),
    (TEMPLATE.replace("{{ ns.query }}", "{{ ns.query | trim }}"), "more than put the content in place"),
    (TEMPLATE.replace("{{ ns.document }}", "{{ ns.document | e }}"), "more than put the content in place"),
    (TEMPLATE.replace("{{ ns.query }}", "{{ ns.query | upper }}"), "changes the content"),
    (TEMPLATE.replace("{{ ns.query }}", "{% if ns.query %}{{ ns.query }}{% else %}(none){% endif %}"),
     "more than put the content in place"),
    (TEMPLATE.replace("{{ ns.document }}", "{{ ns.document[:12] }}"), "changes the content"),
    (TEMPLATE.replace("{{ ns.document }}", ""), "the document does not reach"),
    (TEMPLATE.replace("<|im_start|>system", "{{ raise_exception('pairs only') }}"), "fails to render"),
    (TEMPLATE.replace("<|im_start|>system", "{{ strftime_now('%Y') }}"), "current date"),
])
def test_templates_that_transform_the_content_are_refused(tmp_path, capsys, template, reason):
    folder = copy_chat(tmp_path, template)
    assert reranker_config.main([str(folder)]) == 1
    assert reason in capsys.readouterr().err
    assert not (folder / "reranker_config.json").exists()


def test_folders_without_a_chat_template_are_refused(tmp_path, capsys):
    # A LogitScore folder whose pairs are text pairs: served as it is.
    assert reranker_config.main([os.path.join(ST, "st6_llm_reranker")]) == 1
    assert "no \"message\"" in capsys.readouterr().err
    # A "message" modality but no template file or tokenizer_config.json entry.
    folder = copy_chat(tmp_path)
    os.remove(folder / "chat_template.jinja")
    assert reranker_config.main([str(folder)]) == 1
    assert "has no chat template" in capsys.readouterr().err
    # Not a LogitScore CrossEncoder at all.
    assert reranker_config.main([os.path.join(ST, "st6_dense")]) == 1
    assert "not a sentence-transformers CrossEncoder over a causal LM" in capsys.readouterr().err
    run = subprocess.run([sys.executable, "-m", "dlrt.reranker_config", os.path.join(ST, "st6_dense")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "dlrt.reranker_config:" in run.stderr


def test_a_template_without_an_instruction_slot_takes_none(tmp_path):
    # System messages ignored: the prompt has no {instruction}, and dlrt refuses an instruction for it.
    template = TEMPLATE.replace('{%- if message.role == "system" -%}{%- set ns.instruction = message.content -%}\n'
                                '    {%- elif', '{%- if')
    assert template != TEMPLATE
    folder = copy_chat(tmp_path, template)
    assert reranker_config.main([str(folder)]) == 0
    config = json.loads((folder / "reranker_config.json").read_text(encoding="utf-8"))
    assert "{instruction}" not in config["template"] and "instruction" not in config
    c = dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    w = want()
    np.testing.assert_allclose(c.predict([(w["query"], t) for t in w["texts"]]), w["scores"], atol=1e-5, rtol=0)
    with pytest.raises(dlrt.InvalidArgument, match="no place for an instruction"):
        c.predict([(w["query"], "a")], instruction="judge")


BOS = os.path.join(ST, "st6_llm_reranker_bos")


def want_bos():
    with open(os.path.join(ST, "st6_reference.json"), encoding="utf-8") as f:
        return json.load(f)["folders"]["llm_reranker_bos"]


def test_bos_output_is_the_committed_config():
    with open(os.path.join(ST, "st6_llm_reranker_bos.reranker_config.json"), encoding="utf-8") as f:
        assert reranker_config.make_config(BOS) == json.load(f)


def test_a_bos_template_and_an_instruction_turn_score_as_predict(tmp_path):
    # Llama with a tokenizer that adds <bos> ... <eos> to a text; a ChatML-style template starting with
    # {{ bos_token }}, the instruction a system turn of its own. apply_chat_template adds no special tokens, so
    # dlrt takes the post-processor's off again; the prompt with an instruction is another template.
    w = want_bos()
    folder = tmp_path / "bos"
    shutil.copytree(BOS, folder)
    assert reranker_config.main([str(folder)]) == 0
    config = json.loads((folder / "reranker_config.json").read_text(encoding="utf-8"))
    assert config["special_tokens"] is False and config["template"].startswith("<bos><|im_start|>query\n")
    assert config["instruction_template"].startswith("<bos><|im_start|>system\n{instruction}<|im_end|>\n")
    for text, rendered in zip(w["texts"], w["rendered"]):
        assert reranker_config.fill(config["template"], "", w["query"], text) == rendered
    c = dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    pairs = [(w["query"], t) for t in w["texts"]]
    assert sum(n == w["max_length"] for n in w["lengths"]) >= 3
    np.testing.assert_allclose(c.predict(pairs), w["scores"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(c.predict(pairs, instruction=w["instruction"]), w["scores_instruction"],
                               atol=1e-5, rtol=0)


def with_processor(tmp_path):
    """The BOS folder behind the LlavaProcessor the generator saved: processor_config.json and a
    chat_template.json without the BOS token beside the chat_template.jinja with it."""
    folder = tmp_path / "processor"
    shutil.copytree(BOS, folder)
    for name, content in want_bos()["processor_files"].items():
        (folder / name).write_text(json.dumps(content), encoding="utf-8")
    return folder


def test_a_processor_reads_chat_template_json_and_adds_special_tokens(tmp_path):
    # transformers' processor takes chat_template.json before chat_template.jinja, and tokenizes the prompt with
    # the post-processor's tokens when it does not start with the BOS token (sentence-transformers' predict).
    w = want_bos()
    folder = with_processor(tmp_path)
    assert reranker_config.main([str(folder)]) == 0
    config = json.loads((folder / "reranker_config.json").read_text(encoding="utf-8"))
    assert config["special_tokens"] is True and config["template"].startswith("<|im_start|>query\n")
    c = dlrt.CrossEncoder(str(folder), device="cpu", threads=2)
    pairs = [(w["query"], t) for t in w["texts"]]
    np.testing.assert_allclose(c.predict(pairs), w["scores_processor"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(c.predict(pairs, instruction=w["instruction"]), w["scores_processor_instruction"],
                               atol=1e-5, rtol=0)


MARK = "{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"


def write_template(folder, where, tag):
    """Puts the template `tag` + MARK where `where` says transformers may find one."""
    if where == "jinja":
        (folder / "chat_template.jinja").write_text(tag + MARK, encoding="utf-8")
    elif where in ("tokenizer_config", "processor_config", "sentence_bert_config"):
        path = folder / f"{where}.json"
        config = json.loads(path.read_text(encoding="utf-8"))
        if where == "sentence_bert_config":
            config["processor_kwargs"] = {"chat_template": tag + MARK}
        else:
            config["chat_template"] = tag + MARK
        path.write_text(json.dumps(config), encoding="utf-8")
    elif where == "json":
        (folder / "chat_template.json").write_text(json.dumps({"chat_template": tag + MARK}), encoding="utf-8")


# Where sentence-transformers 6.2 (transformers 5.24) took the template from, seen by loading such folders:
# a tokenizer reads sentence_bert_config.json's processor_kwargs, then chat_template.jinja, then
# tokenizer_config.json, never chat_template.json; a processor reads processor_kwargs, then
# processor_config.json, then chat_template.json, then chat_template.jinja, never tokenizer_config.json.
@pytest.mark.parametrize("processor, places, chosen", [
    (False, ["json", "jinja", "tokenizer_config"], "jinja"),
    (False, ["json", "tokenizer_config"], "tokenizer_config"),
    (False, ["jinja", "sentence_bert_config"], "sentence_bert_config"),
    (True, ["json", "jinja", "tokenizer_config"], "json"),
    (True, ["processor_config", "json", "jinja"], "processor_config"),
    (True, ["jinja", "tokenizer_config"], "jinja"),
    (True, ["jinja", "sentence_bert_config", "processor_config"], "sentence_bert_config"),
])
def test_the_template_comes_from_where_transformers_reads_it(tmp_path, processor, places, chosen):
    folder = with_processor(tmp_path) if processor else copy_chat(tmp_path)
    for name in ("chat_template.jinja", "chat_template.json"):
        if (folder / name).exists():
            os.remove(folder / name)
    for where in places:
        write_template(folder, where, where.upper())
    config = reranker_config.make_config(str(folder))
    assert config["template"].startswith(chosen.upper() + "[query:{query}]"), config["template"]


def test_a_processor_without_its_template_files_is_refused(tmp_path, capsys):
    # tokenizer_config.json's chat_template is the tokenizer's, which a processor does not read.
    folder = with_processor(tmp_path)
    for name in ("chat_template.jinja", "chat_template.json"):
        os.remove(folder / name)
    write_template(folder, "tokenizer_config", "TC")
    assert reranker_config.main([str(folder)]) == 1
    assert "the processor has no chat template" in capsys.readouterr().err


def test_named_templates_take_the_default_or_the_requested_one(tmp_path, capsys):
    folder = copy_chat(tmp_path)
    os.remove(folder / "chat_template.jinja")
    extra = folder / "additional_chat_templates"
    extra.mkdir()
    (extra / "rerank.jinja").write_text("RERANK" + MARK, encoding="utf-8")
    assert reranker_config.main([str(folder)]) == 1
    assert "none is \"default\"" in capsys.readouterr().err
    st = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    st["processing_kwargs"]["chat_template"]["chat_template"] = "rerank"
    (folder / "sentence_bert_config.json").write_text(json.dumps(st), encoding="utf-8")
    assert reranker_config.make_config(str(folder))["template"].startswith("RERANK[query:{query}]")
