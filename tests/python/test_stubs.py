"""The type stubs (python/dlrt/*.pyi) match the module: _dlrt.pyi is what nanobind's
stubgen writes for the built module, and __init__.pyi declares every public name,
the exception classes with the module's bases and docstrings."""
import ast
import os
import subprocess
import sys

import pytest

import dlrt
from conftest import ROOT

PKG = os.path.join(ROOT, "python", "dlrt")


def test_native_stub_is_current(tmp_path):
    pytest.importorskip("nanobind", reason="nanobind (its stubgen) is not installed in this python")
    out = tmp_path / "_dlrt.pyi"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "dlrt._dlrt", "-o", str(out)],
                   check=True, env=env)
    with open(os.path.join(PKG, "_dlrt.pyi")) as f:
        committed = f.read()
    assert out.read_text() == committed, (
        "python/dlrt/_dlrt.pyi is stale: regenerate it with "
        "PYTHONPATH=BUILD/python BUILD/python-venv/venv/bin/python -m nanobind.stubgen -m dlrt._dlrt -o python/dlrt/_dlrt.pyi")


def test_package_stub_declares_every_public_name():
    with open(os.path.join(PKG, "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    declared, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            declared.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.ClassDef):
            declared.add(node.name)
            classes[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
    assert set(dlrt.__all__) <= declared, set(dlrt.__all__) - declared
    errors = [n for n in dlrt.__all__ if isinstance(getattr(dlrt, n), type) and issubclass(getattr(dlrt, n), dlrt.Error)]
    assert len(errors) == 13  # Error and one class per status code but Ok
    for name in errors:
        cls = getattr(dlrt, name)
        stub = classes[name]
        assert [ast.unparse(b) for b in stub.bases] == [b.__name__ for b in cls.__bases__], name
        assert ast.get_docstring(stub) == cls.__doc__.strip(), name
