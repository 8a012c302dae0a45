#!/usr/bin/env python3
"""zoo_skeleton.py - weight-free "skeletons" of the model zoo, and the models regenerated from them.

The zoo (shared/models, ~240 MiB of random weights that do not compress) cannot travel to a lent GPU
machine (scripts/gpu_kit.sh, scripts/gpu_check.sh). A skeleton keeps each model's graph exactly and
drops the bulk of the weights:

  make    ZOO_DIR SKEL_DIR [--only a,b]
      SKEL_DIR/<model>.onnx: the graph with every float initializer of more than 1 KiB and rank >= 2
      emptied (dims kept); integer, small and 1-D initializers (biases, LayerNorm) are kept.
      SKEL_DIR/<model>.stats.json: for each emptied tensor its dtype, shape, mean, std, min, max and
      (dim 0 <= 4096) the mean and std of each slice along dim 0 (a Conv's output channels).
      Calibration (needs ONNX Runtime and the zoo's sample inputs, manifest.json): random weights under
      the folded-BatchNorm biases drift (the CNNs' logits reach 1e3-1e4 and gates saturate, which would
      hide kernel bugs). So `make` regenerates the weights exactly as `inflate` will, then rescales each
      regenerated Conv/Gemm per output channel, layer by layer, until its output's per-channel mean and
      std on the model's first sample input match the original model's; the per-channel weight scales
      go into stats.json and the recomputed biases into the skeleton. It also records the sha256 of the
      regenerated model, so `inflate` can tell whether it produced the same bytes.
  inflate SKEL_DIR OUT_DIR [--only a,b]
      OUT_DIR/<model>.onnx: each emptied tensor filled with normal(mean, std) per slice, clipped to
      [min, max] (an all-positive tensor stays positive), numpy PCG64 seeded from the model and tensor
      name, times the calibration scales. Only numpy and onnx; about 1 s for the whole zoo.

The regenerated models have the zoo's graphs, shapes and activation scales but not its weights, so their
outputs differ from the zoo's expected/*.npy: compare against a reference computed on the regenerated
model (gpu_check.py uses ONNX Runtime on the CPU).
"""
import argparse
import hashlib
import json
import os
import sys
import time
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

KEEP_BYTES = 1024        # float initializers up to this size are kept verbatim
KEEP_1D_BYTES = 1 << 16  # 1-D float initializers (biases, norms) up to this size are kept verbatim
MAX_ROWS = 4096          # per-slice statistics when dim 0 is at most this
FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}
CALIB_OPS = ("Conv", "Gemm")


def _g5(v):
    return float(f"{float(v):.5g}")


def _models(zoo, only):
    names = sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".onnx"))
    if only:
        want = only.split(",")
        names = [n for n in names if n in want]
    return names


def _sha256_model(m):
    return hashlib.sha256(m.SerializeToString()).hexdigest()


def _stats(a):
    a64 = a.astype(np.float64)
    s = {"dtype": str(a.dtype), "shape": list(a.shape), "mean": float(a64.mean()), "std": float(a64.std()),
         "min": float(a64.min()), "max": float(a64.max())}
    if a.ndim >= 2 and 1 < a.shape[0] <= MAX_ROWS:
        rows = a64.reshape(a.shape[0], -1)
        s["row_mean"] = [_g5(v) for v in rows.mean(axis=1)]
        s["row_std"] = [_g5(v) for v in rows.std(axis=1)]
    return s


def _regen(model, tname, s):
    rng = np.random.default_rng(zlib.crc32(f"{model}/{tname}".encode()))
    shape = tuple(s["shape"])
    n = int(np.prod(shape))
    if "row_mean" in s:
        per = n // shape[0]
        mean = np.repeat(np.asarray(s["row_mean"], np.float64), per)
        std = np.repeat(np.asarray(s["row_std"], np.float64), per)
        a = rng.standard_normal(n) * std + mean
    else:
        a = rng.standard_normal(n) * s["std"] + s["mean"]
    a = np.clip(a, s["min"], s["max"]).reshape(shape)
    if "scale" in s:  # calibration: per output channel
        shp = [1] * len(shape)
        shp[s["scale_axis"]] = -1
        a = a * np.asarray(s["scale"], np.float64).reshape(shp)
    return a.astype(np.dtype(s["dtype"]))


def _fill(name, m, stats):
    for i, t in enumerate(m.graph.initializer):
        if t.name in stats:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(_regen(name, t.name, stats[t.name]), t.name))
    return m


# ----------------------------------------------------------------------------- calibration (make only)
def _case_feeds(zoo, name):
    man = json.load(open(os.path.join(zoo, "manifest.json")))["models"][name]
    case, ce = next(iter(man["cases"].items()))
    return case, {k: np.load(os.path.join(zoo, v)) for k, v in ce["inputs"].items()}


def _calib_nodes(m, regenerated):
    """{output name: (weight, bias or None, out-channel axis)} for each Conv/Gemm whose weight is regenerated
    and whose bias (if any) is an initializer; and each one's depth in the DAG of such nodes."""
    inits = {t.name for t in m.graph.initializer}
    nodes = {}
    for n in m.graph.node:
        if n.op_type not in CALIB_OPS or len(n.input) < 2 or n.input[1] not in regenerated:
            continue
        b = n.input[2] if len(n.input) > 2 and n.input[2] else None
        if b is not None and b not in inits:
            continue
        axis = 0
        if n.op_type == "Gemm":
            if any(a.name == "transA" and a.i for a in n.attribute):
                continue
            axis = 0 if any(a.name == "transB" and a.i for a in n.attribute) else 1
        nodes[n.output[0]] = (n.input[1], b, axis)
    producer = {o: n for n in m.graph.node for o in n.output}
    depth = {}

    def calib_preds(value, seen):
        """calib-node outputs reachable upstream of VALUE without passing through another calib node"""
        out = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            n = producer.get(v)
            if n is None:
                continue
            for i in n.input:
                if i in nodes:
                    out.add(i)
                elif i:
                    stack.append(i)
        return out

    for n in m.graph.node:  # graph order is topological
        o = n.output[0] if n.output else None
        if o in nodes:
            preds = calib_preds(o, set())
            depth[o] = 1 + max((depth.get(p, 0) for p in preds), default=0)
    return nodes, depth


def _channel_stats(m, outputs, feeds):
    """Per-channel (axis 1) mean and std of the named values of model M on FEEDS, with ONNX Runtime."""
    import onnxruntime as ort
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    have = {o.name for o in m2.graph.output}
    for name in outputs:
        if name not in have:
            m2.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
            m2.graph.output[-1].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(m2.SerializeToString(), so, providers=["CPUExecutionProvider"])
    res = {}
    for name, v in zip(outputs, sess.run(list(outputs), feeds)):
        v = v.astype(np.float64)
        flat = np.moveaxis(v, 1, 0).reshape(v.shape[1], -1) if v.ndim >= 2 else v.reshape(1, -1)
        res[name] = (flat.mean(axis=1), flat.std(axis=1))
    return res


def _calibrate(name, m_skel, stats, orig, feeds):
    """Layer by layer (grouped by depth), set per-channel weight scales (in STATS) and biases (in M_SKEL)."""
    nodes, depth = _calib_nodes(m_skel, stats)
    if not nodes:
        return 0, 0
    target = _channel_stats(orig, list(nodes), feeds)
    skel_arrays = {t.name: t for t in m_skel.graph.initializer}
    levels = sorted(set(depth.values()))
    for lv in levels:
        outs = [o for o in nodes if depth[o] == lv]
        m = _fill(name, _copy(m_skel), stats)
        got = _channel_stats(m, outs, feeds)
        for o in outs:
            wname, bname, axis = nodes[o]
            mu, sd = got[o]
            tmu, tsd = target[o]
            scale = np.where(sd > 1e-20, tsd / np.maximum(sd, 1e-20), 1.0)
            old = np.asarray(stats[wname].get("scale", np.ones_like(scale)), np.float64)
            stats[wname]["scale"] = [float(np.float32(v)) for v in old * scale]
            stats[wname]["scale_axis"] = axis
            if bname is not None:
                b = numpy_helper.to_array(skel_arrays[bname]).astype(np.float64)
                b = (b - mu) * scale + tmu
                skel_arrays[bname].CopyFrom(numpy_helper.from_array(b.astype(
                    numpy_helper.to_array(skel_arrays[bname]).dtype), bname))
    return len(nodes), len(levels)


def _copy(m):
    c = onnx.ModelProto()
    c.CopyFrom(m)
    return c


def make(zoo, out, only=None, calibrate=True):
    os.makedirs(out, exist_ok=True)
    for name in _models(zoo, only):
        t0 = time.time()
        orig = onnx.load(os.path.join(zoo, name + ".onnx"))
        m = _copy(orig)
        stats = {}
        for t in m.graph.initializer:
            if t.data_type not in FLOAT_TYPES or t.data_location == onnx.TensorProto.EXTERNAL:
                continue
            a = numpy_helper.to_array(t)
            if a.nbytes <= KEEP_BYTES or (a.ndim <= 1 and a.nbytes <= KEEP_1D_BYTES):
                continue
            stats[t.name] = _stats(a)
            dims = list(t.dims)
            for field in ("raw_data", "float_data", "double_data", "int32_data"):
                t.ClearField(field)
            del t.dims[:]
            t.dims.extend(dims)
        note = ""
        if calibrate:
            case, feeds = _case_feeds(zoo, name)
            n, levels = _calibrate(name, m, stats, orig, feeds)
            if n:
                note = f", {n} Conv/Gemm calibrated on {case} in {levels} levels"
        sha = _sha256_model(_fill(name, _copy(m), stats))
        onnx.save(m, os.path.join(out, name + ".onnx"))
        with open(os.path.join(out, name + ".stats.json"), "w") as f:
            json.dump({"model": name, "inflated_sha256": sha, "initializers": stats}, f, separators=(",", ":"))
        print(f"skeleton {name}: {len(stats)} initializers emptied{note}, "
              f"{os.path.getsize(os.path.join(out, name + '.onnx'))} + "
              f"{os.path.getsize(os.path.join(out, name + '.stats.json'))} bytes ({time.time() - t0:.1f} s)",
              flush=True)


def inflate(skel, out, only=None):
    """Returns {model: {"path", "sha256_matches"}}."""
    os.makedirs(out, exist_ok=True)
    done = {}
    for name in _models(skel, only):
        t0 = time.time()
        m = onnx.load(os.path.join(skel, name + ".onnx"))
        with open(os.path.join(skel, name + ".stats.json")) as f:
            meta = json.load(f)
        _fill(name, m, meta["initializers"])
        same = _sha256_model(m) == meta.get("inflated_sha256")
        path = os.path.join(out, name + ".onnx")
        onnx.save(m, path)
        done[name] = {"path": path, "sha256_matches": same}
        print(f"inflated {name}: {len(meta['initializers'])} initializers regenerated, "
              f"{os.path.getsize(path)} bytes, {'same bytes as at kit build' if same else 'DIFFERENT bytes from kit build (numpy/onnx version?)'} "
              f"({time.time() - t0:.1f} s)", flush=True)
    return done


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["make", "inflate"])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-calibrate", action="store_true", help="make: skip the calibration (no ONNX Runtime)")
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.src, a.dst, a.only or None, not a.no_calibrate)
    else:
        inflate(a.src, a.dst, a.only or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
