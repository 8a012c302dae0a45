"""dlrt.Embedder.encode(images=...) on a clip folder: image files and encoded bytes through the
vision tower against torch's image_embeds (tests/models/image/*_reference.json), and the refusals."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dlrt
from conftest import ROOT

IMAGE_MODELS = os.path.join(ROOT, "tests", "models", "image")
BAD_IMAGES = os.path.join(ROOT, "tests", "image", "data", "bad")


def _clip(name):
    folder = os.path.join(IMAGE_MODELS, name)
    with open(folder + "_reference.json") as f:
        ref = json.load(f)
    return dlrt.Embedder(folder, device="cpu", threads=1), ref


def _cosines(got, want):
    return (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)


# clip_optimum_tiny, st5_clip_tiny, st57_clip_tiny, st6_clip_tiny and the SigLIP ones: optimum's one graph and
# sentence-transformers 5.3 / 5.7 / 6.2 folders (make_st_image_models.py), against the family's own vectors.
@pytest.mark.parametrize("name", ["clip_tiny", "siglip_tiny", "clip_optimum_tiny", "st5_clip_tiny", "st57_clip_tiny",
                                  "st6_clip_tiny", "siglip_optimum_tiny", "st57_siglip_tiny", "st6_siglip_tiny",
                                  "siglip2_tiny", "st57_siglip2_tiny", "st6_siglip2_tiny",
                                  "siglip2_mask_tiny"])
def test_images_as_paths_and_bytes_match_torch(name):
    e, ref = _clip(name)
    paths = [os.path.join(ROOT, p) for p in ref["images"]]
    want = np.asarray(ref["image_embeds"], dtype=np.float32)
    # Paths as str and pathlib.Path, three images a run (a batch boundary inside the list).
    got = e.encode(images=[p if i % 2 else pathlib.Path(p) for i, p in enumerate(paths)], batch_size=3)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert _cosines(got, want).min() >= 0.99999, _cosines(got, want)
    assert e.normalizes
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # The same files' bytes (bytes, bytearray, memoryview) give the same vectors.
    blobs = [pathlib.Path(p).read_bytes() for p in paths]
    kinds = [bytes, bytearray, memoryview]
    from_bytes = e.encode(images=[kinds[i % 3](b) for i, b in enumerate(blobs)], batch_size=3)
    np.testing.assert_array_equal(from_bytes, got)
    # One image gives one vector, as one str does.
    one = e.encode(images=blobs[0])
    assert one.shape == (want.shape[1],)
    np.testing.assert_allclose(one, got[0], atol=1e-6)  # another batch size: equal up to rounding
    assert e.encode(images=[]).shape == (0, want.shape[1])


@pytest.mark.parametrize("name", ["clip_tiny", "siglip_tiny"])
def test_numpy_rgb_arrays_give_the_files_vectors(name):
    # tests/image/data holds each image's RGB as load_image gives it (EXIF orientation applied).
    e, ref = _clip(name)
    paths = [os.path.join(ROOT, p) for p in ref["images"]]
    arrays = [np.load(os.path.splitext(p)[0] + ".rgb.npy") for p in paths]
    assert all(a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3 for a in arrays)
    got = e.encode(images=[a if i % 2 else np.asfortranarray(a) for i, a in enumerate(arrays)])
    np.testing.assert_array_equal(got, e.encode(images=paths))
    want = np.asarray(ref["image_embeds"], dtype=np.float32)
    assert _cosines(got, want).min() >= 0.99999
    # One [h, w, 3] array: one vector; [n, h, w, 3]: n rows (other batch sizes: equal up to rounding).
    np.testing.assert_allclose(e.encode(images=arrays[0]), got[0], atol=1e-6)
    np.testing.assert_allclose(e.encode(images=np.stack([arrays[0], arrays[0]])), got[[0, 0]], atol=1e-6)


def test_pil_images_as_transformers_processor_takes_them():
    # The processor's convert_to_rgb: PIL's convert("RGB") for a non-RGB mode, no EXIF orientation.
    Image = pytest.importorskip("PIL.Image", reason="pillow is not installed (PYTHON_TEST_PACKAGES of "
                                "scripts/pins.sh has it): the PIL inputs of encode(images=) are not tested")
    e, ref = _clip("clip_tiny")
    paths = [os.path.join(ROOT, p) for p in ref["images"]]
    opened = [Image.open(p) for p in paths]
    modes = [im.mode for im in opened]
    assert {"RGB", "RGBA", "CMYK"} <= set(modes) and len(set(modes)) >= 4, modes  # what the set covers
    got = e.encode(images=opened, batch_size=3)
    want = e.encode(images=[np.asarray(im.convert("RGB")) for im in opened])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(e.encode(images=opened[2]), got[2])  # one PIL image: one vector
    # Files without an EXIF orientation: torch's vectors of the same pixels (load_image's RGB).
    torch_want = np.asarray(ref["image_embeds"], dtype=np.float32)
    oriented = [i for i, p in enumerate(paths) if "exif_orientation" in p]
    assert len(oriented) == 1
    plain = [i for i in range(len(paths)) if i not in oriented]
    assert _cosines(got[plain], torch_want[plain]).min() >= 0.99999
    # An EXIF-rotated file's PIL image is taken unrotated, as the processor takes it; its path is rotated.
    k = oriented[0]
    assert not np.allclose(got[k], e.encode(images=paths[k]), atol=1e-4)
    # Modes PIL converts itself (transparency dropped by convert("RGB"), as the processor does).
    rng = np.random.default_rng(0)
    rgba = Image.fromarray(rng.integers(0, 256, (20, 30, 4), dtype=np.uint8), "RGBA")
    for im in (rgba, rgba.convert("LA"), rgba.convert("P"), rgba.convert("L"), rgba.convert("CMYK")):
        np.testing.assert_array_equal(e.encode(images=im), e.encode(images=np.asarray(im.convert("RGB"))),
                                      err_msg=im.mode)


def test_image_and_text_vectors_share_the_space_and_options():
    e, ref = _clip("clip_tiny")
    paths = [os.path.join(ROOT, p) for p in ref["images"][:2]]
    assert e.encode(images=paths, truncate_dim=5).shape == (2, 5)
    assert e.encode(images=paths, precision="int8").dtype == np.int8
    scores = e.similarity(e.encode(ref["texts"]), e.encode(images=paths))
    assert scores.shape == (len(ref["texts"]), 2)


def test_non_clip_folder_is_refused_naming_its_kind():
    e = dlrt.Embedder(os.path.join(ROOT, "tests", "embed", "data", "tiny_bert"), device="cpu", threads=1)
    with pytest.raises(dlrt.InvalidArgument, match=r"\(kind dense\): encode\(images=\.\.\.\) needs"):
        e.encode(images=[os.path.join(ROOT, "tests", "image", "data", "gif_grey_20x15.gif")])
    sparse = dlrt.Embedder(os.path.join(ROOT, "tests", "models", "retrieval", "splade_tiny"), device="cpu", threads=1)
    with pytest.raises(dlrt.InvalidArgument, match=r"kind sparse"):
        sparse.encode(images=[])


def test_texts_and_images_in_one_call_are_refused():
    e, ref = _clip("clip_tiny")
    image = os.path.join(ROOT, ref["images"][0])
    with pytest.raises(ValueError, match="not both in one call"):
        e.encode(["a cat"], images=[image])
    with pytest.raises(ValueError, match="texts only"):
        e.encode(images=[image], output_value="token_embeddings")
    with pytest.raises(ValueError, match="not to images"):
        e.encode(images=[image], prompt="a photo of ")
    with pytest.raises(TypeError, match="sentences .* or images"):
        e.encode()


def test_bad_images_are_refused_naming_their_index():
    e, ref = _clip("clip_tiny")
    good = os.path.join(ROOT, ref["images"][0])
    with pytest.raises(dlrt.InvalidArgument, match=r"images\[1\]"):
        e.encode(images=[good, os.path.join(BAD_IMAGES, "jpeg_garbage.jpg")])
    with pytest.raises(dlrt.InvalidArgument, match=r"images\[2\]"):  # the index counts across batches
        e.encode(images=[good, good, b"not an image"], batch_size=2)
    with pytest.raises(dlrt.IoError, match=r"images\[0\]: cannot read"):
        e.encode(images=[os.path.join(BAD_IMAGES, "no_such_file.png")])
    with pytest.raises(TypeError, match="encoded bytes"):
        e.encode(images=[good, 1.5])
    for bad in (np.zeros((4, 4, 3), np.float32), np.zeros((4, 4), np.uint8), np.zeros((0, 4, 3), np.uint8)):
        with pytest.raises(dlrt.InvalidArgument, match=r"images\[0\] is a numpy array .* uint8 \[height, width, 3\]"):
            e.encode(images=[bad])
    with pytest.raises(TypeError, match="images must be"):
        e.encode(images=object())


_BOMB_SCRIPT = r"""
import json, resource, sys
import dlrt
folder, good, data = sys.argv[1], sys.argv[2], sys.argv[3]
with open(data + "/manifest.json") as f:
    bad = json.load(f)["bad"]
e = dlrt.Embedder(folder, device="cpu", threads=1)
e.encode(images=[good])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
refused = []
for entry in bad:
    path = data + "/" + entry["file"]
    with open(path, "rb") as f:
        blob = f.read()
    for image in (path, blob):
        try:
            e.encode(images=[image])
            refused.append([entry["file"], None])
        except dlrt.InvalidArgument as err:
            refused.append([entry["file"], str(err)])
print(json.dumps({"growth_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, "refused": refused}))
"""


def test_bombs_and_malformed_images_are_refused_within_memory():
    # Every bomb and malformed file of tests/image/data/manifest.json, as a path and as bytes, in a process of
    # its own: InvalidArgument with the decoder's reason, and the peak RSS within 16 MiB of what it was after a
    # real image (a 50,000 x 50,000 PNG's pixels would be 7 GB).
    data = os.path.join(ROOT, "tests", "image", "data")
    with open(os.path.join(data, "manifest.json")) as f:
        bad = json.load(f)["bad"]
    with open(os.path.join(IMAGE_MODELS, "clip_tiny_reference.json")) as f:
        ref_images = json.load(f)["images"]
    run = subprocess.run([sys.executable, "-c", _BOMB_SCRIPT, os.path.join(IMAGE_MODELS, "clip_tiny"),
                          os.path.join(ROOT, ref_images[0]), data],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(out["refused"]) == 2 * len(bad) >= 30
    reasons = {entry["file"]: entry["error"] for entry in bad}
    for file, message in out["refused"]:
        assert message is not None, f"{file} was embedded"
        assert reasons[file] in message, (file, message)
    assert out["growth_kib"] < 16 * 1024, out["growth_kib"]
