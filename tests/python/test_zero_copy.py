"""Inputs and outputs cross between numpy and dlrt without a copy.

Each check runs in a fresh interpreter and reads its peak resident memory
(VmHWM) around one run with a 128 MiB array: a copy of that array would
raise the peak by 128 MiB. A control run that must copy (a strided input)
shows the measure sees a copy when there is one.
"""
import pytest

from conftest import run_python

MIB = 1 << 20
N = 32 * MIB  # float32 elements: 128 MiB

MEASURE = """
import sys
import numpy as np
import dlrt

def peak():
    # This process's own high-water mark (VmHWM): ru_maxrss also counts the pytest
    # process this one was started from (Linux keeps it across exec).
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

def rise(fn):
    before = peak()
    fn()
    return peak() - before

N = {n}
s = dlrt.Session({model!r})
s.run({{"x": np.ones(16, np.float32)}})  # load and plan on a small input first
"""


def measure(code):
    out = run_python(code).split()
    return [int(v) for v in out]


def test_input_is_not_copied(models):
    code = MEASURE.format(n=N, model=str(models / "reduce_sum.onnx")) + """
x = np.ones(N, np.float32)
r = rise(lambda: s.run({"x": x}))
total = float(s.run({"x": x})[0])
assert total == N, total
wide = np.ones(2 * N, np.float32)[::2]  # the control: strided, so copied once
assert not wide.flags.c_contiguous
control = rise(lambda: s.run({"x": wide}))
print(r, control)
"""
    zero_copy_rise, control_rise = measure(code)
    assert control_rise > 96 * MIB, f"the copying control raised the peak by only {control_rise / MIB:.0f} MiB"
    assert zero_copy_rise < 32 * MIB, f"a C-contiguous input raised the peak by {zero_copy_rise / MIB:.0f} MiB"


def test_output_is_not_copied(models):
    code = MEASURE.format(n=N, model=str(models / "negate.onnx")) + """
x = np.ones(N, np.float32)
out = []
r = rise(lambda: out.extend(s.run({"x": x})))
assert out[0].shape == x.shape and out[0][0] == -1 and out[0].base is not None
print(r, out[0].nbytes)
"""
    output_rise, nbytes = measure(code)
    # dlrt allocates the output once (nbytes); a copy into numpy would add nbytes more.
    assert output_rise < nbytes * 1.5, f"one output of {nbytes / MIB:.0f} MiB raised the peak by {output_rise / MIB:.0f} MiB"


def test_input_pointer_is_used_in_place(models):
    # Same from the other side: dlrt reads the caller's buffer, so a change to
    # the array between two runs shows in the second run's result, and a view
    # into a larger array reads exactly the viewed elements.
    import numpy as np

    import dlrt

    s = dlrt.Session(str(models / "reduce_sum.onnx"))
    buf = np.zeros(1000, np.float32)
    view = buf[100:200]
    assert view.flags.c_contiguous and not view.flags.owndata
    assert float(s.run({"x": view})[0]) == 0
    buf[150] = 7
    assert float(s.run({"x": view})[0]) == 7
    buf[99] = buf[200] = 1000  # just outside the view
    assert float(s.run({"x": view})[0]) == 7
