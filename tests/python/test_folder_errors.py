"""Errors a Python user gets for a model that is not quite there: a Git LFS
pointer file in place of the model (a clone made without git-lfs), and a
Hugging Face hub id given where a folder is expected (dlrt does not download).
The same messages as the CLI's (tests/embed/embed_folder_errors_test.cpp)."""
import os
import shutil

import pytest

import dlrt
from conftest import ROOT

TINY = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")
POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452\n"
    "size 90405214\n"
)


def test_lfs_pointer_model_says_so(tmp_path):
    folder = tmp_path / "cloned"
    shutil.copytree(TINY, folder)
    (folder / "model.onnx").write_text(POINTER)
    with pytest.raises(dlrt.InvalidModel, match="Git LFS pointer file.*git lfs pull"):
        dlrt.Session(str(folder / "model.onnx"), device="cpu")
    with pytest.raises(dlrt.InvalidModel, match="Git LFS pointer file"):
        dlrt.Embedder(str(folder), device="cpu")


def test_hub_id_says_dlrt_does_not_download(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        with pytest.raises(dlrt.NotFound, match="looks like a Hugging Face hub id.*does not download"):
            dlrt.Embedder(name, device="cpu")


def test_model_file_names_its_folder():
    by_file = dlrt.Embedder(os.path.join(TINY, "model.onnx"), device="cpu")
    by_folder = dlrt.Embedder(TINY, device="cpu")
    assert by_file.model_name == "tiny_bert"
    assert (by_file.encode("a cat") == by_folder.encode("a cat")).all()
