"""ONNX Runtime's session API on dlrt (docs/python-session.md, docs/migrate.md "From ONNX
Runtime"): InferenceSession(path, sess_options, providers), SessionOptions, RunOptions,
get_available_providers(), get_providers(), get_modelmeta(), io_binding(), end_profiling().
The quick start runs unchanged with `import dlrt as ort`; where a python with onnxruntime is
there (test_session_ort_style._ort_python), the same script runs on ONNX Runtime and the two
agree."""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import dlrt
from test_session_ort_style import _ort_python

# ONNX Runtime's Python quick start, with `import onnxruntime as ort` as the first line; run
# unchanged on each side after swapping that line. It prints one JSON line.
QUICK_START = r"""
import onnxruntime as ort
import json, sys
import numpy as np

sess_options = ort.SessionOptions()
sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess_options.intra_op_num_threads = 2
session = ort.InferenceSession(sys.argv[1], sess_options, providers=["CPUExecutionProvider"])
input_name = session.get_inputs()[0].name
x = np.arange(6, dtype=np.float32).reshape(2, 3)
outputs = session.run(None, {input_name: x})
ro = ort.RunOptions()
again = session.run([session.get_outputs()[0].name], {input_name: x}, ro)
meta = session.get_modelmeta()
binding = session.io_binding()
binding.bind_cpu_input(input_name, x)
binding.bind_output(session.get_outputs()[0].name)
session.run_with_iobinding(binding)
print(json.dumps({
    "input_name": input_name, "shape": session.get_inputs()[0].shape,
    "y": outputs[0].tolist(), "again": again[0].tolist(), "bound": binding.copy_outputs_to_cpu()[0].tolist(),
    "providers": session.get_providers(), "cpu_available": "CPUExecutionProvider" in ort.get_available_providers(),
    "level": int(session.get_session_options().graph_optimization_level),
    "meta": [meta.producer_name, meta.graph_name, meta.domain, meta.description, meta.graph_description,
             meta.version, meta.custom_metadata_map]}))
"""


def _quick_start(python, model, module):
    script = QUICK_START.replace("import onnxruntime as ort", f"import {module} as ort", 1)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in __import__("sys").path if p))
    done = subprocess.run([python, "-c", script, model], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def meta_model(models):
    return str(models / "with_metadata.onnx")


def test_onnx_runtime_quick_start_runs_unchanged(meta_model):
    got = _quick_start(__import__("sys").executable, meta_model, "dlrt")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert got["input_name"] == "x" and got["shape"] == ["n", 3]
    np.testing.assert_array_equal(got["y"], x * 3)
    assert got["again"] == got["y"] and got["bound"] == got["y"]
    assert got["providers"] == ["CPUExecutionProvider"] and got["cpu_available"]
    assert got["level"] == 99
    assert got["meta"] == ["dlrt-tests", "times_three", "org.dlrt.tests", "multiplies by three", "x * (1 + 2)", 7,
                           {"author": "dlrt", "license": "MIT"}]


def test_quick_start_side_by_side_with_onnxruntime(meta_model, models):
    python = _ort_python()
    if not os.path.isfile(python) or subprocess.run([python, "-c", "import onnxruntime"]).returncode != 0:
        pytest.skip(f"no python with onnxruntime at {python} (set DLRT_ORT_PYTHON)")
    for model in (meta_model, str(models / "three_outputs.onnx")):
        ours = _quick_start(__import__("sys").executable, model, "dlrt")
        theirs = _quick_start(python, model, "onnxruntime")
        assert ours == theirs, model


def test_providers_map_to_devices(meta_model):
    s = dlrt.InferenceSession(meta_model, providers=["CPUExecutionProvider"])
    assert [p.backend for p in s.placement().partitions] == ["cpu"]
    # dlrt.Session takes providers= too; an accelerator that is missing falls back to the CPU
    # (as ONNX Runtime skips a provider it lacks), and strict mode makes that an error.
    missing = [n for n in ("CUDAExecutionProvider", "OpenVINOExecutionProvider")
               if n not in dlrt.get_available_providers()]
    if not missing:
        pytest.skip("CUDA and OpenVINO are both available here: no missing provider to fall back from")
    s = dlrt.Session(meta_model, providers=[missing[0], "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(dlrt.DeviceUnavailable):
        dlrt.InferenceSession(meta_model, providers=[missing[0]], strict=True)


def test_unknown_providers_and_options_warn_and_fall_back(meta_model):
    # As ONNX Runtime treats a provider its build lacks: a warning, and the next one runs.
    with pytest.warns(UserWarning, match="no backend for the provider 'TensorrtExecutionProvider'.*"
                                         "CUDAExecutionProvider, OpenVINOExecutionProvider"):
        s = dlrt.InferenceSession(meta_model, providers=["TensorrtExecutionProvider", "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert s.run(None, {"x": np.ones((1, 3), np.float32)})[0].shape == (1, 3)
    with pytest.warns(UserWarning, match="'DmlExecutionProvider'"):
        s = dlrt.InferenceSession(meta_model, providers=["DmlExecutionProvider"])  # none left: the CPU
    assert s.get_providers() == ["CPUExecutionProvider"]
    # CUDA's options dlrt has no use for (ONNX Runtime's CUDA example): ignored with a warning.
    cuda = ("CUDAExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo",
                                      "gpu_mem_limit": 2 * 1024**3, "cudnn_conv_algo_search": "EXHAUSTIVE",
                                      "do_copy_in_default_stream": True})
    with pytest.warns(UserWarning, match=r"\['arena_extend_strategy', 'cudnn_conv_algo_search', "
                                         r"'do_copy_in_default_stream', 'gpu_mem_limit'\].*ignored"):
        s = dlrt.InferenceSession(meta_model, providers=[cuda, "CPUExecutionProvider"])
    assert s.get_providers()[-1] == "CPUExecutionProvider"  # CUDA where this machine has it, else the CPU
    assert s.get_provider_options().get("CUDAExecutionProvider", {}) in ({}, {"device_id": "0"})


def test_onnx_runtime_module_functions():
    assert dlrt.get_version_string() == dlrt.__version__
    assert dlrt.get_device() in ("CPU", "GPU")
    assert (dlrt.get_device() == "GPU") == bool({"CUDAExecutionProvider", "OpenCLExecutionProvider"} &
                                                set(dlrt.get_available_providers()))
    for bad in (5, -1, "3", True):
        with pytest.raises(ValueError, match="severity"):
            dlrt.set_default_logger_severity(bad)


def test_logger_severity_sets_the_log_level():
    # dlrt's debug line of a CPU graph's first run shows at severity 0 (verbose) and not at 1
    # (info), over DLRT_LOG_LEVEL.
    script = ("import sys, dlrt\n"
              "dlrt.set_default_logger_severity(int(sys.argv[1]))\n"
              "dlrt.Embedder(sys.argv[2], device='cpu', threads=1).encode('a big dog')\n")
    tiny = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "embed", "data", "tiny_bert")
    env = dict(os.environ, DLRT_LOG_LEVEL="off")
    runs = {level: subprocess.run([sys.executable, "-c", script, str(level), tiny], env=env, capture_output=True,
                                  text=True, timeout=120) for level in (0, 1)}
    assert all(r.returncode == 0 for r in runs.values()), {k: r.stderr for k, r in runs.items()}
    assert "dlrt debug: cpu: arena plan" in runs[0].stderr, runs[0].stderr
    assert "dlrt debug" not in runs[1].stderr, runs[1].stderr


def test_bad_providers_are_clear_errors(meta_model):
    with pytest.raises(ValueError, match="one dict per provider"):
        dlrt.InferenceSession(meta_model, providers=["CPUExecutionProvider"], provider_options=[{}, {}])
    with pytest.raises(TypeError, match="not both"):
        dlrt.Session(meta_model, device="cpu", providers=["CPUExecutionProvider"])
    with pytest.raises(TypeError, match="list of provider names"):
        dlrt.InferenceSession(meta_model, providers="CPUExecutionProvider")
    with pytest.raises(TypeError, match="does not take"):
        dlrt.InferenceSession(meta_model, providers=["CPUExecutionProvider"], device="cpu")


def test_provider_options_pick_a_device(meta_model):
    from dlrt._session import _device_spec
    assert _device_spec([("OpenVINOExecutionProvider", {"device_type": "GPU"}), ("CPUExecutionProvider", {})]) == \
        "openvino:GPU,cpu"
    assert _device_spec([("CUDAExecutionProvider", {"device_id": 1})]) == "cuda:1"
    s = dlrt.InferenceSession(meta_model, providers=[("CPUExecutionProvider", {})])
    assert s.get_provider_options() == {"CPUExecutionProvider": {}}


def test_available_providers_are_what_backends_can_run():
    available = dlrt.get_available_providers()
    assert available[-1] == "CPUExecutionProvider"
    assert set(available) <= set(dlrt.get_all_providers())
    runnable = {b["name"] for b in dlrt.backends() if b["available"] and any(not d["is_virtual"] for d in b["devices"])}
    for name, backend in (("CUDAExecutionProvider", "cuda"), ("OpenVINOExecutionProvider", "openvino"),
                          ("OpenCLExecutionProvider", "opencl")):
        assert (name in available) == (backend in runnable), name


def test_graph_optimization_level_switches_the_optimiser(meta_model):
    def nodes(level):
        so = dlrt.SessionOptions()
        so.graph_optimization_level = level
        s = dlrt.InferenceSession(meta_model, so, providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(s.run(None, {"x": np.ones((1, 3), np.float32)})[0], np.full((1, 3), 3.0))
        return sum(p.node_count for p in s.placement().partitions)
    assert nodes(dlrt.GraphOptimizationLevel.ORT_DISABLE_ALL) == 2  # the constant Add kept
    assert nodes(dlrt.GraphOptimizationLevel.ORT_ENABLE_BASIC) == 1  # folded
    assert dlrt.Session(meta_model, optimize=False).placement().partitions[0].node_count == 2


def test_session_options_fields():
    so = dlrt.SessionOptions()
    so.inter_op_num_threads = 4
    so.log_severity_level = 3
    so.execution_mode = dlrt.ExecutionMode.ORT_PARALLEL
    so.add_session_config_entry("session.load_model_format", "ONNX")
    assert so.get_session_config_entry("session.load_model_format") == "ONNX"
    with pytest.raises(AttributeError):
        so.intra_op_threads = 2  # a typo ONNX Runtime's SessionOptions also refuses
    with pytest.raises(dlrt.Unsupported):
        so.register_custom_ops_library("libcustom.so")


def test_session_options_that_cannot_be_honoured(meta_model):
    so = dlrt.SessionOptions()
    so.optimized_model_filepath = "out.onnx"
    with pytest.raises(dlrt.Unsupported, match="optimized_model_filepath"):
        dlrt.InferenceSession(meta_model, so)
    so = dlrt.SessionOptions()
    so.log_severity_level = 7
    with pytest.raises(dlrt.InvalidArgument, match="log_severity_level"):
        dlrt.InferenceSession(meta_model, so)
    so = dlrt.SessionOptions()
    so.intra_op_num_threads = 3
    with pytest.raises(ValueError, match="disagree"):
        dlrt.Session(meta_model, threads=2, sess_options=so)


def test_model_metadata_without_a_version(models):
    meta = dlrt.InferenceSession(str(models / "negate.onnx")).get_modelmeta()
    assert meta.version == 2**63 - 1  # ONNX Runtime's value for a model without model_version
    assert meta.custom_metadata_map == {} and meta.producer_name == "dlrt-tests"


def test_run_options_terminate_cancels(meta_model):
    s = dlrt.InferenceSession(meta_model)
    feeds = {"x": np.ones((2, 3), np.float32)}
    ro = dlrt.RunOptions()
    assert len(s.run(None, feeds, ro)) == 1
    ro.terminate = True
    with pytest.raises(dlrt.Cancelled):
        s.run(None, feeds, ro)
    with pytest.raises(dlrt.Cancelled):
        s.run(None, feeds, run_options=ro)
    ro.terminate = False
    assert len(s.run(output_names=None, input_feed=feeds, run_options=ro)) == 1
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    with pytest.raises(TypeError, match="run_options"):
        s.run(None, feeds, "fast")


def test_terminate_from_another_thread_stops_a_long_run(test_models):
    # A Loop model that runs until cancelled is not among the test models; a run that starts
    # after terminate was set stops before its first node, from any thread.
    s = dlrt.InferenceSession(os.path.join(test_models, "mlp.onnx"))
    ro = dlrt.RunOptions()
    done = threading.Event()
    t = threading.Thread(target=lambda: (setattr(ro, "terminate", True), done.set()))
    t.start()
    t.join(timeout=10)
    assert done.is_set()
    x = np.load(os.path.join(test_models, "mlp_input.npy"))
    with pytest.raises(dlrt.Cancelled):
        s.run(None, {s.get_inputs()[0].name: x}, ro)


def test_profiling_writes_a_trace(meta_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    so = dlrt.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = "mine_"
    s = dlrt.InferenceSession(meta_model, so, providers=["CPUExecutionProvider"])
    assert s.get_profiling_start_time_ns() > 0
    for _ in range(3):
        s.run(None, {"x": np.ones((1, 3), np.float32)})
    path = s.end_profiling()
    assert os.path.basename(path).startswith("mine_") and path.endswith(".json")
    with open(path) as f:
        events = json.load(f)
    names = [e["name"] for e in events]
    assert names[0] == "session_initialization" and names.count("model_run") == 3
    parts = [e for e in events if e["cat"] == "Partition"]
    assert len(parts) == 3 and all(e["args"]["backend"] == "cpu" and e["dur"] >= 0 for e in parts)
    assert s.end_profiling() == ""  # stopped
    assert dlrt.InferenceSession(meta_model).end_profiling() == ""


def test_io_binding_limits(meta_model):
    s = dlrt.InferenceSession(meta_model)
    b = s.io_binding()
    with pytest.raises(dlrt.InvalidArgument, match="run_with_iobinding"):
        b.get_outputs()
    with pytest.raises(dlrt.Unsupported):
        b.bind_output("y", "cuda", 0)
    with pytest.raises(dlrt.Unsupported):
        b.bind_input("x", "cpu", 0, np.float32, [1, 3], 12345)
    b.bind_cpu_input("x", np.ones((2, 3), np.float32))
    s.run_with_iobinding(b)  # no output bound: every output
    assert [o.shape for o in b.get_outputs()] == [(2, 3)]
    with pytest.raises(TypeError):
        dlrt.InferenceSession(meta_model).run_with_iobinding(b)


def test_read_only_property_error_names_the_property(meta_model):
    s = dlrt.Session(meta_model)
    with pytest.raises(AttributeError, match="'inputs'"):
        s.inputs = []
