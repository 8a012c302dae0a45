"""Checks an installed dlrt wheel from a fresh virtual environment (scripts/test_wheel.sh runs it
with `python -I`, from a temporary folder, so nothing of the source tree is importable).

    check_wheel.py --zoo DIR --embed-data DIR --source ROOT [--openvino absent|present]

- dlrt is imported from the venv's site-packages, never from ROOT;
- a zoo model (mobilenet_v2 b1, minilm_l6 b1s16) against the zoo's expected outputs
  (rtol 1e-3, atol 1e-4 as the zoo tests); skipped with a note when there is no zoo;
- the Embedder on tests/embed/data/tiny_bert against tiny_bert_expected.json (mean pooling,
  normalised);
- OpenVINO: `absent`: device="openvino" in strict mode raises DeviceUnavailable and says why
  (no vendor runtime is bundled; an OpenVINO found outside the venv is accepted); `present` (openvino installed in the same venv, the venv not
  activated): the strict session is placed on OpenVINO, dlrt.backends() shows the library
  loaded from this venv's openvino package and its devices, and the outputs match.
Prints one line per check; exit 1 on the first failure.
"""
import argparse
import json
import os
import sys
import sysconfig

import numpy as np

RTOL, ATOL = 1e-3, 1e-4
ZOO_CASES = [("mobilenet_v2", "b1"), ("minilm_l6", "b1s16")]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_import(source):
    import dlrt

    site = os.path.realpath(sysconfig.get_paths()["platlib"])
    where = os.path.realpath(dlrt.__file__)
    if not where.startswith(site + os.sep):
        fail(f"dlrt was imported from {where}, not from the venv's {site}")
    src = os.path.realpath(source)
    leaks = [p for p in sys.path if p and os.path.realpath(p).startswith(src + os.sep)]
    if leaks or os.path.realpath(os.getcwd()).startswith(src):
        fail(f"the source tree is reachable: sys.path {leaks}, cwd {os.getcwd()}")
    native = os.path.realpath(dlrt._dlrt.__file__)
    print(f"ok: import dlrt {dlrt.__version__} from {os.path.dirname(where)} ({os.path.basename(native)})")
    return dlrt


def load_case(zoo, model, case):
    with open(os.path.join(zoo, "manifest.json")) as f:
        m = json.load(f)["models"][model]
    c = m["cases"][case]
    feeds = {n: np.load(os.path.join(zoo, p)) for n, p in c["inputs"].items()}
    expected = {n: np.load(os.path.join(zoo, p)) for n, p in c["expected"].items()}
    return os.path.join(zoo, m.get("file", model + ".onnx")), feeds, expected


def compare(tag, names, got, expected):
    for name, value in zip(names, got):
        want = expected[name]
        if value.shape != want.shape or value.dtype != want.dtype:
            fail(f"{tag} {name}: {value.dtype}{value.shape}, expected {want.dtype}{want.shape}")
        if not np.allclose(value, want, rtol=RTOL, atol=ATOL):
            fail(f"{tag} {name}: max abs diff {np.abs(value - want).max()}")


def check_zoo(dlrt, zoo):
    if not zoo or not os.path.isfile(os.path.join(zoo, "manifest.json")):
        print(f"skipped: the zoo ({zoo or 'DLRT_ZOO_DIR unset'} has no manifest.json)")
        return
    for model, case in ZOO_CASES:
        path, feeds, expected = load_case(zoo, model, case)
        s = dlrt.Session(path, device="cpu", threads=1)
        names = list(expected)
        got = s.run(feeds, output_names=names)
        compare(f"{model}/{case}", names, got, expected)
        print(f"ok: zoo {model}/{case}: {', '.join(names)} match (rtol {RTOL}, atol {ATOL})")


def check_embedder(dlrt, data):
    with open(os.path.join(data, "tiny_bert_expected.json")) as f:
        expected = json.load(f)
    model = dlrt.Embedder(os.path.join(data, "tiny_bert"), device="cpu")
    got = model.encode(expected["texts"])
    want = np.asarray(expected["mean"], np.float64)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        fail(f"Embedder(tiny_bert).encode: {got.shape}, max abs diff "
             f"{np.abs(got - want).max() if got.shape == want.shape else 'n/a'}")
    print(f"ok: Embedder(tiny_bert).encode({len(expected['texts'])} texts): mean pooling, normalised, "
          f"match ({model.pooling}, dim {model.get_sentence_embedding_dimension()})")


def check_openvino(dlrt, zoo, embed_data, expect):
    # A small model that is always there; the zoo's mobilenet_v2 when there is one.
    if zoo and os.path.isfile(os.path.join(zoo, "manifest.json")):
        path, feeds, expected = load_case(zoo, "mobilenet_v2", "b1")
    else:
        path, feeds, expected = os.path.join(embed_data, "tiny_bert", "model.onnx"), None, None
    ov = [b for b in dlrt.backends() if b["name"] == "openvino"]
    if not ov:
        fail("dlrt.backends() has no openvino backend")
    ov = ov[0]
    if expect == "absent":
        if ov["available"]:
            # An OpenVINO elsewhere on this machine (~/.pyenv, /usr, LD_LIBRARY_PATH): fine, as
            # long as it is not one the wheel brought.
            import dlrt as pkg
            site = os.path.dirname(os.path.dirname(os.path.realpath(pkg.__file__)))
            lib = os.path.realpath(ov["library_path"])
            if lib.startswith(site + os.sep):
                fail(f"OpenVINO was loaded from the venv without openvino installed: {lib}")
            print(f"ok: no OpenVINO in the wheel; one outside the venv was found: {lib}")
            return
        try:
            dlrt.Session(path, device="openvino", strict=True)
        except dlrt.DeviceUnavailable as e:
            if ov["available"]:
                fail(f"DeviceUnavailable although dlrt.backends() says openvino is available: {e}")
            print(f"ok: without OpenVINO, device='openvino' strict: DeviceUnavailable: {str(e)[:160]}...")
            print(f"    dlrt.backends(): openvino unavailable: {ov['reason'][:120]}")
            return
        fail("a strict session on device='openvino' was created without OpenVINO installed "
             f"(dlrt.backends(): {ov})")
    # present: the wheel installed by pip into this (not activated) venv.
    import importlib.util

    spec = importlib.util.find_spec("openvino")
    if spec is None:
        fail("the openvino package is not installed in this venv")
    libs = os.path.realpath(os.path.join(list(spec.submodule_search_locations)[0], "libs"))
    if not ov["available"]:
        fail(f"dlrt.backends(): openvino unavailable: {ov['reason']} (fix: {ov['fix']}; tried {ov['tried']})")
    if not os.path.realpath(ov["library_path"]).startswith(libs + os.sep):
        fail(f"OpenVINO loaded from {ov['library_path']}, not from this venv's {libs}")
    specs = [d["spec"] for d in ov["devices"]]
    if not any(s.startswith("openvino:CPU") for s in specs):
        fail(f"dlrt.backends(): OpenVINO offers no CPU device: {specs}")
    print(f"ok: dlrt.backends(): openvino {ov['version']} from {ov['library_path']}; devices {', '.join(specs)}")
    s = dlrt.Session(path, device="openvino", strict=True)
    parts = s.placement().partitions
    if not parts or any(p.backend != "openvino" for p in parts):
        fail(f"strict device='openvino' placed partitions elsewhere: {s.placement()}")
    where = ", ".join(sorted({p.device for p in parts}))
    if feeds is None:
        print(f"ok: device='openvino' strict: placed on {where} (no zoo to compare outputs)")
        return
    names = list(expected)
    got = s.run(feeds, output_names=names)
    compare("openvino mobilenet_v2/b1", names, got, expected)
    print(f"ok: device='openvino' strict: mobilenet_v2/b1 on {where} matches (rtol {RTOL}, atol {ATOL})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zoo", default=os.environ.get("DLRT_ZOO_DIR", ""))
    ap.add_argument("--embed-data", required=True)
    ap.add_argument("--source", required=True, help="the source tree, which must not be importable")
    ap.add_argument("--openvino", choices=["absent", "present"], default="absent")
    args = ap.parse_args()
    dlrt = check_import(args.source)
    if args.openvino == "absent":
        print(f"ok: dlrt.devices(): {', '.join(f'{d.id} {d.name}' for d in dlrt.devices())}")
        check_zoo(dlrt, args.zoo)
        check_embedder(dlrt, args.embed_data)
    check_openvino(dlrt, args.zoo, args.embed_data, args.openvino)


if __name__ == "__main__":
    main()
