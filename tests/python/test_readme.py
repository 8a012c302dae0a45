"""The README's Python snippets (each fenced block after a "<!-- snippet: python -->"
line) run as they are, so the docs cannot rot."""
import os
import re
import subprocess
import sys

from conftest import ROOT


def snippets():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"<!-- snippet: python -->\n```python\n(.*?)```", text, re.S)


def run(code, arg):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code, arg], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_has_the_snippets():
    assert len(snippets()) == 2


def test_session_snippet(test_models):
    out = run(snippets()[0], os.path.join(test_models, "mlp.onnx"))
    assert re.fullmatch(r"probs\[0\] = [0-9.]+, ran on \S+\n", out), out


def test_embedder_snippet():
    out = run(snippets()[1], os.path.join(ROOT, "tests", "embed", "data", "tiny_bert"))
    assert out == "(2, 8) 8 16\n", out
