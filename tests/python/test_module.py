"""dlrt.__version__, dlrt.devices(), dlrt.backends() and dlrt.memory_info()."""
import os
import re

import dlrt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_is_cmakes_project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        want = re.search(r"project\(dlrt\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    assert dlrt.__version__ == want


def test_devices():
    found = dlrt.devices()
    assert found, "discover_devices always lists the CPU"
    cpu = found[0]
    assert cpu.id == "cpu:0" and cpu.type == "cpu" and not cpu.is_virtual
    assert isinstance(cpu.metadata, dict) and "discovered_by" in cpu.metadata
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in cpu.metadata.items())
    d = cpu.as_dict()
    assert set(d) == {"id", "type", "vendor", "name", "vendor_id", "device_id", "metadata"}
    assert len({dev.id for dev in found}) == len(found)
    assert "Device(id='cpu:0'" in repr(cpu)


def test_public_names():
    for name in dlrt.__all__:
        assert hasattr(dlrt, name), name


def test_backends():
    found = dlrt.backends()
    names = [b["name"] for b in found]
    assert names[0] == "cpu" and "openvino" in names, names
    keys = {"name", "available", "library_path", "version", "reason", "fix", "compatibility", "tried", "devices"}
    for b in found:
        assert set(b) == keys, b["name"]
        if not b["available"]:
            assert b["reason"] and not b["devices"], b["name"]
    cpu = found[0]
    assert cpu["available"] and [d["spec"] for d in cpu["devices"]] == ["cpu:0"]
    assert cpu["devices"][0]["hardware"] == "cpu:0" and cpu["devices"][0]["type"] == "cpu"
    assert dlrt.backends(refresh=True)[0]["name"] == "cpu"


def test_memory_info():
    m = dlrt.memory_info()
    assert set(m) == {"max_tensor_bytes", "max_tensor_source", "available_bytes", "available_source",
                      "physical_bytes", "cgroup_limit_bytes", "rlimit_as_bytes", "rss_bytes", "describe"}
    assert 0 < m["available_bytes"] <= m["physical_bytes"]
    assert m["max_tensor_bytes"] > 0 and m["max_tensor_source"] and m["available_source"] and m["describe"]
    if "DLRT_MAX_TENSOR_MB" not in os.environ:
        assert m["max_tensor_bytes"] <= m["available_bytes"]
    for k in ("cgroup_limit_bytes", "rlimit_as_bytes"):
        assert m[k] is None or m[k] > 0, k


def test_memory_info_follows_rlimit_as():
    # In a child with RLIMIT_AS set, the budget is bounded by it (the default: half the room left).
    import subprocess
    import sys
    code = ("import resource, dlrt; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30)); "
            "m = dlrt.memory_info(); print(m['rlimit_as_bytes'], m['available_source'], m['max_tensor_bytes'])")
    env = {k: v for k, v in os.environ.items() if k != "DLRT_MAX_TENSOR_MB"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) == 8 << 30
    assert out[1] == "RLIMIT_AS" or int(out[-1]) < 4 << 30


def test_openvino_of_this_python_is_pointed_at(tmp_path):
    # A fake `openvino` package with a libs folder holding libopenvino_c.so.N: importing dlrt
    # in a python that has it sets OPENVINO_LIB_PATH there (unless it is set already).
    import subprocess
    import sys
    libs = tmp_path / "openvino" / "libs"
    libs.mkdir(parents=True)
    (tmp_path / "openvino" / "__init__.py").write_text("raise ImportError('never imported by dlrt')\n")
    (libs / "libopenvino_c.so.2541").write_text("")
    code = "import os, dlrt; print(os.environ.get('OPENVINO_LIB_PATH', ''))"
    path = os.pathsep.join([str(tmp_path)] + [p for p in sys.path if p])
    env = {k: v for k, v in os.environ.items() if k not in ("OPENVINO_LIB_PATH", "DLRT_OPENVINO_NO_PYTHON")}
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=path), check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == str(libs)
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=path, OPENVINO_LIB_PATH="/x"),
                         check=True, capture_output=True, text=True).stdout.strip()
    assert out == "/x"
