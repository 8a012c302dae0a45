#!/usr/bin/python3
"""Writes the small ONNX models dlrt's own tests (and `make demo`) use.

Usage: /usr/bin/python3 tests/models/make_test_models.py [--if-missing] OUT_DIR
  --if-missing: do nothing when OUT_DIR/STAMP exists (tests use this)

Needs Debian's python3-onnx and python3-numpy. Weights come from fixed seeds,
so reruns write identical files. The folder is written next to OUT_DIR and
renamed into place, so concurrent runs never see half-written files.

Good models: mlp, conv_net, dynamic_batch, unknown_dims, if_model, two_towers, external_data (+ weights.bin),
int8_matmul (dynamic int8), qdq_matmul (static int8, QDQ format), fp16_mlp.
Bad inputs (each must be rejected with a clear error): see BAD below.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


def model(graph, opset=OPSET, extra_opsets=()):
    m = helper.make_model(graph, producer_name="dlrt-test-models",
                          opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets))
    m.ir_version = IR_VERSION
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def mlp_graph(rng):
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal((8,)).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    b2 = rng.standard_normal((3,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2"),
        helper.make_node("Add", ["h3", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 3])],
        [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)])

    def reference(x):
        h = np.maximum(x @ w1 + b1, 0) @ w2 + b2
        e = np.exp(h - h.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    return g, reference


def conv_net(rng):
    c1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    c1b = (rng.standard_normal((8,)) * 0.1).astype(np.float32)
    c2 = (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    c2b = (rng.standard_normal((16,)) * 0.1).astype(np.float32)
    fw = (rng.standard_normal((10, 16)) * 0.3).astype(np.float32)
    fb = (rng.standard_normal((10,)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "c1", "c1b"], ["a1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2", "c2b"], ["a2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits"], name="classifier", transB=1),
    ]
    g = helper.make_graph(
        nodes, "conv_net",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        [init("c1", c1), init("c1b", c1b), init("c2", c2), init("c2b", c2b), init("fw", fw), init("fb", fb)])
    return model(g)


def dynamic_batch():
    # Symbolic dims, and an output name with characters --output-dir must sanitise.
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "two"], ["scores/out:0"], name="double"),
    ]
    g = helper.make_graph(
        nodes, "dynamic_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq"])],
        [helper.make_tensor_value_info("scores/out:0", TensorProto.FLOAT, ["batch", "seq"])],
        [init("two", np.array(2.0, dtype=np.float32))])
    return model(g)


def unknown_dims():
    # Every dim "?", as paddle2onnx writes unknown dims: each is its own size, not one name.
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "unknown_dims",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["?", "?"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["?", "?"])])
    return model(g)


def nested_if_model(depth):
    """`depth` Ifs, each in the then-branch of the one above; the innermost
    doubles x and every else-branch negates it. Past protobuf's default
    nesting limit (100 levels, 31 Ifs)."""
    inner = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["out0"], name="innermost_add")], "level0", [],
        [helper.make_tensor_value_info("out0", TensorProto.FLOAT, [3])])
    for level in range(1, depth + 1):
        else_g = helper.make_graph(
            [helper.make_node("Neg", ["x"], ["neg%d" % level], name="neg%d" % level)], "else%d" % level, [],
            [helper.make_tensor_value_info("neg%d" % level, TensorProto.FLOAT, [3])])
        node = helper.make_node("If", ["cond"], ["out%d" % level], name="if%d" % level,
                                then_branch=inner, else_branch=else_g)
        inner = helper.make_graph([node], "level%d" % level, [],
                                  [helper.make_tensor_value_info("out%d" % level, TensorProto.FLOAT, [3])])
    g = helper.make_graph(list(inner.node), "nested_if",
                          [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("out%d" % depth, TensorProto.FLOAT, [3])])
    return model(g)


def if_model():
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["then_out"], name="then_add")], "then_branch", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"], name="else_neg")], "else_branch", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [3])])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "if_model",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    return model(g)


def external_tensor(name, dims, location, offset, length):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key = k
        e.value = v
    return t


def matmul_with(w_tensor, name):
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [w_tensor])
    return model(g)


def int8_matmul(rng):
    """quantize_dynamic's shape of a Linear: DynamicQuantizeLinear, MatMulInteger, Cast, Mul, Add."""
    w = rng.integers(-128, 128, size=(8, 6)).astype(np.int8)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Mul", ["accf", "s"], ["ys"]),
        helper.make_node("Add", ["ys", "b"], ["y"]),
    ]
    g = helper.make_graph(nodes, "int8_matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
                          [init("w", w), init("wz", np.array(3, np.int8)), init("ws", np.array(0.02, np.float32)),
                           init("b", rng.standard_normal(6).astype(np.float32))])
    return model(g)


def qdq_matmul(rng):
    """quantize_static's QDQ shape of a MatMul: Q -> DQ on the activation, DQ of int8 weights, Q -> DQ after."""
    w = rng.integers(-127, 128, size=(8, 6)).astype(np.int8)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"]),
        helper.make_node("MatMul", ["xd", "wd"], ["h"]),
        helper.make_node("QuantizeLinear", ["h", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qdq_matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
                          [init("w", w), init("ws", np.array(0.02, np.float32)),
                           init("xs", np.array(0.05, np.float32)), init("xz", np.array(128, np.uint8)),
                           init("ys", np.array(0.1, np.float32)), init("yz", np.array(128, np.uint8))])
    return model(g)


def fp16_mlp(rng):
    """A float16 model with float32 inputs and outputs (keep_io_types)."""
    nodes = [
        helper.make_node("Cast", ["x"], ["xh"], to=TensorProto.FLOAT16),
        helper.make_node("MatMul", ["xh", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT),
    ]
    g = helper.make_graph(nodes, "fp16_mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [init("w", rng.standard_normal((4, 3)).astype(np.float16))])
    return model(g)


def two_towers():
    """Two towers in one graph: a = Relu(x), b = Neg(z), c = a + b (outputs a, b, c)."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="relu"),
         helper.make_node("Neg", ["z"], ["b"], name="neg"),
         helper.make_node("Add", ["a", "b"], ["c"], name="add")],
        "two_towers",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("x", "z")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("a", "b", "c")])
    return model(g)


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def write_all(out):
    rng = np.random.default_rng(1234)
    g, mlp_ref = mlp_graph(rng)
    mlp = model(g)
    save(mlp, os.path.join(out, "mlp.onnx"))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.save(os.path.join(out, "mlp_input.npy"), x)
    np.save(os.path.join(out, "mlp_expected.npy"), mlp_ref(x))
    save(conv_net(rng), os.path.join(out, "conv_net.onnx"))
    save(dynamic_batch(), os.path.join(out, "dynamic_batch.onnx"))
    save(unknown_dims(), os.path.join(out, "unknown_dims.onnx"))
    save(if_model(), os.path.join(out, "if_model.onnx"))
    save(nested_if_model(40), os.path.join(out, "nested_if.onnx"))
    save(int8_matmul(rng), os.path.join(out, "int8_matmul.onnx"))
    save(fp16_mlp(rng), os.path.join(out, "fp16_mlp.onnx"))
    save(two_towers(), os.path.join(out, "two_towers.onnx"))
    save(qdq_matmul(np.random.default_rng(77)), os.path.join(out, "qdq_matmul.onnx"))

    # External data: W (4x4 identity * 3) lives in weights.bin after 16 bytes of padding.
    w = (np.eye(4, dtype=np.float32) * 3).astype("<f4")
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + w.tobytes())
    save(matmul_with(external_tensor("w", [4, 4], "weights.bin", 16, 64), "external_data"),
         os.path.join(out, "external_data.onnx"))

    # --- bad inputs ---
    bad = os.path.join(out, "bad")
    os.makedirs(bad)
    data = mlp.SerializeToString()
    with open(os.path.join(bad, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(bad, "not_onnx.onnx"), "wb") as f:
        f.write(b"this is a text file, not an ONNX model\n" * 4)
    open(os.path.join(bad, "empty.onnx"), "wb").close()

    custom = helper.make_graph(
        [helper.make_node("FancyCustomOp", ["x"], ["y"], name="my_custom_node", domain="com.example")],
        "custom_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(model(custom, extra_opsets=[helper.make_opsetid("com.example", 1)]), os.path.join(bad, "custom_op.onnx"))

    def relu_model(opset):
        g = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu_opset%d" % opset,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        return model(g, opset=opset)
    save(relu_model(99), os.path.join(bad, "opset99.onnx"))
    save(relu_model(29), os.path.join(bad, "opset29.onnx"))

    with open(os.path.join(out, "x.bin"), "wb") as f:  # exists, but outside bad/
        f.write(w.tobytes())
    save(matmul_with(external_tensor("w", [4, 4], "../x.bin", 0, 64), "escape"),
         os.path.join(bad, "external_escape.onnx"))
    save(matmul_with(external_tensor("w", [4, 4], "/etc/passwd", 0, 64), "absolute"),
         os.path.join(bad, "external_absolute.onnx"))
    save(matmul_with(external_tensor("w", [4, 4], "missing.bin", 0, 64), "missing"),
         os.path.join(bad, "external_missing.onnx"))
    with open(os.path.join(bad, "short.bin"), "wb") as f:
        f.write(b"\0" * 32)
    save(matmul_with(external_tensor("w", [4, 4], "short.bin", 0, 64), "past_end_length"),
         os.path.join(bad, "external_length_past_end.onnx"))
    save(matmul_with(external_tensor("w", [4, 4], "short.bin", 1000, 64), "past_end_offset"),
         os.path.join(bad, "external_offset_past_end.onnx"))

    short = TensorProto()
    short.name = "w"
    short.data_type = TensorProto.FLOAT
    short.dims.extend([4, 4])
    short.raw_data = b"\0" * 8  # 2 floats for a 16-float shape
    save(matmul_with(short, "short_initializer"), os.path.join(bad, "short_initializer.onnx"))

    huge = TensorProto()
    huge.name = "w"
    huge.data_type = TensorProto.FLOAT
    huge.dims.extend([1 << 62, 5])  # 5 * 2^62 elements: wraps to 2^62 in 64-bit arithmetic
    huge.raw_data = b"\0" * 16
    save(matmul_with(huge, "overflow"), os.path.join(bad, "overflow_initializer.onnx"))
    # The same in a declared input shape (dlrt run would have to make a random input of it).
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "overflow_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 40, 1 << 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 40, 1 << 40])])
    save(model(g), os.path.join(bad, "overflow_input.onnx"))

    cycle = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["a"], name="add_in_cycle"),
         helper.make_node("Relu", ["a"], ["b"], name="relu_in_cycle")],
        "cycle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])])
    save(model(cycle), os.path.join(bad, "cycle.onnx"))

    # Values that crashed libonnx's shape inference (SIGFPE, SIGSEGV) before dlrt validated them.
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_stride0", strides=[0, 0])], "conv_stride0",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init("w", np.ones((1, 1, 3, 3), np.float32))])
    save(model(g), os.path.join(bad, "conv_stride0.onnx"))
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="convt_rank2")], "convt_rank2",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init("w", np.ones((1, 2, 3), np.float32))])
    save(model(g), os.path.join(bad, "convtranspose_rank2.onnx"))
    g = helper.make_graph(
        [helper.make_node("Relu", ["nowhere"], ["y"], name="reads_nothing")], "undefined_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(model(g), os.path.join(bad, "undefined_input.onnx"))
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [2])])
    # (Nodes out of order: the checker stops at that, an error dlrt ignores as it sorts the
    # graph itself, and never looks at the Scan.)
    g = helper.make_graph(
        [helper.make_node("Scan", ["c", "xs"], ["s", "ys"], name="scan_no_count", body=body),
         helper.make_node("Identity", ["s0"], ["c"])], "scan_no_count",
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [3, 2])])
    save(model(g, opset=11), os.path.join(bad, "scan_no_count.onnx"))
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "s"], ["y"], name="split0")], "split0",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])],
        [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)],
        [init("s", np.array(0, np.int64))])
    save(model(g), os.path.join(bad, "split0.onnx"))
    g = helper.make_graph(
        [helper.make_node("STFT", ["x", "st", "", "fl"], ["y"], name="stft_rank1")], "stft_rank1",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init("st", np.array(4, np.int64)), init("fl", np.array(8, np.int64))])
    save(model(g), os.path.join(bad, "stft_rank1.onnx"))
    # An opset version past 32 bits (2^32 + 17 once truncated to opset 17).
    m = model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "opset_huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]))
    m.opset_import[0].version = (1 << 32) + 17
    save(m, os.path.join(bad, "opset_huge.onnx"))

    # A graph input of an element type dlrt has no tensors of.
    save(model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="identity")], "complex_input",
        [helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])])), os.path.join(bad, "complex_input.onnx"))

    # Resize whose scales come from an input: huge scales must fail against the memory
    # budget, fast, not allocate until the machine runs out.
    save(model(helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize_by_input", mode="nearest")],
        "resize_scales_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])), os.path.join(out, "resize_scales_input.onnx"))
    for name, scale in (("1e10", 1e10), ("1e9", 1e9), ("3e8", 3e8), ("300", 300.0)):
        np.save(os.path.join(bad, "resize_scales_%s.npy" % name), np.array([1, 1, scale, scale], np.float32))

    # Inputs for mlp.onnx that must be rejected.
    np.save(os.path.join(bad, "wrong_dtype.npy"), np.zeros((2, 4), dtype=np.int64))
    np.save(os.path.join(bad, "wrong_rank.npy"), np.zeros((8,), dtype=np.float32))
    with open(os.path.join(bad, "malformed.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\x40\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }")
    np.save(os.path.join(bad, "fortran.npy"), np.asfortranarray(np.zeros((2, 4), dtype=np.float32)))
    write_conformance_cases(os.path.join(out, "conformance_cases"), mlp, x, mlp_ref(x), custom)

    with open(os.path.join(out, "STAMP"), "w") as f:
        f.write("written by tests/models/make_test_models.py\n")


def write_case(folder, m, inputs, outputs):
    """An ONNX backend-test style case: model.onnx + test_data_set_0/{input,output}_N.pb."""
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    save(m, os.path.join(folder, "model.onnx"))
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, a in enumerate(arrays):
            with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a).SerializeToString())


def write_conformance_cases(out, mlp, x, y, custom_graph):
    """Cases for `dlrt conformance` tests: one passes, one fails, one is unsupported, one is skipped."""
    write_case(os.path.join(out, "mlp_ok"), mlp, [x], [y])
    wrong = y.copy()
    wrong[1, 2] += 0.5
    write_case(os.path.join(out, "mlp_wrong"), mlp, [x], [wrong])
    write_case(os.path.join(out, "custom_op"), model(custom_graph, extra_opsets=[helper.make_opsetid("com.example", 1)]),
               [np.ones(2, dtype=np.float32)], [np.ones(2, dtype=np.float32)])
    write_case(os.path.join(out, "test_momentum_case"), mlp, [x], [y])


def main():
    args = sys.argv[1:]
    if_missing = "--if-missing" in args
    args = [a for a in args if a != "--if-missing"]
    if len(args) != 1:
        sys.exit("usage: make_test_models.py [--if-missing] OUT_DIR")
    out = os.path.abspath(args[0])
    if if_missing and os.path.exists(os.path.join(out, "STAMP")):
        return
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".test_models.", dir=parent)
    try:
        write_all(tmp)
        if if_missing and os.path.exists(os.path.join(out, "STAMP")):
            shutil.rmtree(tmp, ignore_errors=True)  # another run finished first; its files are identical
            return
        if os.path.isdir(out):
            shutil.rmtree(out, ignore_errors=True)
        try:
            os.rename(tmp, out)
        except OSError:
            # Another run put it in place first: its files are identical.
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print("test models written to", out)


if __name__ == "__main__":
    main()
