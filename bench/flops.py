#!/usr/bin/env python3
"""FLOP count of an ONNX model at given input shapes (1 multiply-add = 2 FLOP).

  flops.py MODEL.onnx [NAME=D0xD1x... | NAME=FILE.npy]...   -> prints one JSON object

Counts the ops that carry the compute: Conv (grouped and depthwise included),
ConvTranspose, MatMul and Gemm, as 2 x (output elements) x (reduction length). Element-wise
ops, Softmax and normalisations are left out (memory-bound, about 1% of these models'
FLOP). Shapes come from ONNX shape inference (with data propagation) once the inputs are
fixed to the given shapes (dims not given default to 1); the shapes it cannot resolve
(e.g. Reshape targets computed from Shape ops in transformer exports) are taken from one
ONNX Runtime run with extra graph outputs, when onnxruntime is importable (zeros for
inputs given as dims). Needs onnx and numpy (and onnxruntime for transformers).
Exit status 1 when some node's shapes stayed unknown (those nodes are listed).
"""
import json
import sys

import numpy as np
import onnx
from onnx import shape_inference


def dims_of(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        else:
            return None
    return out


def shapes_from_ort(model, names, shapes, files):
    """Shapes of the values `names` from one ONNX Runtime run ({} without onnxruntime)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return {}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(onnx.ValueInfoProto(name=n))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    np_types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32,
                "tensor(double)": np.float64, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}
    feeds = {}
    for i in sess.get_inputs():
        if i.name in files:
            feeds[i.name] = files[i.name]
        else:
            dims = shapes.get(i.name) or [d if isinstance(d, int) else 1 for d in i.shape]
            feeds[i.name] = np.zeros(dims, dtype=np_types.get(i.type, np.float32))
    outs = sess.run(names, feeds)
    return {n: list(o.shape) for n, o in zip(names, outs)}


def main(argv):
    if len(argv) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(argv[0])
    shapes = {}
    files = {}
    for a in argv[1:]:
        name, _, dims = a.partition("=")
        if dims.endswith(".npy"):
            files[name] = np.load(dims)
            shapes[name] = list(files[name].shape)
        else:
            shapes[name] = [int(x) for x in dims.split("x")] if dims else []
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    for inp in g.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        want = shapes.get(inp.name)
        for k, d in enumerate(tt.shape.dim):
            v = want[k] if want is not None else (d.dim_value if d.HasField("dim_value") else 1)
            d.Clear()
            d.dim_value = v
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    known = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        d = dims_of(vi)
        if d is not None:
            known[vi.name] = d
    for name, t in inits.items():
        known[name] = list(t.dims)
    missing = set()
    for n in inferred.graph.node:
        if n.op_type in ("Conv", "ConvTranspose", "MatMul", "Gemm"):
            missing.update(v for v in list(n.input[:2]) + [n.output[0]] if v and v not in known)
    if missing:
        known.update(shapes_from_ort(model, sorted(missing), shapes, files))

    by_op = {}
    unknown = []
    for n in inferred.graph.node:
        f = None
        if n.op_type in ("Conv", "ConvTranspose"):
            w, y = known.get(n.input[1]), known.get(n.output[0])
            if w is not None and y is not None:
                group = 1
                for a in n.attribute:
                    if a.name == "group":
                        group = a.i
                if n.op_type == "Conv":
                    # y: N, M, spatial...; w: M, C/group, k...
                    f = 2 * int(np.prod(y)) * int(np.prod(w[1:]))
                else:
                    x = known.get(n.input[0])
                    # each input element multiplies a (M/group x k...) kernel
                    f = 2 * int(np.prod(x)) * int(np.prod(w[1:])) if x is not None else None
        elif n.op_type == "MatMul":
            a, y = known.get(n.input[0]), known.get(n.output[0])
            if a is not None and y is not None:
                f = 2 * int(np.prod(y)) * a[-1]
        elif n.op_type == "Gemm":
            a, y = known.get(n.input[0]), known.get(n.output[0])
            trans_a = any(x.name == "transA" and x.i for x in n.attribute)
            if a is not None and y is not None:
                k = a[0] if trans_a else a[1]
                f = 2 * int(np.prod(y)) * k
        else:
            continue
        if f is None:
            unknown.append(n.name or n.op_type)
            continue
        by_op[n.op_type] = by_op.get(n.op_type, 0) + f
    total = sum(by_op.values())
    print(json.dumps({"model": argv[0], "shapes": shapes, "flop": total, "gflop": total / 1e9,
                      "by_op": by_op, "unknown_nodes": unknown}))
    return 0 if not unknown else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
