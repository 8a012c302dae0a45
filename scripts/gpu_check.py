#!/usr/bin/env python3
"""gpu_check.py - the CUDA backend's verification on a lent GPU machine (issue 42, deliverable 5).

Run by scripts/gpu_check.sh, which unpacks the kit (scripts/gpu_kit.sh), sets up the dlrt wrapper and
OpenCL, and picks the pythons. Steps, each recorded in OUT/gpu_check.json as it finishes (a failing model,
case or backend is recorded and the rest go on; every subprocess has a timeout; the whole run keeps to
--budget-s):

  1. environment: nvidia-smi (GPU name, driver), `dlrt devices` and `--json`; if the CUDA backend is
     unavailable and the pip wheels' library folders exist, retry with DLRT_CUDA_LIB_PATH set to them;
  2. regenerate the zoo's models from the kit's skeletons (zoo_skeleton.py inflate);
  3. reference outputs with ONNX Runtime (CPU) for every model and case;
  4. correctness: `dlrt run MODEL --device D --strict --input ... --output-dir` for every case, compared
     with the reference: pass when |dlrt - ref| <= 1e-4 * max|ref| + 1e-3 * |ref| everywhere;
     first on the first device of --run-devices (cuda), the others (cpu) last;
  5. batch 8: PyTorch eager (fp32, TF32 off, CUDA events, median) and `dlrt bench` on the same inputs for
     minilm_l6 b8 s128 (the zoo's b8s128 case) and resnet18 b8;
  6. batch-1 latency: `dlrt bench --json` median for every model on each --bench-devices (cuda, opencl).

`gpu_check.py torch-bench ...` is the PyTorch part, run with the python that has torch (step 5).
`gpu_check.py summary OUT/gpu_check.json` prints the summary table again.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL_REL = 1e-3, 1e-4


# ----------------------------------------------------------------------------- helpers
class Run:
    def __init__(self, a):
        self.a = a
        self.t0 = time.time()
        self.deadline = self.t0 + a.budget_s
        self.res = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "config": vars(a).copy(),
                    "tolerance": {"rtol": RTOL, "atol": f"{ATOL_REL} * max|ref|"}, "env": {}, "models": {},
                    "correctness": {}, "bench_b1": {}, "b8": {}, "steps": {}}
        self.log_f = open(os.path.join(a.out, "gpu_check.log"), "a")
        self.timeouts = {}
        self.started = set()

    def log(self, msg, echo=False):
        line = f"[{time.time() - self.t0:6.1f}s] {msg}"
        self.log_f.write(line + "\n")
        self.log_f.flush()
        if echo:
            print(line, flush=True)

    def save(self):
        self.res["elapsed_s"] = round(time.time() - self.t0, 1)
        p = os.path.join(self.a.out, "gpu_check.json")
        with open(p + ".tmp", "w") as f:
            json.dump(self.res, f, indent=1, default=str)
        os.replace(p + ".tmp", p)

    def left(self):
        return self.deadline - time.time()

    def sh(self, cmd, timeout=120, env=None, key=None, later_timeout=60):
        """Run CMD (a list) with a timeout capped by the budget; returns dict(rc, out, err, s, timed_out).
        With KEY (e.g. run:cuda): the first call gets TIMEOUT (kernels compile into an empty cache), later
        ones LATER_TIMEOUT, and after 2 timeouts in a row the rest are skipped."""
        if key:
            if key in self.started:
                timeout = min(timeout, later_timeout)
            self.started.add(key)
        t = min(timeout, self.left() - 3)
        if key and self.timeouts.get(key, 0) >= 2:
            return {"rc": None, "skipped": f"{key}: skipped after 2 timeouts", "out": "", "err": "", "s": 0}
        if t < 3:
            return {"rc": None, "skipped": "time budget spent", "out": "", "err": "", "s": 0}
        t0 = time.time()
        self.log("$ " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=t, env=env)
            r = {"rc": p.returncode, "out": p.stdout, "err": p.stderr, "s": round(time.time() - t0, 2)}
            if key:
                self.timeouts[key] = 0
        except subprocess.TimeoutExpired as e:
            r = {"rc": None, "timed_out": True, "out": _s(e.stdout), "err": _s(e.stderr) + f"\n(timeout {t:.0f} s)",
                 "s": round(time.time() - t0, 2)}
            if key:
                self.timeouts[key] = self.timeouts.get(key, 0) + 1
        except OSError as e:
            r = {"rc": None, "out": "", "err": str(e), "s": 0}
        if r["rc"] != 0:
            self.log(f"  rc={r['rc']} after {r['s']} s; stderr: {r['err'][-1500:]}")
        return r


def _s(b):
    if b is None:
        return ""
    return b.decode(errors="replace") if isinstance(b, bytes) else b


def _err(r):
    if r.get("skipped"):
        return r["skipped"]
    tail = (r.get("err") or "").strip().splitlines()[-6:]
    return f"rc={r.get('rc')}{' (timeout)' if r.get('timed_out') else ''}: " + " | ".join(tail)[:600]


def _partitions(report):
    """Compact placement: {'backends': {backend: nodes}, 'partitions': n, 'degraded': [reasons]}"""
    out = {"backends": {}, "partitions": 0, "degraded": []}
    for p in report or []:
        out["partitions"] += 1
        b = f"{p.get('backend')}:{p.get('device')}"
        out["backends"][b] = out["backends"].get(b, 0) + int(p.get("node_count", 0))
        if p.get("degraded"):
            out["degraded"].append(str(p.get("reason", ""))[:300])
    return out


def _ms(v):
    return f"{v:.3f}" if isinstance(v, (int, float)) else str(v)


def _json_out(r):
    try:
        return json.loads(r["out"])
    except Exception:
        return None


# ----------------------------------------------------------------------------- steps
def step_env(R):
    import platform
    env = R.res["env"]
    env["host"] = platform.node()
    env["cpu_count"] = os.cpu_count()
    r = R.sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap,pci.bus_id",
              "--format=csv,noheader"], timeout=30)
    env["nvidia_smi"] = r["out"].strip() if r["rc"] == 0 else _err(r)
    r2 = R.sh(["nvidia-smi"], timeout=30)
    R.log("nvidia-smi:\n" + (r2["out"] or _err(r2)))
    R.log(f"GPU: {env['nvidia_smi']}", echo=True)
    for k in ("DLRT_CACHE_DIR", "DLRT_OPENCL_LIB", "OCL_ICD_VENDORS", "LD_LIBRARY_PATH", "DLRT_CUDA_LIB_PATH",
              "GPU_CHECK_OPENCL_NOTE", "GPU_CHECK_LIB_NOTE"):
        env[k] = os.environ.get(k)
    env["cuda_wheel_lib_dirs"] = R.a.cuda_wheel_dirs.split(":") if R.a.cuda_wheel_dirs else []
    r = R.sh([R.a.dlrt, "--version"], timeout=30)
    env["dlrt_version"] = r["out"].strip() if r["rc"] == 0 else _err(r)
    devices(R, "devices")
    cuda = env["devices"].get("backend_state", {}).get("cuda")
    if (R.a.cuda_backend_check and (cuda is None or not cuda.get("available")) and R.a.cuda_wheel_dirs
            and not os.environ.get("DLRT_CUDA_LIB_PATH")):
        os.environ["DLRT_CUDA_LIB_PATH"] = R.a.cuda_wheel_dirs
        R.log(f"cuda backend unavailable: retrying with DLRT_CUDA_LIB_PATH={R.a.cuda_wheel_dirs}", echo=True)
        devices(R, "devices_with_lib_path", refresh=True)
        cuda2 = env["devices_with_lib_path"].get("backend_state", {}).get("cuda")
        if cuda2 and cuda2.get("available"):
            env["DLRT_CUDA_LIB_PATH"] = os.environ["DLRT_CUDA_LIB_PATH"]
            R.log("  -> cuda available with DLRT_CUDA_LIB_PATH: kept for every later step", echo=True)
        else:
            del os.environ["DLRT_CUDA_LIB_PATH"]
            R.log("  -> still unavailable: DLRT_CUDA_LIB_PATH unset again", echo=True)
    R.save()


def devices(R, key, refresh=False):
    extra = ["--refresh"] if refresh else []
    r = R.sh([R.a.dlrt, "devices"] + extra, timeout=90)
    R.log(f"dlrt devices{' --refresh' if refresh else ''} (rc={r['rc']}):\n{r['out']}{r['err'][-3000:]}")
    text_tail = r["out"][-4000:]
    rj = R.sh([R.a.dlrt, "devices", "--json"] + extra, timeout=90)
    d = {"text": text_tail, "rc": r["rc"]}
    j = _json_out(rj)
    if j:
        d["json"] = j
        d["backend_state"] = {b.get("name"): {k: b.get(k) for k in ("available", "library_path", "version",
                                                                       "reason", "fix", "compatibility")}
                              for b in j.get("backends", [])}
        d["backend_devices"] = [{"spec": x.get("spec"), "type": x.get("type"),
                                 "name": x.get("metadata", {}).get("device_name") or x.get("metadata", {}).get("name"),
                                 "metadata": x.get("metadata")} for x in j.get("backend_devices", [])]
    else:
        d["json_error"] = _err(rj)
    R.res["env"][key] = d
    for name, st in d.get("backend_state", {}).items():
        msg = "available " + str(st.get("library_path") or "") + " " + str(st.get("version") or "") \
            if st.get("available") else "UNAVAILABLE: " + str(st.get("reason") or "")[:400]
        R.log(f"  backend {name:9s} {msg}", echo=True)
    for x in d.get("backend_devices", []):
        R.log(f"  device  {x['spec']:12s} {x['type']:5s} {x.get('name') or ''}", echo=True)


def step_models(R):
    sys.path.insert(0, HERE)
    import zoo_skeleton
    t0 = time.time()
    os.makedirs(R.a.models_dir, exist_ok=True)
    try:
        done = zoo_skeleton.inflate(os.path.join(R.a.kit, "skel"), R.a.models_dir, R.a.models or None)
    except Exception as e:
        R.res["steps"]["models"] = f"FAILED: {type(e).__name__}: {e}"
        R.log(R.res["steps"]["models"], echo=True)
        return
    man = json.load(open(os.path.join(R.a.kit, "zoo", "manifest.json")))["models"]
    for name, info in done.items():
        e = man[name]
        R.res["models"][name] = {"path": info["path"], "same_bytes_as_kit_build": info["sha256_matches"],
                                 "inputs": e["inputs"], "outputs": e["outputs"], "cases": list(e["cases"])}
    R.res["steps"]["models"] = f"{len(done)} models regenerated in {time.time() - t0:.1f} s"
    R.log(R.res["steps"]["models"], echo=True)
    R.save()


def case_inputs(R, name, case):
    man = json.load(open(os.path.join(R.a.kit, "zoo", "manifest.json")))["models"][name]
    return {k: os.path.join(R.a.kit, "zoo", v) for k, v in man["cases"][case]["inputs"].items()}


def step_refs(R):
    import numpy as np
    import onnxruntime as ort
    t0 = time.time()
    n = 0
    for name, m in R.res["models"].items():
        m["ref"] = {}
        try:
            so = ort.SessionOptions()
            so.log_severity_level = 3
            sess = ort.InferenceSession(m["path"], so, providers=["CPUExecutionProvider"])
        except Exception as e:
            m["ref_error"] = f"{type(e).__name__}: {e}"[:500]
            R.log(f"ORT {name}: {m['ref_error']}", echo=True)
            continue
        for case in m["cases"]:
            try:
                feeds = {k: np.load(p) for k, p in case_inputs(R, name, case).items()}
                outs = sess.run(m["outputs"], feeds)
                d = os.path.join(R.a.work, "ref", name, case)
                os.makedirs(d, exist_ok=True)
                m["ref"][case] = {}
                for o, v in zip(m["outputs"], outs):
                    np.save(os.path.join(d, o + ".npy"), v)
                    m["ref"][case][o] = {"path": os.path.join(d, o + ".npy"), "shape": list(v.shape),
                                         "max_abs": float(np.max(np.abs(v))) if v.size else 0.0,
                                         "finite": bool(np.isfinite(v).all())}
                n += 1
            except Exception as e:
                m["ref"][case] = {"error": f"{type(e).__name__}: {e}"[:500]}
                R.log(f"ORT {name}/{case}: {m['ref'][case]['error']}", echo=True)
        if R.left() < 30:
            break
    R.res["steps"]["refs"] = f"{n} references (ONNX Runtime {ort.__version__} CPU) in {time.time() - t0:.1f} s"
    R.log(R.res["steps"]["refs"], echo=True)
    R.save()


def compare(ref, got):
    import numpy as np
    if got.shape != ref.shape:
        return {"pass": False, "error": f"shape {list(got.shape)} != reference {list(ref.shape)}"}
    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    scale = float(np.max(np.abs(r))) if r.size else 0.0
    nan_r, nan_g = ~np.isfinite(r), ~np.isfinite(g)
    d = np.abs(g - r)
    d[nan_r & nan_g] = 0.0
    d[nan_r ^ nan_g] = np.inf
    atol = ATOL_REL * scale
    ok = bool(np.all(d <= atol + RTOL * np.abs(np.where(nan_r, 0, r))))
    max_abs = float(np.max(d)) if d.size else 0.0
    rel = d / (np.abs(r) + max(atol, 1e-30))
    return {"pass": ok, "max_abs_err": max_abs, "max_abs_ref": scale,
            "err_over_max_ref": max_abs / scale if scale > 0 else max_abs,
            "max_rel_err": float(np.max(rel)) if rel.size else 0.0,
            "nan_mismatch": int(np.sum(nan_r ^ nan_g))}


def step_correctness(R, dev):
    import numpy as np
    spec = dev
    res = R.res["correctness"].setdefault(dev, {})
    t0 = time.time()
    for name, m in R.res["models"].items():
        for case in m["cases"]:
            key = f"{name}/{case}"
            ref = m.get("ref", {}).get(case)
            if not ref or "error" in ref:
                res[key] = {"pass": False, "error": "no reference"}
                continue
            od = os.path.join(R.a.work, "out", dev, name, case)
            shutil.rmtree(od, ignore_errors=True)
            os.makedirs(od)
            cmd = [R.a.dlrt, "run", m["path"], "--device", spec, "--strict", "--output-dir", od, "--json"]
            for k, p in case_inputs(R, name, case).items():
                cmd += ["--input", f"{k}={p}"]
            r = R.sh(cmd, timeout=120, key=f"run:{dev}")
            entry = {"s": r["s"]}
            if r["rc"] != 0:
                entry.update({"pass": False, "error": _err(r)})
            else:
                j = _json_out(r) or {}
                entry["placement"] = _partitions(j.get("report"))
                entry["timings_ms"] = j.get("timings_ms")
                entry["outputs"] = {}
                ok = True
                for o in m["outputs"]:
                    f = os.path.join(od, o.replace("/", "_") + ".npy")
                    if not os.path.exists(f):
                        cand = [x for x in os.listdir(od) if x.endswith(".npy")]
                        f = os.path.join(od, cand[0]) if len(cand) == 1 else f
                    try:
                        c = compare(np.load(ref[o]["path"]), np.load(f))
                    except Exception as e:
                        c = {"pass": False, "error": f"{type(e).__name__}: {e}"[:300]}
                    entry["outputs"][o] = c
                    ok = ok and c["pass"]
                entry["pass"] = ok
                worst = max(entry["outputs"].values(), key=lambda c: c.get("err_over_max_ref", float("inf")))
                entry.update({k: worst.get(k) for k in ("max_abs_err", "err_over_max_ref", "max_rel_err")})
            res[key] = entry
            pl = entry.get("placement", {})
            R.log(f"{dev:7s} {key:34s} {'PASS' if entry.get('pass') else 'FAIL'} "
                  f"err/max {entry.get('err_over_max_ref', float('nan')):.2e} rel {entry.get('max_rel_err', float('nan')):.2e} "
                  f"{pl.get('backends', '')} {('degraded: ' + '; '.join(pl['degraded'])) if pl.get('degraded') else ''}"
                  f"{entry.get('error', '')}", echo=not entry.get("pass"))
            R.save()
    npass = sum(1 for e in res.values() if e.get("pass"))
    R.res["steps"][f"correctness_{dev}"] = f"{npass}/{len(res)} cases pass on {dev} in {time.time() - t0:.1f} s"
    R.log(R.res["steps"][f"correctness_{dev}"], echo=True)
    R.save()


def step_half(R):
    """float16 at a partition's borders on the first run device: every half bit pattern
    through x * 1 must come back unchanged (NaN as NaN), and float32 -> half must round as dlrt's
    CPU backend does."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    dev = R.a.run_devices[0]
    res = R.res.setdefault("half", {})
    d = os.path.join(R.a.work, "half")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(5)
    vals = np.array([0.0, -0.0, 1.0, -2.5, 65504, 65519, 65520, 1e6, -1e6, 6.1035156e-05, 6.0975552e-05,
                     5.9604645e-08, 2.9802322e-08, 2.9802326e-08, 8.9406967e-08, 1e-10, np.inf, -np.inf,
                     1.0009765625, 1.00048828125, 1.00146484375, 3.0517578e-05], np.float32)
    vals = np.concatenate([vals, (rng.uniform(-8, 8, 2000) * 2.0 ** rng.integers(-30, 30, 2000)).astype(np.float32)])
    np.save(os.path.join(d, "f32.npy"), vals)
    # float16 only: numpy (and so .npy files) has no bfloat16; OpenClTest covers bfloat16 on the same kernels.
    for tname, t in (("float16", TensorProto.FLOAT16),):
        one = helper.make_tensor("one", t, [], [1.0])
        g = helper.make_graph([helper.make_node("Mul", ["x", "one"], ["y"])], "half",
                              [helper.make_tensor_value_info("x", t, [None])], [helper.make_tensor_value_info("y", t, [None])],
                              [one])
        mul = os.path.join(d, f"mul_{tname}.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), mul)
        g2 = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=t)], "cast",
                               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                               [helper.make_tensor_value_info("y", t, [None])])
        cast = os.path.join(d, f"cast_{tname}.onnx")
        onnx.save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), cast)
        bits = np.arange(65536, dtype=np.uint16)
        xin = os.path.join(d, f"bits_{tname}.npy")
        np.save(xin, bits.view(np.float16))
        entry = {}
        outs = {}
        for which, model, inp in (("roundtrip", mul, xin), ("round", cast, os.path.join(d, "f32.npy"))):
            for dv in (dev, "cpu"):
                od = os.path.join(d, f"{tname}_{which}_{dv}")
                shutil.rmtree(od, ignore_errors=True)
                cmd = [R.a.dlrt, "run", model, "--device", dv, "--strict", "--input", f"x={inp}", "--output-dir", od, "--json"]
                r = R.sh(cmd, timeout=60, key=f"half:{dv}")
                if r["rc"] != 0:
                    outs[(which, dv)] = None
                    entry[f"{which}_{dv}_error"] = _err(r)
                    continue
                j = _json_out(r) or {}
                entry[f"{which}_{dv}_placement"] = _partitions(j.get("report"))
                f = [x for x in os.listdir(od) if x.endswith(".npy")]
                outs[(which, dv)] = np.load(os.path.join(od, f[0])).view(np.uint16) if f else None
            a, b = outs.get((which, dev)), outs.get((which, "cpu"))
            if a is None or b is None:
                entry[which] = "FAIL: no output"
                continue
            on = entry.get(f"{which}_{dev}_placement", {}).get("backends", {})
            if dev != "cpu" and not any(k.startswith(dev.split(":")[0] + ":") for k in on):
                entry[which] = f"FAIL: did not run on {dev} ({on})"
                continue
            if which == "roundtrip":
                ref = bits
                exp = (ref & 0x7C00) == 0x7C00
                nan = exp & ((ref & 0x3FF) != 0)
                got_nan = ((a & 0x7C00) == 0x7C00) & ((a & 0x3FF) != 0)
                bad = int(np.sum(np.where(nan, ~got_nan, a != ref)))
            else:
                bad = int(np.sum(a != b))
            entry[which] = "ok" if bad == 0 else f"FAIL: {bad} values differ"
        res[tname] = entry
        R.log(f"half {tname}: {entry}", echo=True)
    ok = all(e.get(k) == "ok" for e in res.values() for k in ("roundtrip", "round"))
    R.res["steps"]["half"] = f"half-precision borders on {dev}: {'ok' if ok else 'FAILED'}"
    R.log(R.res["steps"]["half"], echo=True)
    R.save()


def bench(R, model_path, dev, inputs, warmup, iters, extra=()):
    cmd = [R.a.dlrt, "bench", model_path, "--device", dev, "--strict", "--warmup", str(warmup),
           "--iterations", str(iters), "--json"] + list(extra)
    for k, p in inputs.items():
        cmd += ["--input", f"{k}={p}"]
    r = R.sh(cmd, timeout=120, key=f"bench:{dev}")
    if r["rc"] != 0:
        return {"error": _err(r), "s": r["s"]}
    j = _json_out(r) or {}
    lat = j.get("latency_ms", {})
    return {"median_ms": lat.get("median"), "min_ms": lat.get("min"), "p90_ms": lat.get("p90"),
            "iterations": j.get("iterations"), "session_create_ms": j.get("session_create_ms"),
            "first_run_ms": j.get("first_run_ms"), "placement": _partitions(j.get("report")), "s": r["s"]}


def b1_case(R, name):
    """The batch-1 case with the most input elements (minilm: b1s128)."""
    import numpy as np
    best, size = None, -1
    for case in R.res["models"][name]["cases"]:
        ins = case_inputs(R, name, case)
        shapes = [np.load(p, mmap_mode="r").shape for p in ins.values()]
        if all(s and s[0] == 1 for s in shapes):
            n = sum(int(np.prod(s)) for s in shapes)
            if n > size:
                best, size = case, n
    return best


def step_bench_b1(R):
    t0 = time.time()
    for name in R.res["models"]:
        case = b1_case(R, name)
        if case is None:
            continue
        row = R.res["bench_b1"].setdefault(name, {"case": case})
        for dev in R.a.bench_devices:
            b = bench(R, R.res["models"][name]["path"], dev, case_inputs(R, name, case), R.a.warmup, R.a.iters)
            row[dev] = b
            R.log(f"bench b1 {name:28s} {case:7s} {dev:7s} "
                  + (f"median {b['median_ms']:.3f} ms (create {b['session_create_ms']:.0f} ms) {b['placement']['backends']}"
                     if b.get("median_ms") is not None else b.get("error", "?")), echo=b.get("median_ms") is None)
            R.save()
    R.res["steps"]["bench_b1"] = f"done in {time.time() - t0:.1f} s"
    R.save()


def step_b8(R):
    import numpy as np
    t0 = time.time()
    todo = {}
    if "minilm_l6" in R.res["models"]:
        if "b8s128" in R.res["models"]["minilm_l6"]["cases"]:
            todo["minilm_l6_b8s128"] = ("minilm_l6", case_inputs(R, "minilm_l6", "b8s128"))
    if "resnet18" in R.res["models"]:
        x = np.concatenate([np.load(p) for p in [case_inputs(R, "resnet18", "b2")["input"]] * 4], axis=0)
        p = os.path.join(R.a.work, "resnet18_b8_input.npy")
        np.save(p, x)
        todo["resnet18_b8"] = ("resnet18", {"input": p})
    # PyTorch eager, in the python that has torch
    tj = os.path.join(R.a.work, "torch_bench.json")
    if os.path.exists(tj):
        os.remove(tj)
    if R.a.torch_python:
        cmd = [R.a.torch_python, os.path.abspath(__file__), "torch-bench", "--make-zoo",
               os.path.join(R.a.kit, "zoo", "make_zoo.py"), "--device", R.a.torch_device, "--json", tj,
               "--warmup", str(R.a.b8_warmup), "--iters", str(R.a.b8_iters)]
        for label, (name, ins) in todo.items():
            cmd += ["--case", f"{label}:{name}:" + ",".join(f"{k}={v}" for k, v in ins.items())]
        r = R.sh(cmd, timeout=180)
        R.log("torch-bench output:\n" + r["out"][-3000:] + r["err"][-3000:])
        try:
            torch_res = json.load(open(tj))
        except Exception:
            torch_res = {"error": _err(r)}
    else:
        torch_res = {"error": "no python with torch, torchvision, onnx and numpy"}
    R.res["b8"]["torch"] = torch_res
    for label, (name, ins) in todo.items():
        row = R.res["b8"].setdefault(label, {})
        row["torch_eager"] = torch_res.get("cases", {}).get(label, {"error": torch_res.get("error", "missing")})
        b = bench(R, R.res["models"][name]["path"], R.a.b8_device, ins, R.a.b8_warmup, R.a.b8_iters)
        row[f"dlrt_{R.a.b8_device}"] = b
        t = row["torch_eager"].get("median_ms")
        if b.get("median_ms") and t:
            row["ratio_dlrt_over_torch"] = b["median_ms"] / t
        h = row["torch_eager"].get("median_ms_host_to_host")
        if b.get("median_ms") and h:
            row["ratio_dlrt_over_torch_host_to_host"] = b["median_ms"] / h
        R.log(f"b8 {label:18s} dlrt {R.a.b8_device}: {_ms(b.get('median_ms'))} ms | torch eager {R.a.torch_device}: "
              f"{_ms(t)} ms on-device, {_ms(h)} ms host to host "
              f"(cudnn.benchmark: {_ms(row['torch_eager'].get('median_ms_cudnn_benchmark'))}) "
              f"ratio {_ms(row.get('ratio_dlrt_over_torch'))} {b.get('error', '')}{row['torch_eager'].get('error', '')}",
              echo=True)
        R.save()
    R.res["steps"]["b8"] = f"done in {time.time() - t0:.1f} s"
    R.save()


# ----------------------------------------------------------------------------- torch eager (its own process)
def torch_bench(a):
    import importlib.util
    import statistics
    import numpy as np
    import torch
    import torchvision
    res = {"torch": torch.__version__, "torchvision": torchvision.__version__, "device": a.device, "cases": {}}
    # TF32 off (the legacy switches; torch >= 2.9 also has fp32_precision, recorded when readable)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if a.device.startswith("cuda"):
        res["cuda"] = torch.version.cuda
        res["cudnn"] = torch.backends.cudnn.version()
        res["gpu"] = torch.cuda.get_device_name(0)
    st = {"warmup": a.warmup, "iters": a.iters,
          "timing": "CUDA events per run" if a.device.startswith("cuda") else "perf_counter per run"}
    for k, f in (("allow_tf32_matmul", lambda: torch.backends.cuda.matmul.allow_tf32),
                 ("allow_tf32_cudnn", lambda: torch.backends.cudnn.allow_tf32),
                 ("float32_matmul_precision", torch.get_float32_matmul_precision),
                 ("matmul_fp32_precision", lambda: torch.backends.cuda.matmul.fp32_precision),
                 ("cudnn_conv_fp32_precision", lambda: torch.backends.cudnn.conv.fp32_precision)):
        try:
            st[k] = f()
        except Exception as e:
            st[k] = f"({type(e).__name__}: {str(e)[:120]})"
    res["settings"] = st
    spec = importlib.util.spec_from_file_location("make_zoo", a.make_zoo)
    mz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mz)
    dev = torch.device(a.device)

    def timeit(fn):
        with torch.inference_mode():
            for _ in range(a.warmup):
                fn()
            ts = []
            if dev.type == "cuda":
                torch.cuda.synchronize()
                for _ in range(a.iters):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    fn()
                    e.record()
                    e.synchronize()
                    ts.append(s.elapsed_time(e))
            else:
                for _ in range(a.iters):
                    t = time.perf_counter()
                    fn()
                    ts.append((time.perf_counter() - t) * 1e3)
        return statistics.median(ts), min(ts)

    for c in a.case:
        label, name, ins = c.split(":", 2)
        feeds = {k: torch.from_numpy(np.load(p)).to(dev) for k, p in (x.split("=", 1) for x in ins.split(","))}
        out = {"model": name, "shapes": {k: list(v.shape) for k, v in feeds.items()}}
        try:
            if name == "minilm_l6":
                m = mz.BertModel()
                g = torch.Generator().manual_seed(mz.SEED)
                mz.init_bert(m, g)
                args = [feeds[k] for k in ("input_ids", "attention_mask", "token_type_ids")]
            elif name == "resnet18":
                m = torchvision.models.resnet18(weights=None)
                args = [feeds["input"]]
            else:
                raise KeyError(name)
            m = m.to(dev).eval()
            torch.backends.cudnn.benchmark = False
            out["median_ms"], out["min_ms"] = timeit(lambda: m(*args))
            # Host tensors in, host tensors out (what `dlrt bench` times): copies and a synchronise included.
            host = [a_.cpu() for a_ in args]

            def host_to_host():
                y = m(*[h.to(dev) for h in host])
                ys = y if isinstance(y, (tuple, list)) else (y,)
                return [t.cpu() for t in ys]
            ts = []
            with torch.inference_mode():
                for _ in range(a.warmup):
                    host_to_host()
                for _ in range(a.iters):
                    t = time.perf_counter()
                    host_to_host()
                    ts.append((time.perf_counter() - t) * 1e3)
            out["median_ms_host_to_host"] = statistics.median(ts)
            if dev.type == "cuda":
                torch.backends.cudnn.benchmark = True
                out["median_ms_cudnn_benchmark"], _ = timeit(lambda: m(*args))
                torch.backends.cudnn.benchmark = False
        except Exception as e:
            out["error"] = f"{type(e).__name__}: {e}"[:500]
        res["cases"][label] = out
        print(label, out, flush=True)
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)


# ----------------------------------------------------------------------------- summary
def summary(res):
    L = []
    env = res.get("env", {})
    L.append(f"== gpu_check summary ({res.get('elapsed_s')} s) ==")
    L.append(f"GPU: {env.get('nvidia_smi')}")
    L.append(f"dlrt: {env.get('dlrt_version')}  DLRT_CUDA_LIB_PATH={env.get('DLRT_CUDA_LIB_PATH')}")
    for key in ("devices", "devices_with_lib_path"):
        for name, st in (env.get(key, {}).get("backend_state") or {}).items():
            if name in ("cuda", "opencl"):
                L.append(f"  [{key}] {name}: " + ("available " + str(st.get("version") or "")[:80]
                                                 if st.get("available") else "UNAVAILABLE " + str(st.get("reason"))[:300]))
    for k, v in res.get("steps", {}).items():
        L.append(f"  step {k}: {v}")
    devs = list(res.get("correctness", {}))
    if devs:
        L.append("correctness (pass: |d-r| <= 1e-4*max|r| + 1e-3*|r|; err = max|d-r|/max|r|; "
                 "n/m = nodes off the cpu / all; * = a partition degraded):")
        L.append(f"  {'model/case':34s} " + " ".join(f"{d:>22s}" for d in devs))
        keys, first_err = [], {}
        for d in devs:
            keys += [k for k in res["correctness"][d] if k not in keys]
        for k in keys:
            cells = []
            for d in devs:
                e = res["correctness"][d].get(k)
                if e is None:
                    cells.append(f"{'-':>22s}")
                elif e.get("error"):
                    cells.append(f"{'ERR ' + e['error'].split(':')[0][:17]:>22s}")
                    first_err.setdefault(d, f"{k}: {e['error'][:400]}")
                else:
                    pl = e.get("placement", {})
                    deg = "*" if pl.get("degraded") else ""
                    frac = ""
                    if d != "cpu":
                        tot = sum(pl.get("backends", {}).values())
                        on = sum(v for b_, v in pl.get("backends", {}).items() if not b_.startswith("cpu:"))
                        frac = f" {on}/{tot}"
                    cells.append(f"{('ok ' if e['pass'] else 'FAIL ') + format(e.get('err_over_max_ref') or 0, '.1e') + deg + frac:>22s}")
            L.append(f"  {k:34s} " + " ".join(cells))
        for d, msg in first_err.items():
            L.append(f"  first {d} error: {msg}")
    b1 = res.get("bench_b1", {})
    if b1:
        bdevs = []
        for row in b1.values():
            bdevs += [d for d in row if d != "case" and d not in bdevs]
        bench_err = {}
        L.append("batch-1 median latency, ms (dlrt bench; * = some nodes on another backend):")
        L.append(f"  {'model':28s} {'case':7s} " + " ".join(f"{d:>10s}" for d in bdevs)
                 + ("   cuda<opencl" if {"cuda", "opencl"} <= set(bdevs) else ""))
        for name, row in b1.items():
            cells, vals = [], {}
            for d in bdevs:
                b = row.get(d, {})
                if b.get("median_ms") is not None:
                    vals[d] = b["median_ms"]
                    mixed = "*" if len(b.get("placement", {}).get("backends", {})) > 1 else " "
                    cells.append(f"{b['median_ms']:9.3f}{mixed}")
                else:
                    cells.append(f"{'ERR':>10s}")
                    bench_err.setdefault(d, f"{name}: {str(b.get('error'))[:400]}")
            extra = ""
            if "cuda" in vals and "opencl" in vals:
                extra = f"   {'yes' if vals['cuda'] < vals['opencl'] else 'NO'} ({vals['opencl'] / vals['cuda']:.2f}x)"
            L.append(f"  {name:28s} {row.get('case', ''):7s} " + " ".join(cells) + extra)
        for d, msg in bench_err.items():
            L.append(f"  first {d} bench error: {msg}")
    b8 = {k: v for k, v in res.get("b8", {}).items() if k != "torch"}
    if b8:
        t = res["b8"].get("torch", {})
        L.append(f"batch 8 vs PyTorch eager (torch {t.get('torch')} cuda {t.get('cuda')} on {t.get('gpu', t.get('device'))}, "
                 f"TF32 off; target dlrt <= 1.25x torch):")
        for label, row in b8.items():
            te = row.get("torch_eager", {})
            dl = {k: v for k, v in row.items() if k.startswith("dlrt_")}
            for k, b in dl.items():
                ratio = row.get("ratio_dlrt_over_torch")
                L.append(f"  {label:18s} {k}: {_ms(b['median_ms']) if b.get('median_ms') is not None else 'ERR ' + str(b.get('error'))[:200]} ms"
                         f" | torch {_ms(te['median_ms']) if te.get('median_ms') is not None else 'ERR ' + str(te.get('error'))[:200]} ms"
                         f" (cudnn.benchmark {_ms(te.get('median_ms_cudnn_benchmark'))}; host to host "
                         f"{_ms(te.get('median_ms_host_to_host'))})"
                         + (f" | ratio {ratio:.2f} {'ok' if ratio <= 1.25 else 'OVER'}" if ratio else "")
                         + (f", host to host {row['ratio_dlrt_over_torch_host_to_host']:.2f}"
                            if row.get("ratio_dlrt_over_torch_host_to_host") else ""))
    return "\n".join(L)


# ----------------------------------------------------------------------------- main
def main():
    if len(sys.argv) > 1 and sys.argv[1] == "torch-bench":
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("--make-zoo", required=True)
        ap.add_argument("--device", default="cuda")
        ap.add_argument("--json", required=True)
        ap.add_argument("--warmup", type=int, default=20)
        ap.add_argument("--iters", type=int, default=100)
        ap.add_argument("--case", action="append", default=[], help="LABEL:MODEL:name=file.npy,...")
        torch_bench(ap.parse_args())
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "summary":
        print(summary(json.load(open(sys.argv[2]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kit", required=True, help="the unpacked kit/ folder")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dlrt", required=True, help="dlrt (a wrapper that sets LD_LIBRARY_PATH)")
    ap.add_argument("--torch-python", default="")
    ap.add_argument("--torch-device", default="cuda")
    ap.add_argument("--run-devices", default="cuda,cpu")
    ap.add_argument("--bench-devices", default="cuda,opencl")
    ap.add_argument("--b8-device", default="cuda")
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--b8-warmup", type=int, default=20)
    ap.add_argument("--b8-iters", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=300)
    ap.add_argument("--cuda-wheel-dirs", default="", help="colon-separated folders for DLRT_CUDA_LIB_PATH if the "
                    "cuda backend is unavailable without it (libcuda.so.1's folder, then the pip wheels' lib folders)")
    ap.add_argument("--no-cuda-backend-check", dest="cuda_backend_check", action="store_false")
    a = ap.parse_args()
    a.run_devices = [d for d in a.run_devices.split(",") if d]
    a.bench_devices = [d for d in a.bench_devices.split(",") if d]
    a.models_dir = os.path.join(a.work, "models")
    os.makedirs(a.out, exist_ok=True)
    R = Run(a)
    steps = [("env", lambda: step_env(R)), ("models", lambda: step_models(R)), ("refs", lambda: step_refs(R))]
    if a.run_devices:
        steps.append((f"correctness_{a.run_devices[0]}", lambda: step_correctness(R, a.run_devices[0])))
    steps += [("b8", lambda: step_b8(R)), ("bench_b1", lambda: step_bench_b1(R))]
    if a.run_devices:
        steps.append(("half", lambda: step_half(R)))
    for d in a.run_devices[1:]:
        steps.append((f"correctness_{d}", lambda d=d: step_correctness(R, d)))
    for key, fn in steps:
        if R.left() < 5:
            R.res["steps"][key] = "skipped: time budget spent"
            continue
        try:
            fn()
        except Exception as e:
            import traceback
            R.res["steps"][key] = f"FAILED: {type(e).__name__}: {e}"
            R.log(f"step {key} failed:\n{traceback.format_exc()}", echo=True)
        R.save()
    R.save()
    print(summary(R.res), flush=True)
    R.log(summary(R.res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
