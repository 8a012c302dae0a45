"""dlrt.__version__ and dlrt.devices()."""
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
