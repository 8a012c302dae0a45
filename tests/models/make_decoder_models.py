#!/usr/bin/env python3
"""Tiny decoder-family retrieval models for dlrt's tests, with reference outputs.

Writes, under OUT (default tests/models/retrieval):

  qwen3_embed/        a Qwen3 embedder as sentence-transformers saves it (Qwen3Model,
                      last-token pooling, Normalize, query/document prompts, a tokenizer that
                      appends <|endoftext|> and pads on the left, as Qwen3-Embedding's does),
                      exported to onnx/model.onnx by sentence-transformers' ONNX backend
                      (optimum, feature-extraction with position_ids)
  qwen3_embed_fused/  the same export through ONNX Runtime's transformers optimizer
                      (model_type qwen3: RMSNorm -> SimplifiedLayerNormalization and friends)
  qwen3_embed_gqa/    the same checkpoint through ONNX Runtime GenAI's model builder (fp32,
                      exclude_lm_head): GroupQueryAttention with rotary inside, past_key_values inputs
  qwen3_embed_int4/   the model builder's int4 form (MatMulNBits, block 16); its reference is
                      ONNX Runtime's run of that file (the weights are quantized)
  dense_embed/        an EmbeddingGemma-shaped stack: a Gemma3 text model, mean pooling,
                      2_Dense and 3_Dense, Normalize, a default prompt, a tokenizer adding
                      <bos> ... <eos>. Causal attention: optimum-onnx 0.1.0 exports gemma3_text
                      with a causal mask even when use_bidirectional_attention is set (as
                      EmbeddingGemma's is), so that export would not match torch
  qwen3_rerank/       a Qwen3ForCausalLM exported by optimum (text-generation, logits), scored
                      as Qwen3-Reranker's model card does: softmax(logit(no), logit(yes)) at
                      the last position of its prompt template
  decoder_reference.json   the families' own outputs in torch (float32): sentence-transformers'
                      encode for the embedders, the model card's code for the reranker

Random weights, seeded; run once with the packages of scripts/pins.sh's
DECODER_MODEL_PACKAGES (see docs/testing.md), and commit the folders:

  python3 -m venv /tmp/venv-decoder && /tmp/venv-decoder/bin/pip install $DECODER_MODEL_PACKAGES
  /tmp/venv-decoder/bin/pip install --no-deps --target /tmp/genai $DECODER_MODEL_GENAI
  GENAI_PATH=/tmp/genai /tmp/venv-decoder/bin/python tests/models/make_decoder_models.py
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

SEED = 67
HERE = Path(__file__).resolve().parent

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<bos>", "<eos>", "<pad>"]
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = ("the a of to in is was for on with as by at from that this it be are or an which not yes no "
         "query document passage search retrieve relevant answer given web judge whether meets requirements "
         "based instruct provided note can only system user assistant capital city river mountain cat dog "
         "house paper model vector token embedding rerank score language sentence text title none task "
         "result question fact code number value data time year people world water light").split()

# Texts for the references: mixed lengths (1 to ~60 tokens), punctuation, digits, accents, CJK, emoji.
TEXTS = [
    "hello",
    "What is the capital of France?",
    "Paris is the capital and most populous city of France.",
    "The river runs through the city, past the old mountain house, where a cat and a dog sleep in the sun "
    "all day long while people talk about the weather, the year, the water and the light.",
    "yes",
    "Ünïcödé façade — naïve café, 東京タワー, 🙂 and numbers 12345.",
    "",
    "code: def f(x): return x * 2  # comment",
]

QUERIES = ["What is the capital of China?", "Explain gravity"]
DOCUMENTS = [
    "The capital of China is Beijing.",
    "Gravity is a force that attracts two bodies towards each other. It gives weight to physical objects "
    "and is responsible for the movement of planets around the sun.",
    "no",
    "A cat sat on the mat.",
]
CUSTOM_INSTRUCTION = "Given a question, find the passage that states the fact"

# Qwen3-Reranker's model card (the template dlrt uses by default).
RERANK_PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the "
                 "Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n")
RERANK_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
RERANK_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"


def corpus():
    rng = random.Random(SEED)
    lines = []
    for _ in range(4000):
        n = rng.randint(1, 12)
        words = [rng.choice(WORDS) for _ in range(n)]
        if rng.random() < 0.3:
            words[0] = words[0].capitalize()
        line = " ".join(words)
        if rng.random() < 0.2:
            line += rng.choice([".", "?", "!", ":", ","])
        lines.append(line)
    lines += ["yes", "no", "Yes", "No"] * 200
    lines += TEXTS + QUERIES + DOCUMENTS + [RERANK_PREFIX, RERANK_SUFFIX, RERANK_INSTRUCTION]
    return lines


def train_tokenizer(vocab_size):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer=trainer)
    for t in ("yes", "no"):
        assert tok.token_to_id(t) is not None, f"the tokenizer has no token {t!r}"
    return tok


def with_post_processor(tok, kind):
    """A copy of `tok` with the post-processor of a family's tokenizer."""
    from tokenizers import Tokenizer, processors

    t = Tokenizer.from_str(tok.to_str())
    eos = ("<|endoftext|>", t.token_to_id("<|endoftext|>"))
    if kind == "qwen3_embedding":  # Qwen3-Embedding: $A <|endoftext|>
        t.post_processor = processors.TemplateProcessing(single="$A:0 <|endoftext|>:0",
                                                         pair="$A:0 <|endoftext|>:0 $B:1 <|endoftext|>:1",
                                                         special_tokens=[eos])
    elif kind == "gemma":  # Gemma: <bos> $A <eos>
        t.post_processor = processors.TemplateProcessing(
            single="<bos>:0 $A:0 <eos>:0", pair="<bos>:0 $A:0 <eos>:0 $B:1 <eos>:1",
            special_tokens=[("<bos>", t.token_to_id("<bos>")), ("<eos>", t.token_to_id("<eos>"))])
    else:  # Qwen3 base / Qwen3-Reranker: ByteLevel, nothing added
        t.post_processor = processors.ByteLevel(trim_offsets=False)
    return t


def save_hf_tokenizer(tok, folder, pad, eos, padding_side, bos=None, max_length=512):
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=pad, eos_token=eos, bos_token=bos,
                                   padding_side=padding_side, model_max_length=max_length,
                                   additional_special_tokens=[s for s in SPECIALS if s not in (pad, eos, bos)])
    fast.save_pretrained(folder)
    return fast


def qwen3_config(vocab, eos_token_id):
    from transformers import Qwen3Config

    return Qwen3Config(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                       rope_theta=10000.0, rms_norm_eps=1e-6, initializer_range=0.25, tie_word_embeddings=True,
                       bos_token_id=None, eos_token_id=eos_token_id, pad_token_id=None)


def set_seed():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)


def strip_folder(folder):
    """Drops what dlrt never reads and only makes the folder bigger (torch weights)."""
    for p in list(Path(folder).rglob("*")):
        if p.is_file() and (p.suffix in (".safetensors", ".bin") and p.parent == Path(folder) or
                            p.name in ("README.md", "generation_config.json")):
            p.unlink()


def st_embedder(hf_folder, out, modules_extra, prompts, default_prompt_name):
    """sentence-transformers' model over `hf_folder`, saved at `out` with its ONNX export."""
    from sentence_transformers import SentenceTransformer, models

    word = models.Transformer(str(hf_folder), max_seq_length=512)
    modules = [word] + modules_extra(word.get_word_embedding_dimension()) + [models.Normalize()]
    st = SentenceTransformer(modules=modules, prompts=prompts, default_prompt_name=default_prompt_name)
    st.eval()
    st.save(str(out))
    onnx = SentenceTransformer(str(out), backend="onnx", model_kwargs={"export": True})
    onnx.save(str(out))
    return st


def embed_reference(st, prompts):
    """sentence-transformers' vectors of TEXTS (one padded batch) under each prompt, and its token ids.
    sentence-transformers strips each text (prompt included) before tokenizing; dlrt, like TEI, does
    not: "stripped" lists the texts where that makes a difference (there the ids differ)."""
    ref = {"texts": TEXTS, "vectors": {}, "ids": {}, "stripped": {}}
    choices = [(None, None)] + [(n, n) for n in sorted(prompts)] + [("custom", "custom: ")]
    for key, name in choices:
        prompt = "custom: " if key == "custom" else prompts.get(name or st.default_prompt_name or "", "")
        kwargs = {"prompt": prompt} if key == "custom" else {"prompt_name": name}
        with torch.no_grad():
            vecs = st.encode(TEXTS, batch_size=len(TEXTS), convert_to_numpy=True, **kwargs)
        key = key or "default"
        ref["vectors"][key] = vecs.astype(np.float32).tolist()
        ref["ids"][key] = [st.tokenize([prompt + t])["input_ids"][0].tolist() for t in TEXTS]
        ref["stripped"][key] = [i for i, t in enumerate(TEXTS) if (prompt + t).strip() != prompt + t]
    return ref


def make_qwen3_embed(out, tok):
    from transformers import Qwen3Model

    folder = out / "qwen3_embed"
    hf = Path(tempfile.mkdtemp()) / "hf"
    t = with_post_processor(tok, "qwen3_embedding")
    fast = save_hf_tokenizer(t, hf, pad="<|endoftext|>", eos="<|endoftext|>", padding_side="left")
    set_seed()
    config = qwen3_config(len(fast), eos_token_id=fast.eos_token_id)
    config.architectures = ["Qwen3ForCausalLM"]
    Qwen3Model(config).eval().save_pretrained(hf)
    from sentence_transformers import models

    prompts = {"query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
               "document": ""}
    st = st_embedder(hf, folder, lambda dim: [models.Pooling(dim, pooling_mode="lasttoken")], prompts, None)
    ref = embed_reference(st, prompts)
    strip_folder(folder)
    return ref, hf


def make_dense_embed(out, tok):
    from transformers import Gemma3TextConfig, Gemma3TextModel
    from sentence_transformers import models

    folder = out / "dense_embed"
    hf = Path(tempfile.mkdtemp()) / "hf"
    t = with_post_processor(tok, "gemma")
    fast = save_hf_tokenizer(t, hf, pad="<pad>", eos="<eos>", bos="<bos>", padding_side="right")
    set_seed()
    config = Gemma3TextConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=1, head_dim=8, max_position_embeddings=512,
                              sliding_window=16, layer_types=["sliding_attention", "full_attention"],
                              use_bidirectional_attention=False, initializer_range=0.25,  # see the top
                              pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id,
                              eos_token_id=fast.eos_token_id, query_pre_attn_scalar=8)
    Gemma3TextModel(config).eval().save_pretrained(hf)
    prompts = {"query": "task: search result | query: ", "document": "title: none | text: "}

    def dense_stack(dim):
        torch.manual_seed(SEED + 1)
        d1 = models.Dense(dim, 96, bias=False, activation_function=torch.nn.Identity())
        d2 = models.Dense(96, 24, bias=False, activation_function=torch.nn.Identity())
        for d in (d1, d2):
            torch.nn.init.normal_(d.linear.weight, std=0.3)
        return [models.Pooling(dim, pooling_mode="mean"), d1, d2]

    st = st_embedder(hf, folder, dense_stack, prompts, "query")
    ref = embed_reference(st, prompts)
    strip_folder(folder)
    return ref


def optimize_fused(out):
    """ONNX Runtime's transformers optimizer over the qwen3 export."""
    from onnxruntime.transformers import optimizer

    src, folder = out / "qwen3_embed", out / "qwen3_embed_fused"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(src, folder)
    m = optimizer.optimize_model(str(src / "onnx" / "model.onnx"), model_type="qwen3", num_heads=4, hidden_size=32,
                                 opt_level=1, use_gpu=False)
    m.save_model_to_file(str(folder / "onnx" / "model.onnx"))
    return sorted({n.op_type for n in m.model.graph.node})


def model_builder(out, hf, name, precision):
    """ONNX Runtime GenAI's model builder over the embedder's checkpoint, without the LM head (the
    hidden states): GroupQueryAttention with rotary embedding inside, SimplifiedLayerNormalization,
    and for int4 MatMulNBits; past_key_values inputs (empty for a whole text) and present outputs.
    The sentence-transformers files come from qwen3_embed."""
    import subprocess

    src, folder = out / "qwen3_embed", out / name
    work = Path(tempfile.mkdtemp())
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(src, folder)
    shutil.rmtree(folder / "onnx")
    # The builder picks its converter by config.json's architecture (Qwen3Model saves "Qwen3Model").
    shutil.copytree(hf, work / "hf")
    config = json.loads((work / "hf" / "config.json").read_text())
    config["architectures"] = ["Qwen3ForCausalLM"]
    (work / "hf" / "config.json").write_text(json.dumps(config))
    hf = work / "hf"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("GENAI_PATH"),
                                                                  os.environ.get("PYTHONPATH")])))
    subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf), "-o", str(work / "o"),
                    "-p", precision, "-e", "cpu", "-c", str(work / "cache"),
                    "--extra_options", "exclude_lm_head=true", "int4_block_size=16"], check=True, env=env)
    (folder / "onnx").mkdir()
    for f in ("model.onnx", "model.onnx.data"):
        if (work / "o" / f).exists():
            shutil.copy(work / "o" / f, folder / "onnx" / f)
    import onnx

    m = onnx.load(str(folder / "onnx" / "model.onnx"), load_external_data=False)
    return sorted({n.op_type for n in m.graph.node})


def ort_vectors(folder, ref_ids, pooling, normalize=True):
    """The folder's ONNX model in ONNX Runtime on the reference ids, one text at a time, pooled."""
    import onnxruntime as ort

    s = ort.InferenceSession(str(folder / "onnx" / "model.onnx"), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    out = []
    for ids in ref_ids:
        n = len(ids)
        feeds = {"input_ids": np.array([ids], np.int64), "attention_mask": np.ones((1, n), np.int64),
                 "position_ids": np.arange(n, dtype=np.int64)[None]}
        for i in s.get_inputs():
            if i.name.startswith("past_key_values."):
                feeds[i.name] = np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
        h = s.run(None, {k: v for k, v in feeds.items() if k in names})[0][0]
        v = h[-1] if pooling == "lasttoken" else h.mean(0)
        out.append((v / max(np.linalg.norm(v), 1e-12)) if normalize else v)
    return np.array(out)


def make_qwen3_rerank(out, tok):
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen3ForCausalLM
    from optimum.exporters.onnx import main_export

    folder = out / "qwen3_rerank"
    hf = Path(tempfile.mkdtemp()) / "hf"
    t = with_post_processor(tok, "qwen3")
    fast = save_hf_tokenizer(t, hf, pad="<|endoftext|>", eos="<|im_end|>", padding_side="left")
    set_seed()
    config = qwen3_config(len(fast), eos_token_id=fast.eos_token_id)
    Qwen3ForCausalLM(config).eval().save_pretrained(hf)
    shutil.rmtree(folder, ignore_errors=True)
    main_export(str(hf), output=str(folder), task="text-generation", no_post_process=True, do_validation=False)
    # The model card's code, in torch.
    tokenizer = AutoTokenizer.from_pretrained(hf, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(hf).eval()
    yes, no = tokenizer.convert_tokens_to_ids("yes"), tokenizer.convert_tokens_to_ids("no")
    prefix_ids = tokenizer.encode(RERANK_PREFIX, add_special_tokens=False)
    suffix_ids = tokenizer.encode(RERANK_SUFFIX, add_special_tokens=False)

    def scores(pairs, instruction, max_length=8192):
        texts = [f"<Instruct>: {instruction}\n<Query>: {q}\n<Document>: {d}" for q, d in pairs]
        enc = tokenizer(texts, padding=False, truncation="longest_first", return_attention_mask=False,
                        max_length=max_length - len(prefix_ids) - len(suffix_ids))
        ids = [prefix_ids + e + suffix_ids for e in enc["input_ids"]]
        batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**batch).logits[:, -1, :]
        two = torch.stack([logits[:, no], logits[:, yes]], dim=1)
        return torch.nn.functional.log_softmax(two, dim=1)[:, 1].exp().tolist(), ids

    pairs = [(q, d) for q in QUERIES for d in DOCUMENTS]
    s_default, ids_default = scores(pairs, RERANK_INSTRUCTION)
    s_custom, _ = scores(pairs, CUSTOM_INSTRUCTION)
    # A length that cuts the documents (the longest query's text without its document, + 5 tokens).
    head = max(len(tokenizer(f"<Instruct>: {RERANK_INSTRUCTION}\n<Query>: {q}\n<Document>: ")["input_ids"]) for q in QUERIES)
    short = len(prefix_ids) + len(suffix_ids) + head + 5
    s_short, ids_short = scores(pairs, RERANK_INSTRUCTION, max_length=short)
    strip_folder(folder)
    return {"queries": QUERIES, "documents": DOCUMENTS, "pairs": pairs, "yes_id": yes, "no_id": no,
            "default_instruction": RERANK_INSTRUCTION, "custom_instruction": CUSTOM_INSTRUCTION,
            "scores": s_default, "ids": ids_default, "scores_custom": s_custom,
            "truncated_max_length": short, "scores_truncated": s_short,
            "ids_truncated": ids_short}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=str(HERE / "retrieval"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    tok = train_tokenizer(640)
    ref = {"generator": "tests/models/make_decoder_models.py"}
    ref["qwen3_embed"], hf = make_qwen3_embed(out, tok)
    ref["dense_embed"] = make_dense_embed(out, tok)
    ref["qwen3_embed_fused_ops"] = optimize_fused(out)
    ref["qwen3_embed_gqa_ops"] = model_builder(out, hf, "qwen3_embed_gqa", "fp32")
    ref["qwen3_embed_int4_ops"] = model_builder(out, hf, "qwen3_embed_int4", "int4")
    # int4 changes the weights: its reference is the quantized model in ONNX Runtime.
    ref["qwen3_embed_int4"] = {"vectors": ort_vectors(out / "qwen3_embed_int4", ref["qwen3_embed"]["ids"]["default"],
                                                      "lasttoken").astype(np.float32).tolist()}
    ref["qwen3_rerank"] = make_qwen3_rerank(out, tok)
    (out / "decoder_reference.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False) + "\n")
    for f in sorted(out.rglob("*")):
        if f.is_file():
            print(f"{f.stat().st_size:>9} {f.relative_to(out)}")


if __name__ == "__main__":
    main()
