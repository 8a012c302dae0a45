"""dlrt.Session: model info, run, output selection, reports, placement, dtypes, strings."""
import gc
import os
import pathlib

import numpy as np
import pytest

import dlrt


def test_inputs_and_outputs_info(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"))
    [x] = s.inputs
    assert (x.name, x.dtype, x.shape, x.dtype_name, x.is_tensor) == ("x", np.dtype(np.float32), (2, 4), "float32", True)
    [y] = s.outputs
    assert (y.name, y.dtype, y.shape) == ("probs", np.dtype(np.float32), (2, 3))
    assert "TensorInfo(name='x'" in repr(x)


def test_dynamic_dims_are_none(test_models):
    s = dlrt.Session(os.path.join(test_models, "dynamic_batch.onnx"))
    assert s.inputs[0].shape == (None, None)
    assert s.outputs[0].shape == (None, None)


def test_run_matches_expected(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"))
    x = np.load(os.path.join(test_models, "mlp_input.npy"))
    want = np.load(os.path.join(test_models, "mlp_expected.npy"))
    [got] = s.run({"x": x})
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_path_like_and_bytes(test_models, models):
    path = os.path.join(test_models, "mlp.onnx")
    x = np.load(os.path.join(test_models, "mlp_input.npy"))
    [a] = dlrt.Session(pathlib.Path(path)).run({"x": x})
    data = pathlib.Path(path).read_bytes()
    [b] = dlrt.Session(data).run({"x": x})
    [c] = dlrt.Session(bytearray(data)).run({"x": x})
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    with pytest.raises(TypeError):
        dlrt.Session(42)


def test_options_are_accepted(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"), device="cpu", strict=True, threads=1,
                     warm_start=False, cpu_precision="f32", backend_options={"performance_hint": "LATENCY"})
    assert s.placement().partitions[0].precision.startswith("f32")


def test_max_tensor_bytes_bounds_a_run(models):
    s = dlrt.Session(str(models / "negate.onnx"), max_tensor_bytes=1024)
    [y] = s.run({"x": np.ones(64, np.float32)})  # 256 bytes: under the limit
    np.testing.assert_array_equal(y, -np.ones(64, np.float32))
    with pytest.raises(dlrt.OutOfMemory, match="max_tensor_bytes"):
        s.run({"x": np.ones(1024, np.float32)})  # a 4 KiB output
    [y] = s.run({"x": np.ones(4, np.float32)})  # the session stays usable
    assert y.shape == (4,)
    with pytest.raises(dlrt.InvalidArgument, match="max_tensor_bytes"):
        dlrt.Session(str(models / "negate.onnx"), max_tensor_bytes=-1)


def test_session_outputs_keep_only_the_named_outputs(test_models):
    # two_towers: a = Relu(x), b = Neg(z), c = a + b
    path = os.path.join(test_models, "two_towers.onnx")
    s = dlrt.Session(path, outputs=["b"])
    assert [o.name for o in s.outputs] == ["b"]
    assert [i.name for i in s.inputs] == ["z"]  # x feeds only a and c
    [b] = s.run({"z": np.array([1, -2, 3], np.float32)})
    np.testing.assert_array_equal(b, [-1, 2, -3])
    with pytest.raises(dlrt.InvalidArgument):
        s.run({"x": np.ones(3, np.float32), "z": np.ones(3, np.float32)})  # x is no input any more
    s = dlrt.InferenceSession(path, outputs=["c", "a"])
    assert [o.name for o in s.get_outputs()] == ["a", "c"]  # the model's order
    assert len(dlrt.Session(path).outputs) == 3
    with pytest.raises(dlrt.InvalidArgument, match=r'"logits", which is not an output of the model '
                       r'\(its outputs: a, b, c\)'):
        dlrt.Session(path, outputs=["b", "logits"])
    for bad, message in (("b", "not a single string"), ([], "outputs is empty"), ([1], "output names")):
        with pytest.raises(dlrt.InvalidArgument, match=message):
            dlrt.Session(path, outputs=bad)


def test_output_names_pick_and_order(models):
    s = dlrt.Session(str(models / "three_outputs.onnx"))
    assert [o.name for o in s.outputs] == ["sum", "prod", "neg"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    all_out = s.run({"x": x})
    np.testing.assert_array_equal(all_out[0], x + 1)
    np.testing.assert_array_equal(all_out[1], x * 2)
    np.testing.assert_array_equal(all_out[2], -x)
    neg, total = s.run({"x": x}, output_names=["neg", "sum"])
    np.testing.assert_array_equal(neg, -x)
    np.testing.assert_array_equal(total, x + 1)
    [prod] = s.run({"x": x}, output_names=("prod",))
    np.testing.assert_array_equal(prod, x * 2)


def test_report_and_placement(test_models):
    s = dlrt.Session(os.path.join(test_models, "conv_net.onnx"), device="cpu")
    placed = s.placement()
    assert isinstance(placed, dlrt.RunReport)
    [p] = placed.partitions
    assert (p.backend, p.device, p.degraded, p.reason) == ("cpu", "cpu:0", False, "")
    assert p.node_count > 0
    x = np.zeros(s.inputs[0].shape, np.float32)
    outputs, report = s.run({"image": x}, report=True)
    assert isinstance(outputs, list) and outputs[0].shape == (1, 10)
    assert report.run_ms > 0
    [rp] = report.partitions
    assert rp.backend == "cpu" and rp.node_count == p.node_count and rp.time_ms >= 0 and rp.precision
    d = report.as_dict()
    assert set(d) == {"partitions", "run_ms"}
    assert set(d["partitions"][0]) == {"backend", "device", "node_count", "degraded", "reason", "time_ms", "precision",
                                       "vector_isa"}
    assert rp.vector_isa in ("avx512", "avx2", "neon", "generic")
    assert "PartitionReport(backend='cpu'" in repr(report)


def test_lists_and_scalars_take_the_model_dtype(models):
    s = dlrt.Session(str(models / "int64_add.onnx"))
    [y] = s.run({"i": [1, 2, 3, 4]})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, [2, 4, 6, 8])


def test_non_contiguous_input_is_copied_and_right(models):
    s = dlrt.Session(str(models / "three_outputs.onnx"))
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = base[:, ::2]  # (3, 2) strided
    assert not view.flags.c_contiguous
    [total] = s.run({"x": base.T[:3, :3]}, output_names=["sum"])  # a transposed view
    np.testing.assert_array_equal(total, np.ascontiguousarray(base.T[:3, :3]) + 1)
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    [neg] = s.run({"x": fortran}, output_names=["neg"])
    np.testing.assert_array_equal(neg, -fortran)


def test_read_only_input(models):
    s = dlrt.Session(str(models / "three_outputs.onnx"))
    x = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), dtype=np.float32).reshape(2, 3)
    assert not x.flags.writeable
    [neg] = s.run({"x": x}, output_names=["neg"])
    np.testing.assert_array_equal(neg, -x)


def test_outputs_own_their_memory(models):
    s = dlrt.Session(str(models / "three_outputs.onnx"))
    x = np.ones((2, 3), np.float32)
    a, b, c = s.run({"x": x})
    del s
    gc.collect()
    # The arrays outlive the session and are writable, independent arrays.
    a += 10
    np.testing.assert_array_equal(a, np.full((2, 3), 12, np.float32))
    np.testing.assert_array_equal(b, np.full((2, 3), 2, np.float32))
    assert a.flags.writeable and a.flags.c_contiguous


def test_output_that_is_the_input_is_not_the_callers_memory(models):
    s = dlrt.Session(str(models / "identity.onnx"))
    x = np.arange(5, dtype=np.float32)
    [y] = s.run({"x": x})
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)
    del x
    gc.collect()
    np.testing.assert_array_equal(y, np.arange(5, dtype=np.float32))


def test_writing_an_output_does_not_change_the_model(models):
    s = dlrt.Session(str(models / "constant_output.onnx"))
    table, _ = s.run({"x": np.zeros(2, np.float32)})
    table[:] = 99
    again, _ = s.run({"x": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(again, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_string_tensors_both_ways(models):
    s = dlrt.Session(str(models / "strings.onnx"))
    assert s.inputs[0].dtype == np.dtype(object) and s.inputs[0].dtype_name == "string"
    [out] = s.run({"s": np.array(["héllo", "wörld", ""])})
    assert out.dtype == object and out.tolist() == ["héllo", "wörld", ""]
    [out] = s.run({"s": ["a", b"raw \xff"]})  # bytes that are not UTF-8 come back as bytes
    assert out.tolist() == ["a", b"raw \xff"]
    with pytest.raises(dlrt.InvalidArgument, match="str or bytes"):
        s.run({"s": np.array([1, "x"], dtype=object)})


def test_zero_dim_and_empty(models):
    s = dlrt.Session(str(models / "reduce_sum.onnx"))
    [total] = s.run({"x": np.arange(4, dtype=np.float32)})
    assert total.shape == () and total == 6
    [total] = s.run({"x": np.zeros(0, np.float32)})
    assert total == 0


def test_help_is_useful():
    assert "device spec" in dlrt.Session.__doc__
    assert "output_names" in dlrt.Session.run.__doc__
    assert "normalize_embeddings" in dlrt.Embedder.encode.__doc__


def test_map_keys_must_be_of_the_maps_key_type(models):
    # np.asarray(keys, str) would turn the int 1 into "1" (and a float key into an int for an
    # int64 map): keys the vocabulary then silently misses. ONNX Runtime raises a type error.
    s = dlrt.Session(str(models / "dictvec_str.onnx"))
    [y] = s.run({"x": {"a": 1.0, "c": 3.0}})
    np.testing.assert_array_equal(y, [[1, 0, 3]])
    for bad, key in [({1: 1.0}, "int 1"), ({"a": 1.0, 2: 2.0}, "int 2"), ({b"a": 1.0}, "bytes b'a'")]:
        with pytest.raises(TypeError, match=f"input 'x' is a map\\(string,tensor\\(float\\)\\): its keys must be str, "
                                            f"got {key}"):
            s.run({"x": bad})
    s = dlrt.Session(str(models / "dictvec_int.onnx"))
    [y] = s.run({"x": {1: 1.0, np.int64(3): 3.0}})
    np.testing.assert_array_equal(y, [[1, 0, 3]])
    for bad, key in [({"1": 1.0}, "str '1'"), ({1.5: 1.0}, "float 1.5"), ({True: 1.0}, "bool True")]:
        with pytest.raises(TypeError, match=f"input 'x' is a map\\(int64,tensor\\(float\\)\\): its keys must be int, "
                                            f"got {key}"):
            s.run({"x": bad})
