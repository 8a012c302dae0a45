"""Writes ONNX's backend test cases of the installed onnx package to a folder.

    python make_onnx_testdata.py OUT_DIR

OUT_DIR/node/<case>/ gets every node case that onnx.backend.test.case.node
generates (model.onnx, test_data_set_N/input_K.pb and output_K.pb, as ONNX's
own test data is laid out), and OUT_DIR/{pytorch-converted,pytorch-operator,
simple}/ copies of the cases the wheel ships as files. The onnx wheel on PyPI
carries the node collectors but not their data; `dlrt conformance OUT_DIR/...`
then runs them. Prints the count per folder. Run with the venv of
scripts/pins.sh's CONFORMANCE_PACKAGES (onnx pinned to the release dlrt's model
layer is built from).
"""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def write_value(path, value, vtype, name):
    if vtype.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif vtype.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif vtype.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif isinstance(value, onnx.TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    node_dir = os.path.join(out, "node")
    if os.path.exists(node_dir):
        shutil.rmtree(node_dir)
    count = 0
    for case in node_cases.collect_testcases(None):
        d = os.path.join(node_dir, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for j, v in enumerate(inputs):
                gi = case.model.graph.input[j]
                write_value(os.path.join(ds, f"input_{j}.pb"), v, gi.type, gi.name)
            for j, v in enumerate(outputs):
                go = case.model.graph.output[j]
                write_value(os.path.join(ds, f"output_{j}.pb"), v, go.type, go.name)
        count += 1
    print(f"node: {count} cases")
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for kind in ("pytorch-converted", "pytorch-operator", "simple"):
        src = os.path.join(shipped, kind)
        dst = os.path.join(out, kind)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
        print(f"{kind}: {len(os.listdir(dst))} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
