#!/usr/bin/env python3
"""Builds the quantized and half-precision variants of the model zoo, with
ONNX Runtime's outputs on each as the expected ones.

    make_quant_zoo.py ZOO_DIR OUT_DIR

ZOO_DIR is laid out like shared/models (manifest.json, <model>.onnx,
<model>/<case>/<input>.npy). OUT_DIR gets the same layout, plus per model a
"compare" entry in manifest.json saying how close dlrt must come:

- minilm_l6 through onnxruntime.quantization.quantize_dynamic, weights QInt8
  and QUInt8 (MatMulInteger + DynamicQuantizeLinear), each also as ONNX
  Runtime saves it after its integer fusions (com.microsoft
  DynamicQuantizeMatMul and MatMulIntegerToFloat);
- resnet18, mobilenet_v2, efficientnet_b0 through quantize_static, per
  channel, calibrated on the zoo's own sample inputs, in the QDQ format and
  in the QOperator format (QLinearConv, com.microsoft QLinearAdd, ...);
- the same CNNs converted to float16 with onnxconverter_common, inputs and
  outputs kept float32;
- two small opset-21 QDQ graphs of int4 and of uint4 values (blocked
  QuantizeLinear/DequantizeLinear, per-column weights), made here;
- minilm_l6 and gpt_small through ONNX Runtime's transformer optimizer
  (com.microsoft EmbedLayerNormalization, Attention, SkipLayerNormalization,
  BiasGelu, FastGelu), in float32 and converted to float16; minilm_l6 also
  with its use_multi_head_attention option (com.microsoft MultiHeadAttention);
- single com.microsoft transformer and attention-family ops (FusedMatMul,
  RotaryEmbedding, MultiHeadAttention, GroupQueryAttention), each attribute,
  layout, mask and past variant, float32 and float16
  (tests/models/contrib_op_models.py);
- the ORT-optimized minilm_l6 and gpt_small through quantize_dynamic (com.microsoft
  QAttention, QEmbedLayerNormalization where the optimizer fused attention);
- minilm_l6 and gpt_small, as exported and ORT-optimized, with every MatMul of a
  constant 2-D weight as com.microsoft MatMulNBits (4 bits, blocks of 32,
  symmetric and asymmetric), the weights quantized by ONNX Runtime's own
  quantize_matmul_4bits (what its MatMulNBitsQuantizer calls);
- single quantized com.microsoft ops: MatMulNBits, QAttention,
  QEmbedLayerNormalization (tests/models/contrib_quant_models.py);
- minilm_l6 with saturated attention and outlier channels through quantize_dynamic,
  expected outputs from onnx.reference.ReferenceEvaluator (peaked_minilm_variants).

Expected outputs come from ONNX Runtime's CPU provider, one thread:
- QDQ models with all graph optimisations: ONNX Runtime then runs each
  DequantizeLinear -> op -> QuantizeLinear group as one integer kernel (the
  same as the QOperator model's, bit for bit), which is what dlrt must do too.
  Without them it runs float ops between the pairs and rounds differently.
- every other model with graph optimisations off (the graph as written, op by
  op); for QOperator models both give the same outputs;
- a model with int8 weights in an integer product, where ONNX Runtime's
  uint8 x int8 kernels saturate on this CPU (no VNNI), in its uint8-weight form
  (int8_reference.py); elsewhere checked to equal that form bit for bit.

Needs onnxruntime, onnx, onnxconverter-common, sympy and numpy: run it with the
venv scripts/setup_venv.sh makes. Writes OUT_DIR/STAMP last, holding the
versions used, so a caller can tell a finished folder from a broken one.
"""
import json
import warnings
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8_reference  # noqa: E402  (beside this file)

CNNS = ["resnet18", "mobilenet_v2", "efficientnet_b0"]
TRANSFORMERS = ["minilm_l6"]
# Zoo transformers through ONNX Runtime's transformer optimizer (its com.microsoft
# fused ops: EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu,
# FastGelu), by the optimizer's model type; heads and hidden size are detected.
ORT_OPTIMIZED = {"minilm_l6": "bert", "gpt_small": "gpt2"}
# ... and with the optimizer's use_multi_head_attention option (MultiHeadAttention).
ORT_OPTIMIZED_MHA = {"minilm_l6": "bert"}


def log(msg):
    print(f"make_quant_zoo: {msg}", file=sys.stderr, flush=True)


def load_cases(zoo, name, entry):
    """{case: {input: array}} from the zoo manifest's entry for one model."""
    out = {}
    for case, c in entry["cases"].items():
        out[case] = {k: np.load(os.path.join(zoo, v)) for k, v in c["inputs"].items()}
    return out


class Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = list(feeds)
        self.i = 0

    def get_next(self):
        if self.i >= len(self.feeds):
            return None
        self.i += 1
        return self.feeds[self.i - 1]

    def rewind(self):
        self.i = 0


def split_batches(cases):
    """Calibration samples: every image of every case, one at a time."""
    feeds = []
    for inputs in cases.values():
        (name, x), = inputs.items()
        for b in range(x.shape[0]):
            feeds.append({name: x[b:b + 1]})
    return feeds


def inline_identity_initializers(path):
    """Replaces each Identity of an initializer by a copy of it: exporters
    share equal weights that way, and the QOperator quantizer reads a bias
    only from an initializer."""
    from onnx import numpy_helper
    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    keep = []
    for n in m.graph.node:
        if n.op_type == "Identity" and n.input[0] in inits:
            copy = numpy_helper.from_array(numpy_helper.to_array(inits[n.input[0]]), n.output[0])
            m.graph.initializer.append(copy)
            inits[n.output[0]] = copy
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    onnx.save(m, path)


def ort_outputs(model_path, inputs, optimize):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else
                                     ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


# ONNX Runtime's transformer fusions (com.microsoft Attention, Gelu,
# SkipLayerNormalization, FusedMatMul, ...), left out of save_integer_fusions.
TRANSFORMER_FUSIONS = ["AttentionFusion", "EmbedLayerNormFusion", "SkipLayerNormFusion", "GeluFusion", "GeluFusionL1",
                       "GeluFusionL2", "FastGeluFusion", "BiasGeluFusion", "MatMulScaleFusion"]


def save_integer_fusions(src, dst):
    """Saves the model ONNX Runtime builds from src at its extended
    optimisation level, without its transformer fusions: what a user gets
    with SessionOptions.optimized_model_filepath."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = dst
    ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"], disabled_optimizers=TRANSFORMER_FUSIONS)
    ops = {n.op_type for n in onnx.load(dst).graph.node if n.domain == "com.microsoft"}
    if not {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"} & ops:
        raise RuntimeError(f"{dst}: ONNX Runtime made no integer fusion (com.microsoft ops: {sorted(ops)})")


def int4_model(path, signed, rng):
    """A QDQ model of 4-bit values (opset 21): x [4, 128] float32 through
    QuantizeLinear -> DequantizeLinear to int4/uint4 in blocks of 32 along
    the last axis (-> "roundtrip"), and x times weights stored as int4/uint4
    per output column behind a DequantizeLinear (-> "matmul")."""
    from onnx import TensorProto, helper, numpy_helper
    qt = TensorProto.INT4 if signed else TensorProto.UINT4
    lo, hi = (-8, 7) if signed else (0, 15)
    k, n, block = 128, 64, 32
    x_scale = rng.uniform(0.05, 0.2, size=(4, k // block)).astype(np.float32)
    x_zp = rng.integers(lo, hi + 1, size=(4, k // block))
    w = rng.integers(lo, hi + 1, size=(k, n))
    w_scale = rng.uniform(0.01, 0.03, size=(n,)).astype(np.float32)
    w_zp = rng.integers(lo, hi + 1, size=(n,))
    inits = [numpy_helper.from_array(x_scale, "x_scale"),
             helper.make_tensor("x_zp", qt, x_zp.shape, x_zp.flatten().tolist()),
             helper.make_tensor("w", qt, w.shape, w.flatten().tolist()),
             numpy_helper.from_array(w_scale, "w_scale"),
             helper.make_tensor("w_zp", qt, w_zp.shape, w_zp.flatten().tolist())]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], axis=1, block_size=block),
             helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["roundtrip"], axis=1, block_size=block),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["matmul"])]
    graph = helper.make_graph(nodes, "int4_qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, k])],
                              [helper.make_tensor_value_info("roundtrip", TensorProto.FLOAT, [4, k]),
                               helper.make_tensor_value_info("matmul", TensorProto.FLOAT, [4, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    # Values spread over more than the 4-bit range, ties included.
    x = rng.uniform(-2.5, 2.5, size=(4, k)).astype(np.float32)
    x[0, :8] = (np.arange(8, dtype=np.float32) + 0.5) * x_scale[0, 0]
    return {"sample": {"x": x}}


def matmul_nbits_model(src, dst, symmetric, block_size=32):
    """src with each MatMul whose B is a 2-D float32 initializer replaced by
    com.microsoft MatMulNBits (4 bits, QOperator layout), quantized by ONNX
    Runtime's quantize_matmul_4bits: what
    onnxruntime.quantization.matmul_nbits_quantizer.MatMulNBitsQuantizer writes
    with its default config (its module needs onnx_ir, which the pinned venv
    lacks, so the same rewrite is done here)."""
    from onnx import helper, numpy_helper
    from onnxruntime.capi._pybind_state import quantize_matmul_4bits
    m = onnx.load(src)
    inits = {i.name: i for i in m.graph.initializer}
    uses = {}
    for n in m.graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    nodes, replaced = [], 0
    for n in m.graph.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" and n.domain == "" else None
        if b is None or len(b.dims) != 2 or b.data_type != onnx.TensorProto.FLOAT:
            nodes.append(n)
            continue
        w = numpy_helper.to_array(b)
        rows, cols = w.shape
        k_blocks = (rows + block_size - 1) // block_size
        wp = np.pad(w, ((0, k_blocks * block_size - rows), (0, 0))) if k_blocks * block_size != rows else w
        packed = np.zeros((cols, k_blocks, block_size // 2), dtype=np.uint8)
        zp = np.zeros((cols, (k_blocks + 1) // 2), dtype=np.uint8)
        scales = np.zeros((cols, k_blocks), dtype=np.float32)
        quantize_matmul_4bits(packed, np.ascontiguousarray(wp), scales, zp, block_size, cols, rows, symmetric)
        base = f"{b.name}_{replaced}"
        new = [numpy_helper.from_array(packed, base + "_Q4"), numpy_helper.from_array(scales, base + "_scales")]
        ins = [n.input[0], new[0].name, new[1].name]
        if not symmetric:
            new.append(numpy_helper.from_array(zp, base + "_zero_points"))
            ins.append(new[2].name)
        m.graph.initializer.extend(new)
        nodes.append(helper.make_node("MatMulNBits", ins, list(n.output), name=(n.name or base) + "_Q4",
                                      domain="com.microsoft", K=rows, N=cols, bits=4, block_size=block_size))
        uses[b.name] -= 1
        replaced += 1
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    keep = [i for i in m.graph.initializer if uses.get(i.name, 1) > 0]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    if not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(m, dst)
    if not replaced:
        raise RuntimeError(f"{src}: no MatMul with a constant 2-D float weight")
    return replaced


def write_variant(out_dir, variant, model_path, cases, compare, description, manifest, optimize=False):
    reference = (f"onnxruntime {ort.__version__} CPU, 1 thread, graph optimisations "
                 + ("all" if optimize else "off"))
    # Every case's outputs, keyed (case, output), independent of this CPU's int8 kernels (int8_reference.py).
    outputs, note = int8_reference.reference_outputs(
        ort, model_path, lambda path: {(case, k): v for case, inputs in cases.items()
                                       for k, v in ort_outputs(path, inputs, optimize).items()}, log)
    if note:
        reference += f"; {note}"
    entry = {"file": f"{variant}.onnx", "description": description, "compare": compare,
             "reference": reference, "cases": {}}
    for case, inputs in cases.items():
        case_dir = os.path.join(out_dir, variant, case)
        os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
        c = {"inputs": {}, "expected": {}}
        for k, v in inputs.items():
            rel = f"{variant}/{case}/{k}.npy"
            np.save(os.path.join(out_dir, rel), v)
            c["inputs"][k] = rel
        for (c_name, k), v in outputs.items():
            if c_name != case:
                continue
            rel = f"{variant}/{case}/expected/{k}.npy"
            np.save(os.path.join(out_dir, rel), v)
            c["expected"][k] = rel
        entry["cases"][case] = c
    manifest["models"][variant] = entry
    log(f"{variant}: {len(cases)} cases")


# --- minilm_l6 attending like a trained model, int8, checked against the ONNX reference (issue 52 item 5) ---
# The zoo's minilm has random weights: its softmax rows are nearly uniform (largest probability about 0.04
# over 32 keys) and its hidden states have no outlier channels, so an int8 attention path that goes wrong
# only where a few keys dominate, or where a few huge channels set DynamicQuantizeLinear's per-tensor scale,
# still passes it. Here the query weights are scaled so that the softmax saturates (from layer 1 on, about
# 3 in 4 rows put more than 0.9 on one key) and every LayerNormalization's gain is raised on a few channels
# (hidden values up to about 200 against a median of 0.15, as trained BERTs carry). Expected outputs come
# from onnx.reference.ReferenceEvaluator on the quantized graph, not from ONNX Runtime, whose own
# optimisations round differently.
PEAKED_QUERY_SCALE = 6.0
PEAKED_OUTLIER_CHANNELS = [7, 100, 250]
PEAKED_OUTLIER_GAIN = 10.0


def peaked_minilm_variants(src, out, manifest):
    """Adds minilm_l6_peaked_dynamic_{qint8, qint8_per_channel_rr} to manifest (files under out)."""
    from onnx import numpy_helper, version_converter
    from onnx.reference import ReferenceEvaluator
    m = onnx.load(src)
    inits = {i.name: i for i in m.graph.initializer}

    def rescale(name, fn):
        inits[name].CopyFrom(numpy_helper.from_array(fn(numpy_helper.to_array(inits[name]).copy()), name))

    def outliers(gain):
        gain[PEAKED_OUTLIER_CHANNELS] *= PEAKED_OUTLIER_GAIN
        return gain

    queries = layer_norms = 0
    for n in m.graph.node:
        if n.op_type == "MatMul" and "/attention/query/" in n.output[0] and n.input[1] in inits:
            rescale(n.input[1], lambda w: w * np.float32(PEAKED_QUERY_SCALE))
            queries += 1
        elif n.op_type == "LayerNormalization" and n.input[1] in inits:
            rescale(n.input[1], outliers)
            layer_norms += 1
    if queries != 6 or layer_norms != 13:
        raise RuntimeError(f"{src}: found {queries} query MatMuls and {layer_norms} LayerNormalizations, "
                           "expected 6 and 13 (the zoo's minilm_l6)")
    peaked = os.path.join(out, "minilm_l6_peaked.onnx")
    onnx.save(m, peaked)
    rng = np.random.default_rng(52)
    # A sentence run alone (32 tokens), a padded batch of three with two segments, a short one.
    cases = {"b1s32": {"input_ids": rng.integers(1000, 30000, size=(1, 32)), "attention_mask": np.ones((1, 32)),
                       "token_type_ids": np.zeros((1, 32))}}
    mask = np.ones((3, 20))
    mask[1, 13:] = 0
    mask[2, 5:] = 0
    cases["b3s20_padded"] = {"input_ids": rng.integers(1000, 30000, size=(3, 20)) * mask, "attention_mask": mask,
                             "token_type_ids": np.repeat((np.arange(20) >= 10)[None, :], 3, axis=0) * mask}
    cases["b1s7"] = {"input_ids": rng.integers(1000, 30000, size=(1, 7)), "attention_mask": np.ones((1, 7)),
                     "token_type_ids": np.zeros((1, 7))}
    cases = {c: {k: v.astype(np.int64) for k, v in feeds.items()} for c, feeds in cases.items()}
    for tag, options in (("qint8", {}), ("qint8_per_channel_rr", {"per_channel": True, "reduce_range": True})):
        variant = f"minilm_l6_peaked_dynamic_{tag}"
        path = os.path.join(out, variant + ".onnx")
        quantize_dynamic(peaked, path, weight_type=QuantType.QInt8, **options)
        # The reference implements DequantizeLinear (the quantized embeddings) from opset 19 on: the same
        # graph converted to opset 19 (no op of this graph changed meaning between 17 and 19).
        reference = ReferenceEvaluator(version_converter.convert_version(onnx.load(path), 19))
        entry = {"file": f"{variant}.onnx", "compare": {"min_cosine": 0.9999},
                 "reference": f"onnx {onnx.__version__} onnx.reference.ReferenceEvaluator",
                 "description": f"minilm_l6 with query weights x{PEAKED_QUERY_SCALE:g} (saturated softmax) and "
                                f"LayerNormalization gains x{PEAKED_OUTLIER_GAIN:g} on channels "
                                f"{PEAKED_OUTLIER_CHANNELS} (outlier channels), through onnxruntime "
                                f"{ort.__version__} quantize_dynamic (weights qint8"
                                + (", per channel, reduce_range" if options else "") + ")", "cases": {}}
        for case, feeds in cases.items():
            case_dir = os.path.join(out, variant, case)
            os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
            c = {"inputs": {}, "expected": {}}
            for k, v in feeds.items():
                c["inputs"][k] = f"{variant}/{case}/{k}.npy"
                np.save(os.path.join(out, c["inputs"][k]), v)
            (got,) = reference.run(None, feeds)
            c["expected"]["last_hidden_state"] = f"{variant}/{case}/expected/last_hidden_state.npy"
            np.save(os.path.join(out, c["expected"]["last_hidden_state"]), got)
            entry["cases"][case] = c
        manifest["models"][variant] = entry
        log(f"{variant}: {len(cases)} cases (expected from the ONNX reference)")
    os.remove(peaked)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    zoo, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(zoo, "manifest.json")) as f:
        zoo_manifest = json.load(f)["models"]
    stamp = os.path.join(out, "STAMP")
    if os.path.exists(stamp):
        os.remove(stamp)
    os.makedirs(out, exist_ok=True)
    manifest = {"generator": "tests/models/make_quant_zoo.py", "models": {}}
    probe = int8_reference.probe(ort)
    int8_line = int8_reference.summary(ort)
    log(int8_line)
    manifest["int8_probe"] = probe
    # The static models' outputs are dequantized integers, which dlrt must
    # reproduce exactly: rtol 1e-3 / atol 1e-4 (the float zoo's tolerance)
    # leaves no room for an integer step. Embeddings compare row by row.
    cnn_compare = {"rtol": 1e-3, "atol": 1e-4}
    emb_compare = {"min_cosine": 0.9999}

    def source(name):
        """(model path, cases) of a zoo model, or None (logged) when the zoo lacks it."""
        if name not in zoo_manifest:
            log(f"{name} is not in {zoo}; skipped")
            return None
        return (os.path.join(zoo, zoo_manifest[name].get("file", name + ".onnx")),
                load_cases(zoo, name, zoo_manifest[name]))

    for name in TRANSFORMERS:
        if (found := source(name)) is None:
            continue
        src, cases = found
        for wt, tag in ((QuantType.QInt8, "qint8"), (QuantType.QUInt8, "quint8")):
            variant = f"{name}_dynamic_{tag}"
            path = os.path.join(out, variant + ".onnx")
            quantize_dynamic(src, path, weight_type=wt)
            write_variant(out, variant, path, cases, emb_compare,
                          f"{name} through onnxruntime {ort.__version__} quantize_dynamic, weights {tag}", manifest)
            # The same model as ONNX Runtime saves it after its integer fusions
            # (com.microsoft DynamicQuantizeMatMul, MatMulIntegerToFloat).
            fused = f"{variant}_ort_fused"
            save_integer_fusions(path, os.path.join(out, fused + ".onnx"))
            write_variant(out, fused, os.path.join(out, fused + ".onnx"), cases, emb_compare,
                          f"{variant} saved by onnxruntime {ort.__version__} after its extended graph optimisations "
                          "(transformer fusions off: the integer fusions only)", manifest)

    from onnxruntime.transformers.optimizer import optimize_model
    for name, model_type in ORT_OPTIMIZED.items():
        if (found := source(name)) is None:
            continue
        src, cases = found
        for half in (False, True):
            variant = f"{name}_ort_optimized" + ("_fp16" if half else "")
            path = os.path.join(out, variant + ".onnx")
            # opt_level 0: the optimizer's own fusions, without ONNX Runtime's
            # graph optimiser (which would need torch here).
            opt = optimize_model(src, model_type=model_type, num_heads=0, hidden_size=0, opt_level=0)
            if half:
                opt.convert_float_to_float16(keep_io_types=True)
            opt.save_model_to_file(path)
            ops = sorted({n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"})
            write_variant(out, variant, path, cases,
                          {"rtol": 1e-2, "atol": 2e-2} if half else {"rtol": 1e-3, "atol": 1e-4},
                          f"{name} through onnxruntime {ort.__version__} transformers.optimizer (model_type "
                          f"{model_type}{', float16' if half else ''}): com.microsoft {', '.join(ops)}", manifest)

        # The optimized float32 graph through quantize_dynamic: com.microsoft
        # QAttention and QEmbedLayerNormalization where attention was fused,
        # MatMulInteger + DynamicQuantizeLinear elsewhere. Compared row by
        # row, as the other dynamic models: dlrt's float ops before each
        # DynamicQuantizeLinear may differ from ONNX Runtime's in the last bit
        # and so move a value by one integer step.
        opt_path = os.path.join(out, f"{name}_ort_optimized.onnx")
        for wt, tag, per_channel in ((QuantType.QInt8, "qint8", False), (QuantType.QUInt8, "quint8", False),
                                     (QuantType.QInt8, "qint8_per_channel", True)):
            variant = f"{name}_ort_optimized_dynamic_{tag}"
            path = os.path.join(out, variant + ".onnx")
            quantize_dynamic(opt_path, path, weight_type=wt, per_channel=per_channel,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            ops = sorted({n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"})
            write_variant(out, variant, path, cases, emb_compare,
                          f"{name}_ort_optimized through onnxruntime {ort.__version__} quantize_dynamic, weights "
                          f"{tag}: com.microsoft {', '.join(ops)}", manifest)

        # MatMulNBits (4 bits, blocks of 32), symmetric and with zero points,
        # of the graph as exported and of the optimized one. ONNX Runtime
        # dequantizes the weights and runs a float GEMM (accuracy_level 0), as
        # dlrt does: the float tolerance.
        for base, base_path in ((name, src), (f"{name}_ort_optimized", opt_path)):
            for symmetric, tag in ((True, "sym"), (False, "asym")):
                variant = f"{base}_matmul_nbits4_{tag}"
                path = os.path.join(out, variant + ".onnx")
                count = matmul_nbits_model(base_path, path, symmetric)
                write_variant(out, variant, path, cases, {"rtol": 1e-3, "atol": 1e-4},
                              f"{base} with its {count} constant-weight MatMuls as com.microsoft MatMulNBits (4 bits, "
                              f"block 32, {'symmetric' if symmetric else 'with zero points'}; weights by onnxruntime "
                              f"{ort.__version__} quantize_matmul_4bits)", manifest)

    # The same optimizer with its use_multi_head_attention option: minilm_l6's
    # attention as com.microsoft MultiHeadAttention (separate Q/K/V
    # projections, bias, EmbedLayerNormalization's mask index as the
    # key_padding_mask). gpt_small's gpt2 fusions write no MultiHeadAttention.
    from onnxruntime.transformers.fusion_options import FusionOptions
    for name, model_type in ORT_OPTIMIZED_MHA.items():
        if (found := source(name)) is None:
            continue
        src, cases = found
        variant = f"{name}_ort_optimized_mha"
        path = os.path.join(out, variant + ".onnx")
        options = FusionOptions(model_type)
        options.use_multi_head_attention = True
        opt = optimize_model(src, model_type=model_type, num_heads=0, hidden_size=0, opt_level=0,
                             optimization_options=options)
        opt.save_model_to_file(path)
        ops = sorted({n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"})
        write_variant(out, variant, path, cases, {"rtol": 1e-3, "atol": 1e-4},
                      f"{name} through onnxruntime {ort.__version__} transformers.optimizer (model_type {model_type}, "
                      f"use_multi_head_attention): com.microsoft {', '.join(ops)}", manifest)

    for name in CNNS:
        if (found := source(name)) is None:
            continue
        src, cases = found
        # ONNX Runtime's recommended first step: shape inference and constant
        # folding, so that every bias is an initializer the quantizer can read.
        pre = os.path.join(out, f"{name}_preprocessed.onnx")
        quant_pre_process(src, pre, skip_symbolic_shape=True)
        inline_identity_initializers(pre)
        for fmt, tag in ((QuantFormat.QDQ, "qdq"), (QuantFormat.QOperator, "qop")):
            variant = f"{name}_static_{tag}"
            path = os.path.join(out, variant + ".onnx")
            quantize_static(pre, path, Reader(split_batches(cases)), quant_format=fmt, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
            write_variant(out, variant, path, cases, cnn_compare,
                          f"{name} through onnxruntime {ort.__version__} quantize_static ({tag}, per channel, "
                          "uint8 activations, int8 weights, calibrated on the zoo's sample inputs)", manifest,
                          optimize=(fmt == QuantFormat.QDQ))
        os.remove(pre)
        from onnxconverter_common import float16
        variant = f"{name}_fp16"
        path = os.path.join(out, variant + ".onnx")
        onnx.save(float16.convert_float_to_float16(onnx.load(src), keep_io_types=True), path)
        write_variant(out, variant, path, cases, {"rtol": 1e-2, "atol": 1e-2},
                      f"{name} converted to float16 by onnxconverter_common (inputs and outputs float32)", manifest)

    # 4-bit QDQ (opset 21), int4 and uint4: not from the zoo, ONNX Runtime's
    # outputs on the graph as written.
    rng = np.random.default_rng(21)
    for signed, tag in ((True, "int4"), (False, "uint4")):
        variant = f"qdq_{tag}"
        path = os.path.join(out, variant + ".onnx")
        cases = int4_model(path, signed, rng)
        write_variant(out, variant, path, cases, {"rtol": 1e-4, "atol": 1e-5},
                      f"{tag} QuantizeLinear/DequantizeLinear in blocks of 32 and {tag} weights per column "
                      "(opset 21, made by make_quant_zoo.py)", manifest)

    # minilm_l6 with peaked attention and outlier channels, int8, against the ONNX reference.
    if (found := source("minilm_l6")) is not None:
        peaked_minilm_variants(found[0], out, manifest)

    # Single com.microsoft ops (tests/models/contrib_op_models.py), as written.
    from contrib_op_models import attention_family_models, contrib_models
    for variant, path, inputs, description in contrib_models(out, np.random.default_rng(1)):
        write_variant(out, variant, path, {"c0": inputs}, {"rtol": 1e-4, "atol": 1e-5},
                      description + " (made by contrib_op_models.py)", manifest)
    for variant, path, inputs, description, compare in attention_family_models(out, np.random.default_rng(2)):
        write_variant(out, variant, path, {"c0": inputs}, compare, description + " (made by contrib_op_models.py)",
                      manifest)

    # Single quantized com.microsoft ops (tests/models/contrib_quant_models.py),
    # as written, each with its own tolerance.
    from contrib_quant_models import contrib_quant_models
    for variant, path, inputs, description, compare in contrib_quant_models(out, np.random.default_rng(2)):
        write_variant(out, variant, path, {"c0": inputs}, compare, description + " (made by contrib_quant_models.py)",
                      manifest)

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    import onnxconverter_common
    with open(stamp, "w") as f:
        f.write(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}, "
                f"onnxconverter_common {onnxconverter_common.__version__}, numpy {np.__version__}; {int8_line}\n")
    log(f"wrote {len(manifest['models'])} models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
