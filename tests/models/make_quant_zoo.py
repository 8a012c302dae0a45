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
  (tests/models/contrib_op_models.py).

Expected outputs come from ONNX Runtime's CPU provider, one thread:
- QDQ models with all graph optimisations: ONNX Runtime then runs each
  DequantizeLinear -> op -> QuantizeLinear group as one integer kernel (the
  same as the QOperator model's, bit for bit), which is what dlrt must do too.
  Without them it runs float ops between the pairs and rounds differently.
- every other model with graph optimisations off (the graph as written, op by
  op); for QOperator models both give the same outputs.

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


def write_variant(out_dir, variant, model_path, cases, compare, description, manifest, optimize=False):
    reference = (f"onnxruntime {ort.__version__} CPU, 1 thread, graph optimisations "
                 + ("all" if optimize else "off"))
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
        for k, v in ort_outputs(model_path, inputs, optimize).items():
            rel = f"{variant}/{case}/expected/{k}.npy"
            np.save(os.path.join(out_dir, rel), v)
            c["expected"][k] = rel
        entry["cases"][case] = c
    manifest["models"][variant] = entry
    log(f"{variant}: {len(cases)} cases")


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

    # Single com.microsoft ops (tests/models/contrib_op_models.py), as written.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from contrib_op_models import attention_family_models, contrib_models
    for variant, path, inputs, description in contrib_models(out, np.random.default_rng(1)):
        write_variant(out, variant, path, {"c0": inputs}, {"rtol": 1e-4, "atol": 1e-5},
                      description + " (made by contrib_op_models.py)", manifest)
    for variant, path, inputs, description, compare in attention_family_models(out, np.random.default_rng(2)):
        write_variant(out, variant, path, {"c0": inputs}, compare, description + " (made by contrib_op_models.py)",
                      manifest)

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    import onnxconverter_common
    with open(stamp, "w") as f:
        f.write(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}, "
                f"onnxconverter_common {onnxconverter_common.__version__}, numpy {np.__version__}\n")
    log(f"wrote {len(manifest['models'])} models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
