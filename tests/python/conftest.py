"""Fixtures of the dlrt Python tests (run by scripts/run_tests.sh, step 5).

Run by hand after building the module (docs/python.md):
    PYTHONPATH=BUILD/python BUILD/python-venv/venv/bin/python -m pytest tests/python
Environment: DLRT_TEST_MODELS (the generated test models, default build/test_models),
DLRT_ZOO_DIR (the model zoo, default ../shared/models when there), DLRT_MODEL_PYTHON
(the python with onnx that writes the tests' own models, default /usr/bin/python3).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "embed"))
import model_folder  # noqa: E402  (tests/embed/model_folder.py)


def _zoo_dir():
    env = os.environ.get("DLRT_ZOO_DIR")
    if env:
        return env
    default = os.path.join(os.path.dirname(ROOT), "shared", "models")
    return default if os.path.isfile(os.path.join(default, "manifest.json")) else ""


ZOO_DIR = _zoo_dir()


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """The tests' own small models (tests/python/make_models.py), written once per session."""
    out = tmp_path_factory.mktemp("models")
    python = os.environ.get("DLRT_MODEL_PYTHON", "/usr/bin/python3")
    subprocess.run([python, os.path.join(os.path.dirname(__file__), "make_models.py"), str(out)], check=True)
    return out


@pytest.fixture(scope="session")
def test_models():
    """The project's generated test models (tests/models/make_test_models.py)."""
    path = os.environ.get("DLRT_TEST_MODELS") or os.path.join(ROOT, "build", "test_models")
    if not os.path.isfile(os.path.join(path, "STAMP")):
        pytest.fail(f"no test models in {path}: run /usr/bin/python3 tests/models/make_test_models.py {path} "
                    "or set DLRT_TEST_MODELS")
    return path


@pytest.fixture(scope="session")
def minilm_folder(tmp_path_factory):
    """The zoo's minilm_l6 as a sentence-transformers folder (tests/embed/model_folder.py):
    vocab.txt in BERT's layout, tokenizer_config.json, model.onnx. Skips without the zoo."""
    if not ZOO_DIR or not os.path.isfile(os.path.join(ZOO_DIR, "minilm_l6.onnx")):
        pytest.skip("no zoo with minilm_l6.onnx (DLRT_ZOO_DIR)")
    vocab = model_folder.bert_vocab_path(ZOO_DIR)
    if not os.path.isfile(vocab):
        pytest.skip(f"no BERT vocabulary at {vocab}")
    folder = tmp_path_factory.mktemp("minilm")
    model_folder.make_minilm_folder(ZOO_DIR, str(folder), vocab)
    return folder


def run_python(code):
    """Runs `code` in a fresh interpreter with this one's sys.path; returns its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_sparse_values(values, want, what=""):
    """A sparse row's weights against a library's: |got - want| <= 1e-6 + 1e-4 |want| (float32 sums in
    another order move a weight near zero, a cancelled logit, by about 1e-7). numpy's sum form of the
    bound that tests/embed/retrieval_reference.h's expect_sparse_row takes as max(1e-4 |want|, 1e-6)."""
    import numpy as np

    np.testing.assert_allclose(values, np.array(want, dtype=np.float32), rtol=1e-4, atol=1e-6, err_msg=what)


def pytest_collection_modifyitems(session, config, items):
    """test_ray.py runs last: after a local Ray cluster has run in this process, the
    peak-memory checks of test_zero_copy.py (in child interpreters) no longer see the
    control copy (seen with ray 2.60.0); the cause is not yet known."""
    items.sort(key=lambda item: item.nodeid.split("::")[0].endswith("test_ray.py"))
