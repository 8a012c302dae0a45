#!/usr/bin/env python3
"""Writes the small ONNX models the Python tests use into OUT (argv[1]).

    /usr/bin/python3 tests/python/make_models.py OUT

Needs Debian's python3-onnx and python3-numpy (what tests/models/make_test_models.py
uses); tests/python/conftest.py runs it once per test session.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, TypeProto, helper, numpy_helper, save

OPSET = 17


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="dlrt-tests")
    m.ir_version = 8
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    # x -> sum = x + 1, prod = x * 2, neg = -x: three outputs to pick from.
    save(model([helper.make_node("Add", ["x", "one"], ["sum"]), helper.make_node("Mul", ["x", "two"], ["prod"]),
                helper.make_node("Neg", ["x"], ["neg"])],
               [f32("x", ["n", 3])], [f32("sum", ["n", 3]), f32("prod", ["n", 3]), f32("neg", ["n", 3])],
               [one, two]), os.path.join(out, "three_outputs.onnx"))
    # One elementwise output.
    save(model([helper.make_node("Neg", ["x"], ["y"])], [f32("x", ["n"])], [f32("y", ["n"])]),
         os.path.join(out, "negate.onnx"))
    # The same on an input of unknown rank (a 0-d array is a valid feed).
    save(model([helper.make_node("Neg", ["x"], ["y"])], [f32("x", None)], [f32("y", None)]),
         os.path.join(out, "neg_any_rank.onnx"))
    # ONNX Runtime-style calls (test_session_ort_style.py): a named, an unnamed and a fixed
    # dim, a scalar int64 input, three tensor outputs and a sequence output.
    save(model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["z"]),
                helper.make_node("Identity", ["n"], ["m"]), helper.make_node("SequenceConstruct", ["x", "x"], ["s"])],
               [f32("x", ["batch", None, 3]), helper.make_tensor_value_info("n", TensorProto.INT64, [])],
               [f32("y", ["batch", None, 3]), f32("z", ["batch", None, 3]),
                helper.make_tensor_value_info("m", TensorProto.INT64, []),
                helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["batch", None, 3])]),
         os.path.join(out, "ort_style.onnx"))
    # ONNX Runtime's session API (test_ort_api.py): model metadata, and a constant Add that
    # the optimiser folds (2 nodes without optimisation, 1 with).
    meta = model([helper.make_node("Add", ["one", "two"], ["three"]), helper.make_node("Mul", ["x", "three"], ["y"])],
                 [f32("x", ["n", 3])], [f32("y", ["n", 3])], [one, two])
    meta.domain, meta.doc_string, meta.model_version = "org.dlrt.tests", "multiplies by three", 7
    meta.graph.name, meta.graph.doc_string = "times_three", "x * (1 + 2)"
    helper.set_model_props(meta, {"author": "dlrt", "license": "MIT"})
    save(meta, os.path.join(out, "with_metadata.onnx"))
    # An output that is the input itself.
    save(model([helper.make_node("Identity", ["x"], ["y"])], [f32("x", ["n"])], [f32("y", ["n"])]),
         os.path.join(out, "identity.onnx"))
    # An output that is a constant of the model.
    table = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "table")
    save(model([helper.make_node("Identity", ["table"], ["t"]), helper.make_node("Neg", ["x"], ["y"])],
               [f32("x", [2])], [f32("t", [2, 3]), f32("y", [2])], [table]),
         os.path.join(out, "constant_output.onnx"))
    # Strings in and out.
    save(model([helper.make_node("Identity", ["s"], ["out"])],
               [helper.make_tensor_value_info("s", TensorProto.STRING, ["n"])],
               [helper.make_tensor_value_info("out", TensorProto.STRING, ["n"])]),
         os.path.join(out, "strings.onnx"))
    # Sum of every element: reads a large input once, allocates nothing large.
    save(model([helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0)], [f32("x", ["n"])], [f32("total", [])]),
         os.path.join(out, "reduce_sum.onnx"))
    # A MatMul long enough to see whether the GIL is held while it runs.
    save(model([helper.make_node("MatMul", ["a", "b"], ["c"])], [f32("a", ["m", "k"]), f32("b", ["k", "n"])],
               [f32("c", ["m", "n"])]), os.path.join(out, "matmul.onnx"))
    # int64 in, int64 out.
    save(model([helper.make_node("Add", ["i", "i"], ["doubled"])],
               [helper.make_tensor_value_info("i", TensorProto.INT64, [4])],
               [helper.make_tensor_value_info("doubled", TensorProto.INT64, [4])]),
         os.path.join(out, "int64_add.onnx"))
    # Outputs over a constant's storage (a view of it) or over another output's
    # (test_output_aliases.py): each must come back as an independent array.
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    i64 = TensorProto.INT64
    save(model([helper.make_node("Reshape", ["w", "s"], ["y"])], [helper.make_tensor_value_info("s", i64, [2])],
               [f32("y", None)], [w]), os.path.join(out, "reshape_init.onnx"))
    save(model([helper.make_node("Unsqueeze", ["w", "a"], ["y"])], [helper.make_tensor_value_info("a", i64, [1])],
               [f32("y", None)], [w]), os.path.join(out, "unsqueeze_init.onnx"))
    branches = {b: helper.make_graph([helper.make_node("Identity", ["w"], [b])], b, [], [f32(b, None)])
                for b in ("then_out", "else_out")}
    save(model([helper.make_node("If", ["c"], ["y"], then_branch=branches["then_out"],
                                 else_branch=branches["else_out"])],
               [helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [f32("y", None)], [w]),
         os.path.join(out, "if_init.onnx"))
    save(model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Identity", ["y"], ["z"])],
               [f32("x", [6])], [f32("y", [6]), f32("z", [6])]), os.path.join(out, "two_outputs.onnx"))
    # DictVectorizer (ai.onnx.ml) over a string-keyed and an int64-keyed map of floats.
    for name, key_type, vocabulary in [("dictvec_str", TensorProto.STRING, {"string_vocabulary": ["a", "b", "c"]}),
                                       ("dictvec_int", i64, {"int64_vocabulary": [1, 2, 3]})]:
        map_type = TypeProto()  # helper.make_map_type_proto is newer than Debian's onnx
        map_type.map_type.key_type = key_type
        map_type.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
        x = helper.make_value_info("x", map_type)
        graph = helper.make_graph([helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", **vocabulary)],
                                  name, [x], [f32("y", None)])
        m = helper.make_model(graph, producer_name="dlrt-tests",
                              opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", 1)])
        m.ir_version = 8
        save(m, os.path.join(out, name + ".onnx"))
    with open(os.path.join(out, "STAMP"), "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
