"""Int8 references that do not depend on the CPU that makes them.

ONNX Runtime multiplies uint8 x int8 with VPMADDUBSW on x86 CPUs without VNNI:
each pair of adjacent products is summed into a saturating int16, so a pair
above 32767 (255 x 127 x 2 = 64770) comes out wrong, and so do its outputs on
such a CPU. Its uint8 x uint8 kernels widen both operands to 16 bits
(VPMADDWD) and are exact everywhere. So:

- probe() runs tiny models whose uint8 x int8 pair sums exceed int16 through
  this ONNX Runtime (MatMulInteger, a QLinearConv with per-channel symmetric
  weights, a depthwise QLinearConv) and compares them with the exact integer
  answer: it says whether ONNX Runtime saturates on this CPU, and checks that
  the uint8-weight form of the same models is exact here;
- to_uint8_weights() rewrites a model so that every int8 weight of an integer
  product (and every int8 DequantizeLinear initializer of a QDQ graph) is
  stored as uint8 + 128 with its zero point + 128: (w - zp) is unchanged, so
  the model means the same, and ONNX Runtime runs it through its exact uint8 x
  uint8 kernels. On a CPU where ONNX Runtime is exact both forms give the same
  bits (reference_outputs() checks that each time); where it saturates, the
  rewritten model's outputs are the reference.

DLRT_INT8_REFERENCE=uint8-weights makes the consumers act as on a saturating
CPU (to test that path on any machine); the probe itself always measures.
"""
import os
import platform

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# The weight input and its zero point's input index, per integer-product op.
WEIGHT_INPUTS = {
    ("", "MatMulInteger"): (1, 3),
    ("", "ConvInteger"): (1, 3),
    ("", "QLinearConv"): (3, 5),
    ("", "QLinearMatMul"): (3, 5),
    ("com.microsoft", "QGemm"): (3, 5),
    ("com.microsoft", "DynamicQuantizeMatMul"): (1, 3),
    ("com.microsoft", "MatMulIntegerToFloat"): (1, 5),
    ("com.microsoft", "QAttention"): (1, 7),
}


def cpu_name():
    """The CPU's model name and whether it has VNNI, for the logs."""
    name, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    name = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    vnni = [f for f in ("avx512_vnni", "avx_vnni") if f in flags]
    return f"{name} ({', '.join(vnni) if vnni else 'no VNNI'})"


def vpmaddubsw_matmul(a, b):
    """A (M x K, uint8) x B (K x N, int8) as VPMADDUBSW + VPMADDWD compute it:
    adjacent k pairs summed into a saturating int16, then summed exactly."""
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    k = a.shape[1]
    if k % 2:
        a = np.pad(a, ((0, 0), (0, 1)))
        b = np.pad(b, ((0, 1), (0, 0)))
    prod = a[:, :, None] * b[None, :, :]                      # M x K x N
    pairs = prod[:, 0::2, :] + prod[:, 1::2, :]
    return np.clip(pairs, -32768, 32767).sum(axis=1)


def _probe_models():
    """[(name, model, feeds, exact outputs)]: pair sums of 255 x 127 x 2."""
    rng = np.random.default_rng(81)
    out = []
    # MatMulInteger: K 64, rows of 255 and random bytes, columns of 127 / -128 and random.
    m, k, n = 4, 64, 16
    a = rng.integers(0, 256, size=(m, k)).astype(np.uint8)
    a[0] = 255
    b = rng.integers(-128, 128, size=(k, n)).astype(np.int8)
    b[:, 0] = 127
    b[:, 1] = -128
    g = helper.make_graph([helper.make_node("MatMulInteger", ["a", "b"], ["y"])], "probe_mmi",
                          [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])],
                          [numpy_helper.from_array(b, "b")])
    out.append(("MatMulInteger", helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), {"a": a},
                a.astype(np.int64) @ b.astype(np.int64)))
    # QLinearConv, 3x3 (per-channel symmetric weights, ONNX Runtime's symmetric conv kernels) and
    # depthwise 3x3; outputs scaled so that a saturated sum lands far from the exact one.
    for name, c_in, group in (("QLinearConv", 16, 1), ("depthwise QLinearConv", 16, 16)):
        c_out = 16
        x = rng.integers(200, 256, size=(1, c_in, 6, 6)).astype(np.uint8)
        w = rng.integers(100, 128, size=(c_out, c_in // group, 3, 3)).astype(np.int8)
        acc = np.zeros((1, c_out, 4, 4), dtype=np.int64)
        for o in range(c_out):
            ci = range(c_in) if group == 1 else [o]
            for y in range(4):
                for xx in range(4):
                    acc[0, o, y, xx] = sum(int((x[0, c, y:y + 3, xx:xx + 3].astype(np.int64) *
                                                w[o, c if group == 1 else 0].astype(np.int64)).sum()) for c in ci)
        y_scale = float(acc.max()) / 250.0
        y_ref = np.clip(np.rint(acc / y_scale), 0, 255).astype(np.uint8)
        inits = [numpy_helper.from_array(np.array(1.0, np.float32), "xs"),
                 numpy_helper.from_array(np.array(0, np.uint8), "xz"), numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(np.ones(c_out, np.float32), "ws"),
                 numpy_helper.from_array(np.zeros(c_out, np.int8), "wz"),
                 numpy_helper.from_array(np.array(y_scale, np.float32), "ys"),
                 numpy_helper.from_array(np.array(0, np.uint8), "yz")]
        node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], group=group)
        g = helper.make_graph([node], "probe_conv", [helper.make_tensor_value_info("x", TensorProto.UINT8,
                                                                                  list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, list(y_ref.shape))], inits)
        out.append((name, helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), {"x": x}, y_ref))
    return out


def _run(ort, model, feeds):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def _off(got, want):
    """How far got is from want (integer steps); a requantized output may differ by one in rounding."""
    return int(np.abs(got.astype(np.int64) - want.astype(np.int64)).max())


_PROBE = None


def probe(ort):
    """{"saturates": bool, "cpu": str, "detail": str} for this ONNX Runtime on this CPU (cached).
    Raises when even the uint8-weight form is not exact here (no exact reference can be made)."""
    global _PROBE
    if _PROBE is not None:
        return _PROBE
    bad, notes = [], []
    for name, model, feeds, want in _probe_models():
        off = _off(_run(ort, model, feeds), want)
        u8_off = _off(_run(ort, to_uint8_weights(model)[0], feeds), want)
        tol = 0 if want.dtype == np.int64 else 1
        if u8_off > tol:
            raise RuntimeError(f"int8 probe: onnxruntime {ort.__version__} on {cpu_name()} is not exact even with "
                               f"uint8 weights ({name}: {u8_off} steps off)")
        notes.append(f"{name} {off} steps off")
        if off > tol:
            bad.append(name)
    _PROBE = {"saturates": bool(bad), "cpu": cpu_name(),
              "detail": f"onnxruntime {ort.__version__} uint8 x int8: " + ", ".join(notes)}
    return _PROBE


def use_uint8_weights(ort):
    """Whether references of int8-weight models come from their uint8-weight form here."""
    forced = os.environ.get("DLRT_INT8_REFERENCE", "")
    if forced not in ("", "auto", "uint8-weights", "as-is"):
        raise SystemExit(f"DLRT_INT8_REFERENCE={forced!r}: expected auto, uint8-weights or as-is")
    p = probe(ort)
    if forced == "as-is" and p["saturates"]:
        raise SystemExit("DLRT_INT8_REFERENCE=as-is: onnxruntime saturates on this CPU, its int8 outputs are no "
                         "reference (" + p["detail"] + ")")
    return forced == "uint8-weights" or p["saturates"]


def to_uint8_weights(model):
    """(copy of model with its int8 product weights as uint8 + 128, number of weights rewritten)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name: i for i in m.graph.initializer}
    made = {}

    def shifted(name, shape_like=None):
        """The uint8 + 128 copy of int8 initializer `name` (or 128 when name is empty)."""
        if name in made:
            return made[name]
        if not name:
            arr = np.array(128, dtype=np.uint8)
        else:
            arr = (numpy_helper.to_array(inits[name]).astype(np.int16) + 128).astype(np.uint8)
        new = f"{name or 'zero_point'}_as_uint8_{len(made)}"
        m.graph.initializer.append(numpy_helper.from_array(arr, new))
        made[name] = new
        return new

    def is_int8_init(name):
        return name in inits and inits[name].data_type == TensorProto.INT8

    count = 0
    for n in m.graph.node:
        key = (n.domain if n.domain != "ai.onnx" else "", n.op_type)
        if key in WEIGHT_INPUTS:
            w, z = WEIGHT_INPUTS[key]
            if len(n.input) <= w or not is_int8_init(n.input[w]):
                continue
            zp = n.input[z] if len(n.input) > z else ""
            if zp and not is_int8_init(zp):
                raise ValueError(f"{n.op_type} {n.name}: weight zero point {zp} is not an int8 initializer")
            while len(n.input) <= z:
                n.input.append("")
            n.input[z] = shifted(zp)
            n.input[w] = shifted(n.input[w])
            count += 1
        elif key == ("", "DequantizeLinear") and is_int8_init(n.input[0]):
            if len(n.input) < 3 or not n.input[2]:
                while len(n.input) < 3:
                    n.input.append("")
            elif not is_int8_init(n.input[2]):
                raise ValueError(f"DequantizeLinear {n.name}: zero point {n.input[2]} is not an int8 initializer")
            zp = n.input[2]
            if not zp:  # a per-axis scale needs a zero point of its shape
                scale = numpy_helper.to_array(inits[n.input[1]]) if n.input[1] in inits else np.zeros(())
                arr = np.full(scale.shape, 128, dtype=np.uint8)
                new = f"{n.input[0]}_zero_point_as_uint8_{len(made)}"
                m.graph.initializer.append(numpy_helper.from_array(arr, new))
                made[new] = new
                n.input[2] = new
            else:
                n.input[2] = shifted(zp)
            n.input[0] = shifted(n.input[0])
            count += 1
    # Initializers now unused (the int8 originals) go, so the model keeps its size.
    used = {i for n in m.graph.node for i in n.input} | {o.name for o in m.graph.output}
    used |= {i for n in m.graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH
             for sn in a.g.node for i in sn.input}
    keep = [i for i in m.graph.initializer if i.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    return m, count


def reference_outputs(ort, model_path, run, log=None):
    """The reference outputs of the model at model_path as `run(path) -> {name: array}` computes them with
    this ONNX Runtime, made independent of the CPU: for a model with int8 product weights, from its
    uint8-weight form where ONNX Runtime saturates (or DLRT_INT8_REFERENCE=uint8-weights), else as today,
    checking there that the uint8-weight form gives the same bits. Returns (outputs, note for the manifest)."""
    model = onnx.load(model_path)
    rewritten, count = to_uint8_weights(model)
    if count == 0:
        return run(model_path), None
    u8_path = model_path + ".uint8_weights.onnx"
    onnx.save(rewritten, u8_path)
    try:
        u8 = run(u8_path)
        p = probe(ort)
        if use_uint8_weights(ort):
            note = (f"{count} int8 weights as uint8 + 128 (exact uint8 x uint8 kernels); onnxruntime on "
                    f"{p['cpu']} " + ("saturates" if p["saturates"] else "is exact (DLRT_INT8_REFERENCE)"))
            if log:
                log(f"{os.path.basename(model_path)}: reference from its uint8-weight form ({note})")
            return u8, note
        got = run(model_path)
        for k, v in got.items():
            if not np.array_equal(v, u8[k]):
                diff = float(np.abs(v.astype(np.float64) - u8[k].astype(np.float64)).max())
                raise RuntimeError(f"{model_path}: output {k} of the uint8-weight form differs from the model's "
                                   f"own by {diff} on {p['cpu']}, where onnxruntime is exact")
        return got, f"{count} int8 weights; same bits as the uint8-weight form on {p['cpu']}"
    finally:
        os.remove(u8_path)


def summary(ort):
    """One line for the logs: what this CPU's ONNX Runtime does with uint8 x int8, and what the int8 references
    are made from."""
    p = probe(ort)
    if use_uint8_weights(ort):
        how = ("saturates" if p["saturates"] else "is exact, but DLRT_INT8_REFERENCE=uint8-weights") + \
              ": int8-weight models' references come from their uint8-weight form"
    else:
        how = "is exact: int8 references are its outputs (checked against the uint8-weight form)"
    return f"int8 references: onnxruntime on {p['cpu']} {how} [{p['detail']}]"
