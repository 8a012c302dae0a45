"""Outputs never alias the model's constants or each other (docs/python-session.md, Outputs).

An output that is a view of an initializer (Reshape or Unsqueeze of it with a runtime
shape, an If branch returning it) comes back as a copy: writing into the array cannot
change what later runs return. Two outputs that are one value (y and Identity(y)) come
back as independent arrays. Ordinary outputs stay zero-copy (test_zero_copy.py).
"""
import numpy as np
import pytest

import dlrt

WEIGHT = np.arange(6, dtype=np.float32)


@pytest.mark.parametrize("name, feeds, shape", [
    ("reshape_init", {"s": np.array([2, 3], np.int64)}, (2, 3)),
    ("unsqueeze_init", {"a": np.array([0], np.int64)}, (1, 6)),
    ("if_init", {"c": np.array(True)}, (6,)),
    ("if_init", {"c": np.array(False)}, (6,)),
])
def test_a_view_of_a_constant_is_a_copy(models, name, feeds, shape):
    s = dlrt.Session(str(models / f"{name}.onnx"))
    for _ in range(3):
        [out] = s.run(feeds)
        assert out.shape == shape and out.flags.writeable
        np.testing.assert_array_equal(out.ravel(), WEIGHT)
        out[...] = 999
    # The ONNX Runtime-style call and a report take the same path.
    [out], _ = s.run(feeds, report=True)
    np.testing.assert_array_equal(out.ravel(), WEIGHT)
    out[...] = 7
    [again] = s.run(None, feeds)
    np.testing.assert_array_equal(again.ravel(), WEIGHT)


def test_two_outputs_of_one_value_are_independent(models):
    s = dlrt.Session(str(models / "two_outputs.onnx"))
    y, z = s.run({"x": WEIGHT})
    assert not np.shares_memory(y, z)
    y[...] = 55
    np.testing.assert_array_equal(z, WEIGHT)
    z[...] = 66
    np.testing.assert_array_equal(y, np.full(6, 55, np.float32))
