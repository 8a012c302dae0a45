#!/usr/bin/env python3
"""Writes the sentence-transformers module test folders under
tests/models/st_modules/ (committed): tiny random-weight models saved by
sentence-transformers' own code, once with 5.x and once with 6.x (each run
writes the folders of the installed major version, st5_* or st6_*), with
that library's torch outputs for the texts of make_retrieval_models.py as
the reference (st<N>_reference.json).

Run once by a developer, not by `make test`, in each of two venvs made from
scripts/pins.sh:

    python3 -m venv build/venv-st5 && . scripts/pins.sh && build/venv-st5/bin/pip install $ST5_MODULE_PACKAGES
    python3 -m venv build/venv-st6 && . scripts/pins.sh && build/venv-st6/bin/pip install $ST6_MODULE_PACKAGES
    build/venv-st6/bin/pip install --no-deps --target build/optimum $ST6_DECODER_EXPORT_PACKAGES
    build/venv-st6/bin/pip install --no-deps --target build/st5_7 $ST5_7_MODULE_PACKAGES
    build/venv-st5/bin/python tests/models/make_st_modules.py
    build/venv-st5/bin/python tests/models/make_st_modules.py --only cross_encoder cross_encoder_identity --suffix _plain
    PYTHONPATH=build/st5_7 build/venv-st6/bin/python tests/models/make_st_modules.py --only cross_encoder cross_encoder_identity
    OPTIMUM_PATH=build/optimum build/venv-st6/bin/python tests/models/make_st_modules.py

5.3 saves a CrossEncoder as a plain transformers folder (kept as
st5_cross_encoder_plain); 5.7 already writes 6.x's modules.json layout, and its
st5_cross_encoder replaces 5.3's. st6_decoder_embed's ONNX export runs in a
subprocess on OPTIMUM_PATH (optimum's export on transformers 4.57).

Folders (st<N>_ prefix):
  dense         Transformer (a 2-layer BERT, hidden 32, exported to
                onnx/model.onnx by torch.onnx) + Pooling (mean) + Dense (SiLU)
                + LayerNorm + Dense (Mish) + Normalize
  sparse        a SparseEncoder: MLMTransformer (5.x) or a fill-mask
                Transformer (6.x) + SpladePooling (max, relu), onnx/model.onnx
                the MLM logits
  static        StaticEmbedding (a random [vocabulary, 24] table) + Normalize:
                no ONNX model
  sparse_static a SparseEncoder of one SparseStaticEmbedding (random weights
                per token, a quarter of them 0)
  router        a Router (Router.for_query_document, default route "document"):
                queries a StaticEmbedding (a random [vocabulary, 24] table),
                documents a Transformer (2-layer BERT, its export in
                document_0_Transformer/onnx/model.onnx, where backend="onnx"
                looks for it) + Pooling (mean) + Dense (Tanh, 32 -> 24); a
                Normalize after the Router; prompts "query: " / "passage: ".
                The reference: encode_query, encode_document and encode
  router_sparse inference-free SPLADE: a Router whose query route is a
                SparseStaticEmbedding and document route an MLM transformer
                (MLMTransformer in 5.x, a fill-mask Transformer in 6.x) +
                SpladePooling (max, relu); encode_query and encode_document
  llm_reranker  6.x only: a CrossEncoder over a 2-layer Qwen3ForCausalLM (a
                text-generation Transformer + LogitScore on the "yes" / "no"
                ids), onnx/model.onnx its logits by torch.onnx (6.2's backend="onnx"
                export needs optimum-onnx, whose 0.1.0 requires transformers < 4.58);
                the reference is predict()'s scores for (query, text)
  llm_reranker_chat  6.x only: the llm_reranker's model and tokenizer with a
                Qwen3-Reranker-style chat template (chat_template.jinja: the
                system message is the instruction, else a default; the query
                and document roles; the assistant turn with empty thinking tags
                under add_generation_prompt, which processing_kwargs sets), so
                pairs are rendered as messages; max_length leaves 24 tokens past
                the prompt. The reference is predict()'s scores without a prompt
                and with prompt= an instruction, pairs long enough to be cut
                included, the rendered texts (tokenize=False), and the scores
                of a variant template with a line break after the document;
                st6_llm_reranker_chat.reranker_config.json beside it is what
                python -m dlrt.reranker_config writes for it
  llm_reranker_bos  6.x only: a 2-layer LlamaForCausalLM CrossEncoder whose tokenizer
                adds <bos> ... <eos> to a text (Gemma's TemplateProcessing) and
                whose ChatML-style chat template starts with {{ bos_token }} and
                gives the prompt a system turn of its own; max_length leaves 16
                tokens past the prompt with the instruction. The reference: predict() with and without
                prompt=, and the same for the folder behind a LlavaProcessor whose
                chat_template.json (no BOS) the processor reads before
                chat_template.jinja (its processor files are in the reference);
                st6_llm_reranker_bos.reranker_config.json is the tool's output
  wlp           Transformer (a 3-layer BERT whose config.json sets
                output_hidden_states, initializer_range 0.2) + WeightedLayerPooling (layer_start 1,
                random positive layer_weights) + Pooling (mean). Its ONNX gives
                last_hidden_state and hidden_states.0 .. hidden_states.3, the
                names optimum gives per-layer outputs: 5.x's by optimum's
                main_export with a custom ONNX config listing them (its BERT
                config has last_hidden_state only; optimum-onnx 0.1.0 needs
                transformers < 4.58, so not beside 6.x), 6.x's by torch.onnx
                with those output names. The reference also holds the vectors
                with output_hidden_states false in config.json
                ("embeddings_no_hidden_states", only where the library runs such a
                folder: 5.3 fails on it, later versions skip the module)
  cross_encoder a CrossEncoder over a 2-layer BertForSequenceClassification
                (one label; 6.x and 5.7 save a modules.json of one Transformer
                whose task is sequence-classification, 5.3 a plain transformers
                folder whose config.json names the activation), onnx/model.onnx
                the logits; the reference is predict()'s sigmoid scores for
                (query, text)
  cross_encoder_identity  cross_encoder's model saved with activation_fn
                torch.nn.Identity (5.3 names it in config.json, 5.7 and 6.x in
                config_sentence_transformers.json); the reference is predict()
                of the saved folder as loaded (the logits)
  decoder_embed 6.x only: a Qwen3-Embedding-shaped embedder (2-layer
                Qwen3Model, last-token pooling, Normalize; the tokenizer appends
                <|endoftext|> and pads on the left) with prompts "query" (an
                instruction), "document" ("") and "classification";
                onnx/model.onnx by optimum's feature-extraction export, as
                sentence-transformers' backend="onnx" writes it. The reference
                is encode, encode_query, encode_document and
                encode(prompt_name="classification") of make_decoder_models.py's
                texts, and the token ids under each prompt
  multi_vector  6.x only: a MultiVectorEncoder as its default pipeline: Transformer (2-layer BERT,
                onnx/model.onnx; document_length 24, query_expansion "fixed" to 16 tokens) + Dense
                (32 -> 24 on token_embeddings, no bias) + MultiVectorMask (punctuation skip-list,
                documents) + Normalize (token_embeddings); prompts "query: " / "passage: "
  multi_vector_min  6.x only: query_expansion "min" (floor 8, attend), query_length 12,
                document_length 20, a Dense with bias and Tanh, MultiVectorMask skipping ",", "."
                and "?" on queries and documents, no Normalize but a HierarchicalTokenPooling with
                pool_factor 1 (normalises query and document tokens only); no prompts.
  multi_vector_mean  6.x only: multi_vector_min's modules, saved with similarity_fn_name "meanmaxsim"
                (MaxSim over the query's kept token count, which the query skip-list varies)
                The references of all three: encode_query / encode_document's per-token vectors (and
                each one's kept token ids) and similarity() (MaxSim; MeanMaxSim for multi_vector_mean)
                of the queries against the documents

The reference also holds torch's value of each Dense activation dlrt
implements on a grid of inputs ("activations"). Weights are random (fixed
seeds). The script does not run the ONNX exports: the tests compare dlrt on
them with the torch reference. One venv serves both runs when only
sentence-transformers, transformers and tokenizers are swapped between them.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_retrieval_models import TEXTS, keep_logits_off_zero, small_bert_vocab, sparse_rows, write_json  # noqa: E402

OUT = os.path.join(HERE, "st_modules")
ACTIVATIONS = ["Identity", "Tanh", "ReLU", "ReLU6", "LeakyReLU", "Sigmoid", "Hardsigmoid", "LogSigmoid", "GELU",
               "SiLU", "Mish", "ELU", "CELU", "SELU", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Tanhshrink"]


def st_major():
    import sentence_transformers
    return int(sentence_transformers.__version__.split(".")[0])


def modules():
    """The module classes under the installed version's names."""
    if st_major() >= 6:
        from sentence_transformers.base.modules import Dense, Normalize, Router, Transformer
        from sentence_transformers.sentence_transformer.modules import LayerNorm, Pooling, StaticEmbedding
        from sentence_transformers.sparse_encoder.modules import SparseStaticEmbedding, SpladePooling
        mlm = None
    else:
        from sentence_transformers.models import (Dense, LayerNorm, Normalize, Pooling, Router, StaticEmbedding,
                                                  Transformer)
        from sentence_transformers.sparse_encoder.models import MLMTransformer, SparseStaticEmbedding, SpladePooling
        mlm = MLMTransformer
    return dict(Dense=Dense, Normalize=Normalize, Transformer=Transformer, LayerNorm=LayerNorm, Pooling=Pooling, Router=Router,
                StaticEmbedding=StaticEmbedding, SparseStaticEmbedding=SparseStaticEmbedding,
                SpladePooling=SpladePooling, MLMTransformer=mlm)


def tokenizer_dir(work):
    from transformers import BertTokenizerFast
    path = os.path.join(work, "tok")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(small_bert_vocab()) + "\n")
    tok = BertTokenizerFast(os.path.join(path, "vocab.txt"), do_lower_case=True, model_max_length=64)
    tok.save_pretrained(path)
    return path, tok


def export_onnx(hf_model, out_path, output_name):
    """torch.onnx.export of the transformer: input_ids, attention_mask,
    token_type_ids -> `output_name` [batch, sequence, width]."""
    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out[0]

    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    ids = torch.ones(2, 5, dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "token_type_ids": {0: "batch", 1: "sequence"}, output_name: {0: "batch", 1: "sequence"}}
    torch.onnx.export(Wrap(hf_model.eval()), (ids, ids, torch.zeros_like(ids)), out_path,
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=[output_name],
                      dynamic_axes=axes, opset_version=17, dynamo=False)


def bert_config(vocab_size):
    from transformers import BertConfig
    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, tie_word_embeddings=False)


def make_dense(m, work, tok_path, tok):
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel
    torch.manual_seed(71)
    hf = BertModel(bert_config(len(tok.get_vocab()))).eval()
    hf_dir = os.path.join(work, "dense_hf")
    hf.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    transformer = m["Transformer"](hf_dir, max_seq_length=48)
    pooling = m["Pooling"](32, "mean")
    torch.manual_seed(72)
    dense1 = m["Dense"](32, 24, activation_function=torch.nn.SiLU())
    norm = m["LayerNorm"](24)
    with torch.no_grad():
        norm.norm.weight.normal_(1.0, 0.2)
        norm.norm.bias.normal_(0.0, 0.2)
    dense2 = m["Dense"](24, 16, activation_function=torch.nn.Mish())
    model = SentenceTransformer(modules=[transformer, pooling, dense1, norm, dense2, m["Normalize"]()], device="cpu")
    st_dir = os.path.join(work, "dense")
    model.save(st_dir)
    export_onnx(hf, os.path.join(st_dir, "onnx", "model.onnx"), "last_hidden_state")
    emb = model.encode(TEXTS, batch_size=len(TEXTS), convert_to_numpy=True)
    return st_dir, {"embeddings": emb.astype(np.float32).tolist()}


def export_hidden_states(hf, hf_dir, out_path):
    """The transformer's ONNX with every layer's output: last_hidden_state and hidden_states.<i>
    [batch, sequence, width] for i = 0 .. num_hidden_layers (optimum's names for per-layer outputs)."""
    layers = hf.config.num_hidden_layers + 1
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    if st_major() < 6:  # optimum's exporter, as a 5.x user's backend="onnx" runs it, with the outputs listed
        from optimum.exporters.onnx import main_export
        from optimum.exporters.onnx.model_configs import BertOnnxConfig

        class WithHiddenStates(BertOnnxConfig):
            @property
            def outputs(self):
                out = dict(super().outputs)
                for i in range(layers):
                    out[f"hidden_states.{i}"] = {0: "batch_size", 1: "sequence_length"}
                return out

        work = out_path + ".optimum"
        main_export(hf_dir, output=work, task="feature-extraction", device="cpu",
                    custom_onnx_configs={"model": WithHiddenStates(hf.config, task="feature-extraction")})
        shutil.move(os.path.join(work, "model.onnx"), out_path)
        shutil.rmtree(work)
        return

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                         output_hidden_states=True)
            return (out.last_hidden_state, *out.hidden_states)

    names = ["last_hidden_state"] + [f"hidden_states.{i}" for i in range(layers)]
    ids = torch.ones(2, 5, dtype=torch.long)
    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "sequence"} for n in inputs + names}
    torch.onnx.export(Wrap(hf.eval()), (ids, ids, torch.zeros_like(ids)), out_path, input_names=inputs,
                      output_names=names, dynamic_axes=axes, opset_version=17, dynamo=False)


def make_wlp(m, work, tok_path, tok):
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel
    if st_major() >= 6:
        from sentence_transformers.sentence_transformer.modules import WeightedLayerPooling
    else:
        from sentence_transformers.models import WeightedLayerPooling
    torch.manual_seed(84)
    config = bert_config(len(tok.get_vocab()))
    config.num_hidden_layers = 3
    config.output_hidden_states = True
    config.initializer_range = 0.2  # layers far enough apart that a wrong layer or weight shows (at 0.02 they are not)
    hf = BertModel(config).eval()
    hf_dir = os.path.join(work, "wlp_hf")
    hf.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    transformer = m["Transformer"](hf_dir, max_seq_length=48)
    assert transformer.auto_model.config.output_hidden_states
    wlp = WeightedLayerPooling(32, num_hidden_layers=3, layer_start=1)
    with torch.no_grad():
        wlp.layer_weights.copy_(torch.rand(3) * 2 + 0.2)
    model = SentenceTransformer(modules=[transformer, wlp, m["Pooling"](32, "mean")], device="cpu")
    st_dir = os.path.join(work, "wlp")
    model.save(st_dir)
    export_hidden_states(hf, hf_dir, os.path.join(st_dir, "onnx", "model.onnx"))
    f32 = lambda e: np.asarray(e, dtype=np.float32).tolist()  # noqa: E731
    out = {"embeddings": f32(SentenceTransformer(st_dir, device="cpu").encode(TEXTS, batch_size=len(TEXTS)))}
    # The same folder with output_hidden_states false: what the library does with it.
    plain = os.path.join(work, "wlp_plain")
    shutil.copytree(st_dir, plain)
    with open(os.path.join(plain, "config.json"), encoding="utf-8") as f:
        c = json.load(f)
    c["output_hidden_states"] = False
    write_json(os.path.join(plain, "config.json"), c)
    try:
        out["embeddings_no_hidden_states"] = f32(SentenceTransformer(plain, device="cpu").encode(TEXTS))
    except KeyError as e:  # 5.3's module reads features["all_layer_embeddings"]
        out["no_hidden_states_error"] = f"KeyError: {e}"
    return st_dir, out


def make_sparse(m, work, tok_path, tok):
    from sentence_transformers import SparseEncoder
    from transformers import BertForMaskedLM
    torch.manual_seed(73)
    mlm = BertForMaskedLM(bert_config(len(tok.get_vocab()))).eval()
    with torch.no_grad():
        mlm.cls.predictions.decoder.weight.normal_(0.0, 0.15)
        mlm.cls.predictions.bias.fill_(-2.0)
    keep_logits_off_zero(mlm, tok, TEXTS, 48)
    hf_dir = os.path.join(work, "sparse_hf")
    mlm.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    if m["MLMTransformer"] is not None:
        transformer = m["MLMTransformer"](hf_dir, max_seq_length=48)
    else:
        transformer = m["Transformer"](hf_dir, max_seq_length=48, transformer_task="fill-mask")
    pooling = m["SpladePooling"](pooling_strategy="max", activation_function="relu",
                                 embedding_dimension=len(tok.get_vocab())) if st_major() >= 6 else \
        m["SpladePooling"](pooling_strategy="max", activation_function="relu",
                           word_embedding_dimension=len(tok.get_vocab()))
    model = SparseEncoder(modules=[transformer, pooling], device="cpu")
    st_dir = os.path.join(work, "sparse")
    model.save(st_dir)
    export_onnx(mlm, os.path.join(st_dir, "onnx", "model.onnx"), "logits")
    emb = model.encode(TEXTS, batch_size=len(TEXTS), convert_to_tensor=True).to_dense().cpu().numpy()
    return st_dir, {"sparse": sparse_rows(emb)}


def make_static(m, work, tok_path, tok):
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    torch.manual_seed(74)
    table = torch.randn(len(tok.get_vocab()), 24)
    static = m["StaticEmbedding"](Tokenizer.from_file(os.path.join(tok_path, "tokenizer.json")),
                                  embedding_weights=table)
    model = SentenceTransformer(modules=[static, m["Normalize"]()], device="cpu")
    st_dir = os.path.join(work, "static")
    model.save(st_dir)
    emb = model.encode(TEXTS, batch_size=len(TEXTS), convert_to_numpy=True)
    return st_dir, {"embeddings": emb.astype(np.float32).tolist()}


def make_sparse_static(m, work, tok_path, tok):
    from sentence_transformers import SparseEncoder
    from transformers import AutoTokenizer
    torch.manual_seed(75)
    weight = torch.rand(len(tok.get_vocab())) * 3 + 0.1
    weight[torch.rand(len(weight)) < 0.25] = 0.0
    module = m["SparseStaticEmbedding"](tokenizer=AutoTokenizer.from_pretrained(tok_path), weight=weight)
    model = SparseEncoder(modules=[module], device="cpu")
    st_dir = os.path.join(work, "sparse_static")
    model.save(st_dir)
    emb = model.encode(TEXTS, batch_size=len(TEXTS), convert_to_tensor=True).to_dense().cpu().numpy()
    return st_dir, {"sparse": sparse_rows(emb)}


def make_cross_encoder(m, work, tok_path, tok, activation=None, name="cross_encoder"):
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification
    torch.manual_seed(76)
    config = bert_config(len(tok.get_vocab()))
    config.num_labels = 1
    hf = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # scores spread over (0, 1), not all near 0.5
        hf.classifier.weight.normal_(0.0, 3.0)
    hf_dir = os.path.join(work, name + "_hf")
    hf.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    model = CrossEncoder(hf_dir, max_length=48, device="cpu", activation_fn=activation)
    st_dir = os.path.join(work, name)
    model.save(st_dir)
    export_onnx(hf, os.path.join(st_dir, "onnx", "model.onnx"), "logits")
    query = TEXTS[1]
    pairs = [(query, t) for t in TEXTS]
    if activation is None:
        scores = model.predict(pairs, batch_size=len(TEXTS), activation_fn=torch.nn.Sigmoid())
        return st_dir, {"query": query, "scores": [float(x) for x in scores]}
    # The saved folder as a user loads it: predict applies the activation the folder names.
    loaded = CrossEncoder(st_dir, device="cpu")
    scores = loaded.predict(pairs, batch_size=len(TEXTS))
    return st_dir, {"query": query, "scores": [float(x) for x in scores],
                    "activation_fn": type(loaded.activation_fn).__name__,
                    "sigmoid_scores": [float(x) for x in torch.sigmoid(torch.tensor(scores))]}


def make_cross_encoder_identity(m, work, tok_path, tok):
    return make_cross_encoder(m, work, tok_path, tok, torch.nn.Identity(), "cross_encoder_identity")


def make_router(m, work, tok_path, tok):
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import BertModel
    torch.manual_seed(77)
    hf = BertModel(bert_config(len(tok.get_vocab()))).eval()
    hf_dir = os.path.join(work, "router_hf")
    hf.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    static = m["StaticEmbedding"](Tokenizer.from_file(os.path.join(tok_path, "tokenizer.json")),
                                  embedding_weights=torch.randn(len(tok.get_vocab()), 24))
    document = [m["Transformer"](hf_dir, max_seq_length=48), m["Pooling"](32, "mean"),
                m["Dense"](32, 24, activation_function=torch.nn.Tanh())]
    router = m["Router"].for_query_document(query_modules=[static], document_modules=document)
    model = SentenceTransformer(modules=[router, m["Normalize"]()], device="cpu",
                                prompts={"query": "query: ", "document": "passage: "})
    st_dir = os.path.join(work, "router")
    model.save(st_dir)
    export_onnx(hf, os.path.join(st_dir, "document_0_Transformer", "onnx", "model.onnx"), "last_hidden_state")
    f32 = lambda e: np.asarray(e, dtype=np.float32).tolist()  # noqa: E731
    return st_dir, {"query": f32(model.encode_query(TEXTS, batch_size=len(TEXTS))),
                    "document": f32(model.encode_document(TEXTS, batch_size=len(TEXTS))),
                    "default": f32(model.encode(TEXTS, batch_size=len(TEXTS)))}


def make_router_sparse(m, work, tok_path, tok):
    from sentence_transformers import SparseEncoder
    from transformers import AutoTokenizer, BertForMaskedLM
    torch.manual_seed(78)
    mlm = BertForMaskedLM(bert_config(len(tok.get_vocab()))).eval()
    with torch.no_grad():
        mlm.cls.predictions.decoder.weight.normal_(0.0, 0.15)
        mlm.cls.predictions.bias.fill_(-2.0)
    keep_logits_off_zero(mlm, tok, TEXTS, 48)
    hf_dir = os.path.join(work, "router_sparse_hf")
    mlm.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    weight = torch.rand(len(tok.get_vocab())) * 3 + 0.1
    weight[torch.rand(len(weight)) < 0.25] = 0.0
    query = m["SparseStaticEmbedding"](tokenizer=AutoTokenizer.from_pretrained(tok_path), weight=weight)
    if m["MLMTransformer"] is not None:
        transformer = m["MLMTransformer"](hf_dir, max_seq_length=48)
        pooling = m["SpladePooling"](pooling_strategy="max", activation_function="relu",
                                     word_embedding_dimension=len(tok.get_vocab()))
    else:
        transformer = m["Transformer"](hf_dir, max_seq_length=48, transformer_task="fill-mask")
        pooling = m["SpladePooling"](pooling_strategy="max", activation_function="relu",
                                     embedding_dimension=len(tok.get_vocab()))
    router = m["Router"].for_query_document(query_modules=[query], document_modules=[transformer, pooling])
    model = SparseEncoder(modules=[router], device="cpu", similarity_fn_name="dot")
    st_dir = os.path.join(work, "router_sparse")
    model.save(st_dir)
    export_onnx(mlm, os.path.join(st_dir, "document_0_" + type(transformer).__name__, "onnx", "model.onnx"), "logits")
    rows = lambda e: sparse_rows(e.to_dense().cpu().numpy())  # noqa: E731
    return st_dir, {"query": rows(model.encode_query(TEXTS, batch_size=len(TEXTS), convert_to_tensor=True)),
                    "document": rows(model.encode_document(TEXTS, batch_size=len(TEXTS), convert_to_tensor=True))}


def make_llm_reranker(m, work, tok_path, tok):
    """6.x: a CrossEncoder over a Qwen3ForCausalLM, as CrossEncoder(path) builds one for a *ForCausalLM
    config: a text-generation Transformer + LogitScore (yes/no ids). The tokenizer has no chat template,
    so pairs are tokenized as text pairs (left padding); the export is the causal LM's logits."""
    import make_decoder_models as dm
    from sentence_transformers import CrossEncoder
    from transformers import Qwen3ForCausalLM
    hf_dir = os.path.join(work, "llm_reranker_hf")
    fast = dm.save_hf_tokenizer(dm.with_post_processor(dm.train_tokenizer(640), "qwen3"), hf_dir,
                                pad="<|endoftext|>", eos="<|im_end|>", padding_side="left")
    torch.manual_seed(79)
    hf = Qwen3ForCausalLM(dm.qwen3_config(len(fast), eos_token_id=fast.eos_token_id)).eval()
    hf.save_pretrained(hf_dir)
    model = CrossEncoder(hf_dir, max_length=48, device="cpu")
    st_dir = os.path.join(work, "llm_reranker")
    model.save(st_dir)

    export_causal_lm(hf, os.path.join(st_dir, "onnx", "model.onnx"))
    query = dm.QUERIES[0]
    scores = model.predict([(query, t) for t in TEXTS], batch_size=len(TEXTS))
    return st_dir, {"query": query, "scores": [float(x) for x in scores],
                    "true_token_id": int(model[1].true_token_id), "false_token_id": int(model[1].false_token_id)}


# A Qwen3-Reranker-style chat template written from the model card's prompt: the instruction is the system
# message's content (a default without one), the pair comes as "query" and "document" messages.
RERANKER_CHAT_TEMPLATE = (
    '{%- set ns = namespace(instruction="Given a web search query, retrieve relevant passages that answer the '
    'query", query="", document="") -%}\n'
    '{%- for message in messages -%}\n'
    '    {%- if message.role == "system" -%}{%- set ns.instruction = message.content -%}\n'
    '    {%- elif message.role == "query" -%}{%- set ns.query = message.content -%}\n'
    '    {%- elif message.role == "document" -%}{%- set ns.document = message.content -%}\n'
    '    {%- endif -%}\n'
    '{%- endfor -%}\n'
    '<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct '
    'provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n'
    '<Instruct>: {{ ns.instruction }}\n<Query>: {{ ns.query }}\n<Document>: {{ ns.document }}<|im_end|>\n'
    '{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n\n</think>\n\n{% endif %}')


def make_llm_reranker_chat(m, work, tok_path, tok):
    """6.x: the llm_reranker's causal LM behind a tokenizer with a chat template: CrossEncoder renders each pair
    as [system (the prompt, if any), query, document] messages; add_generation_prompt through processing_kwargs."""
    import make_decoder_models as dm
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder.modules import LogitScore
    from transformers import AutoTokenizer, Qwen3ForCausalLM
    hf_dir = os.path.join(work, "llm_reranker_chat_hf")
    fast = dm.save_hf_tokenizer(dm.with_post_processor(dm.train_tokenizer(640), "qwen3"), hf_dir,
                                pad="<|endoftext|>", eos="<|im_end|>", padding_side="left")
    fast.chat_template = RERANKER_CHAT_TEMPLATE
    torch.manual_seed(83)
    hf = Qwen3ForCausalLM(dm.qwen3_config(len(fast), eos_token_id=fast.eos_token_id)).eval()
    hf.save_pretrained(hf_dir)
    # Room for 24 tokens of query and document past the prompt, so the long texts are cut.
    fixed = len(fast.apply_chat_template([{"role": "query", "content": ""}, {"role": "document", "content": ""}],
                                         add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
    fast.model_max_length = fixed + 24
    fast.save_pretrained(hf_dir)
    transformer = m["Transformer"](hf_dir, transformer_task="text-generation", max_seq_length=fixed + 24,
                                   processing_kwargs={"chat_template": {"add_generation_prompt": True}})
    assert "message" in transformer.modality_config, transformer.modality_config
    yes, no = fast.convert_tokens_to_ids("yes"), fast.convert_tokens_to_ids("no")
    model = CrossEncoder(modules=[transformer, LogitScore(true_token_id=yes, false_token_id=no)], device="cpu")
    st_dir = os.path.join(work, "llm_reranker_chat")
    model.save(st_dir)
    model = CrossEncoder(st_dir, device="cpu")  # as a user loads the saved folder
    export_causal_lm(hf, os.path.join(st_dir, "onnx", "model.onnx"))
    query = dm.QUERIES[0]
    texts = TEXTS + dm.DOCUMENTS
    pairs = [(query, t) for t in texts]
    tokenizer = AutoTokenizer.from_pretrained(st_dir)
    rendered = [tokenizer.apply_chat_template([{"role": "query", "content": q}, {"role": "document", "content": d}],
                                              add_generation_prompt=True, tokenize=False) for q, d in pairs]
    lengths = [len(model.preprocess([p])["input_ids"][0]) for p in pairs]
    scores = [float(x) for x in model.predict(pairs, batch_size=len(pairs))]
    scores_instruction = [float(x) for x in model.predict(pairs, batch_size=len(pairs), prompt=dm.CUSTOM_INSTRUCTION)]
    # A variant whose tail starts inside the user turn ("\n" after the document): sentence-transformers
    # writes that line break back over a cut pair too.
    variant = RERANKER_CHAT_TEMPLATE.replace("{{ ns.document }}<|im_end|>", "{{ ns.document }}\n<|im_end|>")
    assert variant != RERANKER_CHAT_TEMPLATE
    model[0].tokenizer.chat_template = variant
    model[0]._chat_template_suffix_cache.clear()
    scores_variant = [float(x) for x in model.predict(pairs, batch_size=len(pairs))]
    # What `python -m dlrt.reranker_config` writes for the folder, beside it (the C++ tests put it in a copy).
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "dlrt"))
    import reranker_config
    write_json(os.path.join(OUT, "st6_llm_reranker_chat.reranker_config.json"), reranker_config.make_config(st_dir))
    return st_dir, {"query": query, "texts": texts, "max_length": fixed + 24, "lengths": lengths,
                    "scores": scores, "instruction": dm.CUSTOM_INSTRUCTION, "scores_instruction": scores_instruction,
                    "rendered": rendered, "true_token_id": yes, "false_token_id": no,
                    "variant_template": variant, "scores_variant": scores_variant}


# A ChatML-style template (a turn per message, headed by its role) after the BOS token, as Llama- and Gemma-style
# templates begin: the prompt is a system turn of its own, there only when predict() is given one.
CHATML_BOS_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def make_llm_reranker_bos(m, work, tok_path, tok):
    """6.x: a CrossEncoder over a 2-layer LlamaForCausalLM whose tokenizer's post-processor adds <bos> and <eos>
    to every text (Gemma's TemplateProcessing) and whose chat template starts with {{ bos_token }}: the tokenizer's
    apply_chat_template adds no special tokens, so a pair holds <bos> once, from the template, and no <eos>. Also
    the same folder behind a LlavaProcessor whose template (chat_template.json, which a processor reads before
    chat_template.jinja) has no BOS: the processor then adds the post-processor's <bos> and <eos>."""
    import make_decoder_models as dm
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder.modules import LogitScore
    from transformers import AutoTokenizer, CLIPImageProcessor, LlamaConfig, LlamaForCausalLM, LlavaProcessor
    hf_dir = os.path.join(work, "llm_reranker_bos_hf")
    fast = dm.save_hf_tokenizer(dm.with_post_processor(dm.train_tokenizer(640), "gemma"), hf_dir,
                                pad="<pad>", eos="<eos>", bos="<bos>", padding_side="left")
    fast.chat_template = CHATML_BOS_TEMPLATE
    torch.manual_seed(87)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=512,
                         initializer_range=0.25, tie_word_embeddings=True, bos_token_id=fast.bos_token_id,
                         eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    hf = LlamaForCausalLM(config).eval()
    hf.save_pretrained(hf_dir)
    # Room for 16 tokens of query and document past the prompt with the instruction's system turn.
    fixed = len(fast.apply_chat_template([{"role": "system", "content": dm.CUSTOM_INSTRUCTION},
                                          {"role": "query", "content": ""}, {"role": "document", "content": ""}],
                                         add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
    fast.model_max_length = fixed + 16
    fast.save_pretrained(hf_dir)
    transformer = m["Transformer"](hf_dir, transformer_task="text-generation", max_seq_length=fixed + 16,
                                   processing_kwargs={"chat_template": {"add_generation_prompt": True}})
    yes, no = fast.convert_tokens_to_ids("yes"), fast.convert_tokens_to_ids("no")
    model = CrossEncoder(modules=[transformer, LogitScore(true_token_id=yes, false_token_id=no)], device="cpu")
    st_dir = os.path.join(work, "llm_reranker_bos")
    model.save(st_dir)
    model = CrossEncoder(st_dir, device="cpu")
    export_causal_lm(hf, os.path.join(st_dir, "onnx", "model.onnx"))
    query = dm.QUERIES[0]
    texts = TEXTS + dm.DOCUMENTS
    pairs = [(query, t) for t in texts]
    bos, eos = fast.bos_token_id, fast.eos_token_id
    ids = model.preprocess([pairs[0]])["input_ids"][0].tolist()
    assert ids[0] == bos and ids.count(bos) == 1 and eos not in ids, ids  # the template's BOS, nothing added
    tokenizer = AutoTokenizer.from_pretrained(st_dir)
    rendered = [tokenizer.apply_chat_template([{"role": "query", "content": q}, {"role": "document", "content": d}],
                                              add_generation_prompt=True, tokenize=False) for q, d in pairs]
    lengths = [len(model.preprocess([p])["input_ids"][0]) for p in pairs]
    scores = [float(x) for x in model.predict(pairs, batch_size=len(pairs))]
    scores_instruction = [float(x) for x in model.predict(pairs, batch_size=len(pairs), prompt=dm.CUSTOM_INSTRUCTION)]
    assert len(set(scores_instruction)) == len(pairs), scores_instruction  # the pairs' content reaches the model
    # The processor variant: chat_template.json (no BOS) wins over chat_template.jinja (the BOS template).
    proc_dir = os.path.join(work, "llm_reranker_bos_processor")
    shutil.copytree(st_dir, proc_dir)
    no_bos = CHATML_BOS_TEMPLATE.replace("{{ bos_token }}", "")
    LlavaProcessor(image_processor=CLIPImageProcessor(), tokenizer=tokenizer, chat_template=no_bos, patch_size=14,
                   image_token="<think>").save_pretrained(proc_dir)
    write_json(os.path.join(proc_dir, "chat_template.json"), {"chat_template": no_bos})
    shutil.copy(os.path.join(st_dir, "chat_template.jinja"), os.path.join(proc_dir, "chat_template.jinja"))
    processed = CrossEncoder(proc_dir, device="cpu")
    assert type(processed[0].processor).__name__ == "LlavaProcessor" and processed[0].processor.chat_template == no_bos
    ids = processed.preprocess([pairs[0]])["input_ids"][0].tolist()
    assert ids[0] == bos and ids.count(bos) == 1 and ids[-1] == eos, ids  # the post-processor's
    processor_files = {}
    for name in ("processor_config.json", "chat_template.json"):
        with open(os.path.join(proc_dir, name), encoding="utf-8") as f:
            processor_files[name] = json.load(f)
    scores_processor = [float(x) for x in processed.predict(pairs, batch_size=len(pairs))]
    scores_processor_instruction = [float(x) for x in processed.predict(pairs, batch_size=len(pairs),
                                                                        prompt=dm.CUSTOM_INSTRUCTION)]
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "dlrt"))
    import reranker_config
    write_json(os.path.join(OUT, "st6_llm_reranker_bos.reranker_config.json"), reranker_config.make_config(st_dir))
    return st_dir, {"query": query, "texts": texts, "max_length": fixed + 16, "lengths": lengths, "scores": scores,
                    "instruction": dm.CUSTOM_INSTRUCTION, "scores_instruction": scores_instruction,
                    "rendered": rendered, "true_token_id": yes, "false_token_id": no, "bos_token_id": bos,
                    "processor_files": processor_files, "scores_processor": scores_processor,
                    "scores_processor_instruction": scores_processor_instruction}


DECODER_PROMPTS = {"query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
                   "document": "", "classification": "Classify the topic of the text: "}


def make_decoder_embed(m, work, tok_path, tok):
    """6.x: a Qwen3-Embedding-shaped embedder (a 2-layer Qwen3Model, last-token pooling, Normalize, a tokenizer
    appending <|endoftext|> and padding on the left, query / document / classification prompts). Its ONNX is
    what sentence-transformers' ONNX backend writes (optimum's feature-extraction export), made in a
    subprocess on OPTIMUM_PATH: optimum-onnx 0.1.0 needs transformers < 4.58, 6.2 runs on 5.x."""
    import make_decoder_models as dm
    from sentence_transformers import SentenceTransformer
    from transformers import Qwen3Model
    hf_dir = os.path.join(work, "decoder_embed_hf")
    fast = dm.save_hf_tokenizer(dm.with_post_processor(dm.train_tokenizer(640), "qwen3_embedding"), hf_dir,
                                pad="<|endoftext|>", eos="<|endoftext|>", padding_side="left")
    torch.manual_seed(84)
    config = dm.qwen3_config(len(fast), eos_token_id=fast.eos_token_id)
    config.architectures = ["Qwen3ForCausalLM"]
    Qwen3Model(config).eval().save_pretrained(hf_dir)
    transformer = m["Transformer"](hf_dir, max_seq_length=512)
    model = SentenceTransformer(modules=[transformer, m["Pooling"](32, "lasttoken"), m["Normalize"]()],
                                prompts=DECODER_PROMPTS, device="cpu")
    st_dir = os.path.join(work, "decoder_embed")
    model.save(st_dir)
    model = SentenceTransformer(st_dir, device="cpu")  # as a user loads the saved folder
    export_feature_extraction(st_dir)
    texts = dm.TEXTS
    f32 = lambda e: np.asarray(e, dtype=np.float32).tolist()  # noqa: E731
    kw = dict(batch_size=len(texts), convert_to_numpy=True)
    ids = {key: [model.preprocess([t], prompt=DECODER_PROMPTS.get(key, ""))["input_ids"][0].tolist() for t in texts]
           for key in ("default", "query", "document", "classification")}
    return st_dir, {"texts": texts, "prompts": DECODER_PROMPTS, "ids": ids,
                    "default": f32(model.encode(texts, **kw)), "query": f32(model.encode_query(texts, **kw)),
                    "document": f32(model.encode_document(texts, **kw)),
                    "classification": f32(model.encode(texts, prompt_name="classification", **kw))}


def export_feature_extraction(st_dir):
    """onnx/model.onnx as sentence-transformers' backend="onnx" writes it: optimum's
    ORTModelForFeatureExtraction.from_pretrained(export=True), saved under onnx/."""
    import subprocess
    path = os.environ.get("OPTIMUM_PATH")
    if not path:
        sys.exit("decoder_embed: set OPTIMUM_PATH to a folder with scripts/pins.sh's $ST6_DECODER_EXPORT_PACKAGES "
                 "(pip install --no-deps --target DIR)")
    code = ("import sys; from optimum.onnxruntime import ORTModelForFeatureExtraction as M; "
            "M.from_pretrained(sys.argv[1], export=True, provider='CPUExecutionProvider').save_pretrained(sys.argv[2])")
    out = os.path.join(os.path.dirname(st_dir), "decoder_embed_onnx")
    env = dict(os.environ, PYTHONPATH=path)
    subprocess.run([sys.executable, "-c", code, st_dir, out], check=True, env=env)
    os.makedirs(os.path.join(st_dir, "onnx"))
    shutil.copy(os.path.join(out, "model.onnx"), os.path.join(st_dir, "onnx", "model.onnx"))


def export_causal_lm(hf, path):
    """torch.onnx.export of a causal LM: input_ids, attention_mask -> logits [batch, sequence, vocabulary]."""
    class Wrap(torch.nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    os.makedirs(os.path.dirname(path))
    ids = torch.ones(2, 5, dtype=torch.long)
    axes = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "logits")}
    torch.onnx.export(Wrap(hf), (ids, ids), path, input_names=["input_ids", "attention_mask"], output_names=["logits"],
                      dynamic_axes=axes, opset_version=17, dynamo=False)


def make_multi_vector_folder(work, tok, name, seed, transformer_kwargs, dense, mask, tail, prompts,
                             similarity_fn_name=None):
    """6.x: a MultiVectorEncoder of [Transformer, Dense, MultiVectorMask, *tail]; its references."""
    from sentence_transformers import MultiVectorEncoder, util
    from sentence_transformers.base.modules import Dense, Transformer
    from sentence_transformers.multi_vector_encoder.modules import MultiVectorMask
    from transformers import BertModel
    torch.manual_seed(seed)
    hf = BertModel(bert_config(len(tok.get_vocab()))).eval()
    hf_dir = os.path.join(work, name + "_hf")
    hf.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    modules = [Transformer(hf_dir, max_seq_length=48, **transformer_kwargs),
               Dense(32, 24, module_input_name="token_embeddings", **dense), MultiVectorMask(**mask), *tail]
    model = MultiVectorEncoder(modules=modules, device="cpu", prompts=prompts, similarity_fn_name=similarity_fn_name)
    st_dir = os.path.join(work, name)
    model.save(st_dir)
    model = MultiVectorEncoder(st_dir, device="cpu")  # as a user loads the saved folder
    export_onnx(hf, os.path.join(st_dir, "onnx", "model.onnx"), "last_hidden_state")
    out = {}
    for task in ("query", "document"):
        encode = model.encode_query if task == "query" else model.encode_document
        vectors = encode(TEXTS, batch_size=len(TEXTS))
        raw = encode(TEXTS, batch_size=len(TEXTS), output_value=None)
        out[task] = [v.float().numpy().tolist() for v in vectors]
        out[task + "_ids"] = [r["input_ids"][r["attention_mask"].bool()].tolist() for r in raw]
    queries, documents = model.encode_query(TEXTS), model.encode_document(TEXTS)
    out["maxsim"] = util.maxsim(queries, documents).tolist()
    out["similarity_fn_name"] = model.similarity_fn_name
    out["similarity"] = model.similarity(queries, documents).tolist()
    return st_dir, out


def make_multi_vector(m, work, tok_path, tok):
    import string
    return make_multi_vector_folder(
        work, tok, "multi_vector", 84, {"document_length": 24, "query_expansion": {"strategy": "fixed", "length": 16}},
        {"bias": False, "activation_function": torch.nn.Identity()}, {"skiplist_words": list(string.punctuation)},
        [m["Normalize"](module_input_name="token_embeddings")], {"query": "query: ", "document": "passage: "})


def make_multi_vector_min(m, work, tok_path, tok, name="multi_vector_min", similarity_fn_name=None):
    from sentence_transformers.multi_vector_encoder.modules import HierarchicalTokenPooling
    return make_multi_vector_folder(
        work, tok, name, 85,
        {"query_length": 12, "document_length": 20,
         "query_expansion": {"strategy": "min", "attend": True, "length": 8}},
        {"bias": True, "activation_function": torch.nn.Tanh()},
        {"skiplist_words": [",", ".", "?"], "skiplist_tasks": ["query", "document"]},
        [HierarchicalTokenPooling(tasks=["query", "document"])], None, similarity_fn_name)


def make_multi_vector_mean(m, work, tok_path, tok):
    return make_multi_vector_min(m, work, tok_path, tok, "multi_vector_mean", "meanmaxsim")


FOLDERS = {"dense": make_dense, "sparse": make_sparse, "static": make_static, "sparse_static": make_sparse_static,
           "cross_encoder": make_cross_encoder, "cross_encoder_identity": make_cross_encoder_identity, "router": make_router, "router_sparse": make_router_sparse,
           "llm_reranker": make_llm_reranker, "llm_reranker_chat": make_llm_reranker_chat,
           "llm_reranker_bos": make_llm_reranker_bos, "wlp": make_wlp, "decoder_embed": make_decoder_embed,
           "multi_vector": make_multi_vector, "multi_vector_min": make_multi_vector_min,
           "multi_vector_mean": make_multi_vector_mean}
# LogitScore and MultiVectorEncoder are 6.x's; 5.x's decoder embedders are tests/models/retrieval's (make_decoder_models.py)
SINCE = {"llm_reranker": 6, "llm_reranker_chat": 6, "llm_reranker_bos": 6, "decoder_embed": 6, "multi_vector": 6,
         "multi_vector_min": 6, "multi_vector_mean": 6}


def main():
    import argparse
    import sentence_transformers
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", choices=sorted(FOLDERS), help="these folders only (the reference keeps the others)")
    ap.add_argument("--suffix", default="", help="appended to the folders' names and reference keys: one major's "
                    "layouts from two library versions (5.3 saves a CrossEncoder as a plain transformers folder, "
                    "5.7 with a modules.json)")
    args = ap.parse_args()
    major = st_major()
    work = os.path.join(OUT, f".work{major}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    m = modules()
    tok_path, tok = tokenizer_dir(work)
    x = torch.linspace(-6, 6, 49)
    reference = {"sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__,
                 "texts": TEXTS, "folders": {},
                 "activations": {"x": x.tolist(),
                                 **{a: getattr(torch.nn, a)()(x).tolist() for a in ACTIVATIONS}}}
    ref_path = os.path.join(OUT, f"st{major}_reference.json")
    if args.only and os.path.exists(ref_path):
        # The versions that made the other folders stay; each folder made now records its own.
        with open(ref_path, encoding="utf-8") as f:
            old = json.load(f)
        reference.update({k: old[k] for k in ("sentence_transformers", "torch", "folders", "activations") if k in old})
    for name in args.only or FOLDERS:
        if major < SINCE.get(name, 0):
            continue
        st_dir, outputs = FOLDERS[name](m, work, tok_path, tok)
        dest = os.path.join(OUT, f"st{major}_{name}{args.suffix}")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(st_dir, dest)
        # The model card, and the transformer's torch weights beside its ONNX
        # export (dlrt reads the export), are left out to keep the folders small.
        junk = ["README.md"] + (["model.safetensors"] if os.path.exists(os.path.join(dest, "onnx")) else [])
        for sub in os.listdir(dest):  # a Router's route folders
            if os.path.exists(os.path.join(dest, sub, "onnx")):
                junk.append(os.path.join(sub, "model.safetensors"))
        for name_ in junk:
            if os.path.exists(os.path.join(dest, name_)):
                os.remove(os.path.join(dest, name_))
        modules_json = os.path.join(dest, "modules.json")
        if os.path.exists(modules_json):  # a 5.x CrossEncoder saves a plain transformers folder
            with open(modules_json, encoding="utf-8") as f:
                outputs["module_types"] = [mod["type"] for mod in json.load(f)]
        if args.only:
            outputs["made_with"] = {"sentence_transformers": sentence_transformers.__version__,
                                    "torch": torch.__version__}
        reference["folders"][name + args.suffix] = outputs
        print("wrote", dest, outputs.get("module_types", "(no modules.json)"), file=sys.stderr)
    write_json(ref_path, reference)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
