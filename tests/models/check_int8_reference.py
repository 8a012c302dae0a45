#!/usr/bin/env python3
"""Checks that dlrt's int8 reference check catches a reference made by a
saturating kernel, and says what this CPU's ONNX Runtime does.

    check_int8_reference.py ZOO_TEST_BINARY WORK_DIR

1. The saturation probe of int8_reference.py on this CPU (printed, the CPU named).
2. A uint8 x int8 MatMulInteger whose adjacent-k product pairs exceed int16,
   written twice as a one-model quantized zoo under WORK_DIR: once with the
   exact int32 product as the expected output, once with what VPMADDUBSW +
   VPMADDWD give (int8_reference.vpmaddubsw_matmul). ZOO_TEST_BINARY (a gtest
   binary with Zoo.QuantizedVariantsMatchOnnxRuntime) must pass the first and
   fail the second.
3. Where ONNX Runtime saturates here, whether its output equals the numpy model
   of VPMADDUBSW (printed: that model is what step 2 relies on), and ONNX
   Runtime's own output written as the reference a third time: the zoo check
   must fail it too. DLRT_INT8_EXPECT_SATURATION=1 (make test-avx2-cpu, which
   runs this under an emulated CPU without VNNI) fails when the probe finds no
   saturation.

Needs onnx, onnxruntime and numpy (the quantized zoo's venv). Exit 0 when
every check holds; the last line is the verdict.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8_reference  # noqa: E402


def write_zoo(root, model, a, expected):
    os.makedirs(os.path.join(root, "m", "c0", "expected"), exist_ok=True)
    onnx.save(model, os.path.join(root, "m.onnx"))
    np.save(os.path.join(root, "m", "c0", "a.npy"), a)
    np.save(os.path.join(root, "m", "c0", "expected", "y.npy"), expected)
    manifest = {"models": {"m": {"file": "m.onnx", "compare": {"rtol": 1e-3, "atol": 1e-4},
                                 "cases": {"c0": {"inputs": {"a": "m/c0/a.npy"},
                                                  "expected": {"y": "m/c0/expected/y.npy"}}}}}}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def run_zoo_test(binary, root):
    env = dict(os.environ, DLRT_QUANT_ZOO_DIR=root, OMP_NUM_THREADS="1")
    p = subprocess.run([binary, "--gtest_filter=Zoo.QuantizedVariantsMatchOnnxRuntime", "--gtest_brief=1"],
                       env=env, capture_output=True, text=True, timeout=120)
    line = next((l for l in p.stdout.splitlines() if l.startswith("quantized zoo:")), "no verdict line")
    return p.returncode, line


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, work = sys.argv[1:]
    print(int8_reference.summary(ort))
    rng = np.random.default_rng(7)
    m, k, n = 3, 37, 20  # odd K: the last pair is half empty
    a = rng.integers(0, 256, size=(m, k)).astype(np.uint8)
    a[0] = 255
    b = rng.integers(-128, 128, size=(k, n)).astype(np.int8)
    b[:, 0] = 127
    b[:, 1] = -128
    exact = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    saturated = int8_reference.vpmaddubsw_matmul(a, b).astype(np.int32)
    g = helper.make_graph([helper.make_node("MatMulInteger", ["a", "b"], ["y"])], "sat",
                          [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])],
                          [numpy_helper.from_array(b, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    failures = []
    if np.array_equal(exact, saturated):
        failures.append("the saturated reference equals the exact one (the test model does not saturate)")
    print(f"saturated reference: {int((exact != saturated).sum())} of {exact.size} elements differ from the exact "
          f"product (max {int(np.abs(exact.astype(np.int64) - saturated).max())})")
    shutil.rmtree(work, ignore_errors=True)
    references = [("exact", exact, True), ("saturated", saturated, False)]
    saturates = int8_reference.probe(ort)["saturates"]
    if saturates:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, {"a": a})[0]
        print("onnxruntime here " + ("equals" if np.array_equal(got, saturated) else "differs from") +
              " the numpy model of VPMADDUBSW on this product")
        references.append(("onnxruntime", got, np.array_equal(got, exact)))
    elif os.environ.get("DLRT_INT8_EXPECT_SATURATION") == "1":
        failures.append("DLRT_INT8_EXPECT_SATURATION=1, but onnxruntime does not saturate on this CPU")
    for tag, want, should_pass in references:
        root = os.path.join(work, tag)
        write_zoo(root, model, a, want)
        rc, line = run_zoo_test(binary, root)
        ok = (rc == 0) == should_pass
        print(f"{tag} reference: zoo check {'passed' if rc == 0 else 'failed'} ({line})"
              f" -> {'as it must' if ok else 'WRONG'}")
        if not ok:
            failures.append(f"the zoo check {'failed' if should_pass else 'passed'} with the {tag} reference")
    print("int8 reference check: " + ("ok" if not failures else "FAILED: " + "; ".join(failures)))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
