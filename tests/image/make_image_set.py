#!/usr/bin/env python3
"""Writes the image test set under tests/image/data/ (committed): small
real-world-like images in every format, mode and orientation dlrt decodes,
written by Pillow (and, for what Pillow cannot write, by a few lines of PNG
chunk writing below), with the references transformers gives for them:

  <name>.<ext>           the image
  <name>.rgb.npy         transformers.image_utils.load_image(path) as uint8
                         [height, width, 3] (EXIF transpose, convert("RGB"))
  <name>.<config>.npy    CLIPImageProcessor / SiglipImageProcessor pixel_values
                         of that image for configs/<config>/preprocessor_config.json,
                         float32 [3, height, width] (Siglip2ImageProcessor's:
                         [max_num_patches, patch * patch * 3])
  bad/<name>             decompression bombs and malformed files, whose
                         expected errors manifest.json lists
  manifest.json          every image, its reference arrays, and the bad files

Run once by a developer, not by `make test` (the outputs are committed), in
a venv of the pins in scripts/pins.sh:

    python3 -m venv build/venv-images && . scripts/pins.sh && \\
      build/venv-images/bin/pip install $IMAGE_SET_PACKAGES
    build/venv-images/bin/python tests/image/make_image_set.py

The images were written with Pillow 12.0; the <config>.npy references are
Pillow 13's (whose resize runs the vertical pass first when the height
shrinks by more than twice the width, a level off here and there against
12's). `--references` rewrites only them (after a full run too), from the
committed images, in a venv of $IMAGE_REFERENCE_PACKAGES (transformers 5): each processor gets
load_image's pixels as a plain RGB image, as transformers 4 processed
load_image's result (5 also composites a colour the image's info still names
as transparent, which dlrt does not).

The "..._fast" configs are those configs (and a padded crop of odd size, a large nearest resize)
saved under the processor's "...Fast" name, with the references of
transformers' torchvision backend (torch's antialiased uint8 resize). Only
`--references` writes them, so its venv needs torch and torchvision too
($IMAGE_REFERENCE_PACKAGES); it loads every processor with an explicit backend
(pil for the plain names), so torchvision's presence changes no PIL reference.

The pixel content is synthetic but photo-like (smooth gradients, edges,
noise, blurred), from fixed seeds. The processors get
input_data_format="channels_last": transformers otherwise guesses the
channel axis from the shape and misreads images 1 or 3 pixels high.
"""
import io
import json
import os
import shutil
import struct
import sys
import zlib

import numpy as np
import PIL
from PIL import Image, ImageFilter
import transformers
from transformers import CLIPImageProcessor, Siglip2ImageProcessor, SiglipImageProcessor
from transformers.image_utils import load_image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")

# Processor configs: the two real defaults (OpenAI CLIP at 224 with a crop; SigLIP
# at 224 x 224) and small ones that reach every filter and branch (shortest edge,
# fixed non-square size, a crop larger than the resized image: zero padding).
CONFIGS = {
    "clip224": (CLIPImageProcessor, {}),
    "siglip224": (SiglipImageProcessor, {}),
    "clip_bicubic": (CLIPImageProcessor, dict(size={"shortest_edge": 40}, crop_size={"height": 32, "width": 32})),
    "siglip_bilinear": (SiglipImageProcessor, dict(size={"height": 24, "width": 40}, resample=2)),
    "clip_lanczos_pad": (CLIPImageProcessor, dict(size={"shortest_edge": 20}, crop_size={"height": 28, "width": 24},
                                                   resample=1, image_mean=[0.1, 0.2, 0.3], image_std=[0.9, 0.8, 0.7])),
    "siglip_hamming": (SiglipImageProcessor, dict(size={"height": 33, "width": 17}, resample=5, do_normalize=False)),
    "clip_box_int_sizes": (CLIPImageProcessor, dict(size=18, crop_size=16, resample=4)),
    "siglip_nearest": (SiglipImageProcessor, dict(size={"height": 21, "width": 26}, resample=0)),
    # SigLIP 2's NaFlex patches: each image resized to its own grid of at most 12 patches of 4 x 4.
    "siglip2_patches": (Siglip2ImageProcessor, dict(patch_size=4, max_num_patches=12)),
}
# The torchvision backend's references, under the "...Fast" type name: the small configs whose
# filters torchvision has (it has no box or Hamming), and a crop padded by an odd count (PIL and
# torchvision put the odd pixel on different sides).
FAST_CONFIGS = {
    "clip_bicubic_fast": CONFIGS["clip_bicubic"],
    "siglip_bilinear_fast": CONFIGS["siglip_bilinear"],
    "clip_lanczos_pad_fast": CONFIGS["clip_lanczos_pad"],
    "siglip_nearest_fast": CONFIGS["siglip_nearest"],
    "siglip2_patches_fast": CONFIGS["siglip2_patches"],
    "clip_bilinear_odd_pad_fast": (CLIPImageProcessor, dict(size={"shortest_edge": 15}, resample=2,
                                                            crop_size={"height": 24, "width": 24})),
    # Nearest to a size whose height + width passes 128, where torch's other nearest-exact kernel
    # (and formula) runs; the crop keeps the columns where the two formulas part on the tiny images.
    "clip_nearest_large_fast": (CLIPImageProcessor, dict(size={"shortest_edge": 97}, resample=0,
                                                         crop_size={"height": 8, "width": 8})),
}
# The 224 configs' arrays are 600 KB each: for one image each (an upscale with a crop, an odd
# RGBA to a fixed size); the small configs reach the same code on every image.
BIG_CONFIG_IMAGES = {"clip224": "jpeg_baseline_160x120", "siglip224": "png_rgba_odd_45x67"}


def photo(w, h, seed):
    """An RGB uint8 image with a photo's statistics: gradients, a few shapes, noise, blur."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.zeros((h, w, 3))
    for c in range(3):
        fx, fy, ph = rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0), rng.uniform(0, 6.3)
        img[..., c] = 128 + 90 * np.sin(fx * x / max(w, 1) * 3.1 + ph) * np.cos(fy * y / max(h, 1) * 3.1)
    for _ in range(3):  # hard-edged shapes, as objects in a scene
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.4) * max(w, h)
        mask = (x - cx) ** 2 + (y - cy) ** 2 < r * r
        img[mask] = rng.uniform(0, 255, 3)
    img += rng.normal(0, 6, img.shape)
    im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB")
    if min(w, h) > 4:
        im = im.filter(ImageFilter.GaussianBlur(0.7))
    return im


def exif_with_orientation(o):
    exif = Image.Exif()
    exif[0x0112] = o
    exif[0x010F] = "dlrt test camera"
    return exif.tobytes()


# A PNG writer for what Pillow does not write (16-bit RGB, RGBA and grey+alpha,
# 2-bit grey, Adam7 interlacing): filter 0 rows, one IDAT.
def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(w, h, depth, color_type, rows, interlace=False, extra=b""):
    """rows(x0, dx, y0, dy) -> list of raw scanline bytes of the pixels (x0 + k dx, y0 + m dy)."""
    if interlace:
        raw = b""
        for x0, y0, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
                               (0, 1, 1, 2)]:
            if x0 < w and y0 < h:
                raw += b"".join(b"\0" + r for r in rows(x0, dx, y0, dy))
    else:
        raw = b"".join(b"\0" + r for r in rows(0, 1, 0, 1))
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra + png_chunk(b"IDAT", zlib.compress(raw, 9)) +
            png_chunk(b"IEND", b""))


def samples_png(arr, depth, color_type, interlace=False, extra=b""):
    """A PNG of `arr` ([h, w, channels] of uint8 or uint16), big-endian samples."""
    h, w = arr.shape[:2]
    dt = ">u2" if depth == 16 else "u1"

    def rows(x0, dx, y0, dy):
        return [arr[y, x0::dx].astype(dt).tobytes() for y in range(y0, h, dy)]
    return png_bytes(w, h, depth, color_type, rows, interlace, extra)


def grey2_png(arr):
    h, w = arr.shape

    def rows(x0, dx, y0, dy):
        out = []
        for y in range(y0, h, dy):
            v = arr[y, x0::dx]
            v = np.concatenate([v, np.zeros((-len(v)) % 4, np.uint8)]).reshape(-1, 4)
            out.append(((v[:, 0] << 6) | (v[:, 1] << 4) | (v[:, 2] << 2) | v[:, 3]).astype(np.uint8).tobytes())
        return out
    return png_bytes(w, h, 2, 0, rows)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def saved(im, fmt, **kw):
    b = io.BytesIO()
    im.save(b, fmt, **kw)
    return b.getvalue()


def images():
    """(file name, bytes) of the set."""
    out = []
    p = photo(160, 120, 1)
    out.append(("jpeg_baseline_160x120.jpg", saved(p, "JPEG", quality=90)))
    out.append(("jpeg_progressive_97x61.jpg", saved(photo(97, 61, 2), "JPEG", progressive=True, quality=80)))
    out.append(("jpeg_444_33x50.jpg", saved(photo(33, 50, 3), "JPEG", subsampling=0, quality=95)))
    out.append(("jpeg_422_64x31.jpg", saved(photo(64, 31, 4), "JPEG", subsampling=1)))
    out.append(("jpeg_grey_50x40.jpg", saved(photo(50, 40, 5).convert("L"), "JPEG")))
    out.append(("jpeg_cmyk_48x36.jpg", saved(photo(48, 36, 6).convert("CMYK"), "JPEG", quality=90)))
    out.append(("jpeg_tiny_2x3.jpg", saved(photo(2, 3, 7), "JPEG")))
    out.append(("jpeg_wide_300x40.jpg", saved(photo(300, 40, 8), "JPEG", quality=85)))
    for o in range(1, 9):  # EXIF orientations on a non-square picture
        out.append((f"jpeg_exif_orientation{o}_40x24.jpg",
                    saved(photo(40, 24, 10 + o), "JPEG", exif=exif_with_orientation(o), quality=92)))
    out.append(("png_rgb_64x48.png", saved(photo(64, 48, 20), "PNG")))
    rgba = photo(45, 67, 21).convert("RGBA")
    a = np.array(rgba)
    a[..., 3] = np.linspace(0, 255, a.shape[1], dtype=np.uint8)[None, :]
    a[:10, :10, 3] = 0  # fully transparent pixels keep their colour in the file
    out.append(("png_rgba_odd_45x67.png", saved(Image.fromarray(a, "RGBA"), "PNG")))
    out.append(("png_grey_31x17.png", saved(photo(31, 17, 22).convert("L"), "PNG")))
    la = photo(30, 20, 23).convert("LA")
    out.append(("png_grey_alpha_30x20.png", saved(la, "PNG")))
    out.append(("png_1bit_37x23.png", saved(photo(37, 23, 24).convert("1"), "PNG")))
    pal = photo(50, 34, 25).quantize(16)
    out.append(("png_palette16_4bit_50x34.png", saved(pal, "PNG", bits=4)))
    palt = photo(42, 42, 26).quantize(200)
    out.append(("png_palette_trns_42x42.png", saved(palt, "PNG", transparency=5)))
    pal_alpha = photo(25, 19, 27).quantize(64)
    out.append(("png_palette_alpha_table_25x19.png",
                saved(pal_alpha, "PNG", transparency=bytes(range(0, 256, 4)))))
    g16 = (np.array(photo(29, 21, 28).convert("L"), np.uint16) * 257) // 3  # most values over 255
    g16[0, :5] = [0, 1, 200, 255, 256]
    out.append(("png_grey16_29x21.png", saved(Image.fromarray(g16.astype(np.uint16)), "PNG")))
    rgb16 = np.array(photo(26, 18, 29), np.uint16) * 257 + np.random.default_rng(29).integers(0, 256, (18, 26, 3))
    out.append(("png_rgb16_26x18.png", samples_png(rgb16, 16, 2)))
    rgba16 = np.concatenate([rgb16, np.full((18, 26, 1), 30000)], axis=2)
    out.append(("png_rgba16_26x18.png", samples_png(rgba16, 16, 6)))
    la16 = np.stack([rgb16[..., 0], rgb16[..., 1]], axis=2)
    out.append(("png_grey_alpha16_26x18.png", samples_png(la16, 16, 4)))
    out.append(("png_grey2bit_19x13.png", grey2_png(np.array(photo(19, 13, 30).convert("L")) >> 6)))
    out.append(("png_interlaced_53x38.png", samples_png(np.array(photo(53, 38, 31)), 8, 2, interlace=True)))
    exif_chunk = png_chunk(b"eXIf", exif_with_orientation(6))
    out.append(("png_exif_orientation6_36x20.png", samples_png(np.array(photo(36, 20, 32)), 8, 2, extra=exif_chunk)))
    out.append(("png_tiny_1x1.png", saved(photo(1, 1, 33), "PNG")))
    out.append(("png_column_1x7.png", saved(photo(1, 7, 34), "PNG")))
    out.append(("png_row_7x1.png", saved(photo(7, 1, 35), "PNG")))
    out.append(("png_strip_200x10.png", saved(photo(200, 10, 36), "PNG")))
    out.append(("webp_lossy_80x60.webp", saved(photo(80, 60, 40), "WEBP", quality=80)))
    out.append(("webp_lossless_alpha_41x29.webp", saved(photo(41, 29, 41).convert("RGBA"), "WEBP", lossless=True)))
    wa = np.array(photo(44, 30, 42).convert("RGBA"))
    wa[..., 3] = 128
    out.append(("webp_lossy_alpha_44x30.webp", saved(Image.fromarray(wa, "RGBA"), "WEBP", quality=70)))
    out.append(("webp_exif_orientation8_40x22.webp",
                saved(photo(40, 22, 43), "WEBP", quality=90, exif=exif_with_orientation(8))))
    frames = [photo(50, 40, 44 + i) for i in range(3)]
    out.append(("webp_animated_50x40.webp", saved(frames[0], "WEBP", save_all=True, append_images=frames[1:],
                                                   duration=100, loop=0, quality=80)))
    out.append(("gif_still_64x40.gif", saved(photo(64, 40, 50).quantize(128), "GIF")))
    out.append(("gif_not_interlaced_40x30.gif", saved(photo(40, 30, 51).quantize(64), "GIF", interlace=False)))
    gframes = [photo(48, 36, 52 + i).quantize(32) for i in range(3)]
    out.append(("gif_animated_48x36.gif", saved(gframes[0], "GIF", save_all=True, append_images=gframes[1:],
                                                 duration=80, loop=0)))
    gt = photo(32, 32, 55).quantize(16)
    out.append(("gif_transparent_32x32.gif", saved(gt, "GIF", transparency=3)))
    out.append(("gif_grey_20x15.gif", saved(photo(20, 15, 56).convert("L"), "GIF")))
    # A first frame smaller than the logical screen and placed inside it: the rest of the canvas
    # is the transparent index's colour (or index 0's without transparency).
    for name, kw in [("gif_partial_frame_52x41.gif", {}), ("gif_partial_frame_transparent_52x41.gif",
                                                           {"transparency": 2})]:
        g = bytearray(saved(photo(40, 30, 57).quantize(32), "GIF", interlace=False, **kw))
        g[6:10] = struct.pack("<HH", 52, 41)
        at = gif_first_descriptor(g)
        g[at + 1:at + 5] = struct.pack("<HH", 5, 7)
        out.append((name, bytes(g)))
    return out


def gif_first_descriptor(g):
    """The offset of a GIF's first image descriptor (0x2C), past the colour table and extensions."""
    at = 13 + ((3 << ((g[10] & 7) + 1)) if g[10] & 0x80 else 0)
    while g[at] == 0x21:
        at += 2
        while g[at]:
            at += 1 + g[at]
        at += 1
    assert g[at] == 0x2C
    return at


def bad_files(jpeg, png, webp, gif):
    """(name, bytes, expected error substring) of the bombs and malformed files."""
    out = []
    # A 50,000 x 50,000 grey PNG (2.5 G pixels): a valid header and the first rows' data.
    ihdr = struct.pack(">IIBBBBB", 50000, 50000, 1, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * (1 + 6250) * 64, 9)
    bomb = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", rows) + png_chunk(b"IEND", b"")
    out.append(("png_bomb_50000x50000.png", bomb, "decompression bomb"))
    # A complete, valid 10,000 x 10,000 1-bit PNG (100 M pixels) of a few KB.
    co = zlib.compressobj(9)
    data = b"".join(co.compress(b"\0" * 1251) for _ in range(10000)) + co.flush()
    full = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 10000, 10000, 1, 0, 0, 0, 0)) +
            png_chunk(b"IDAT", data) + png_chunk(b"IEND", b""))
    out.append(("png_bomb_10000x10000.png", full, "decompression bomb"))
    # A PNG 70,000 pixels wide and 1 high: few pixels, a side past the bound.
    side = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 70000, 1, 8, 0, 0, 0, 0)) +
            png_chunk(b"IDAT", zlib.compress(b"\0" * 70001, 9)) + png_chunk(b"IEND", b""))
    out.append(("png_side_70000x1.png", side, "a side over 65535"))
    # JPEG whose frame header claims 60,000 x 60,000.
    j = bytearray(jpeg)
    sof = j.find(b"\xff\xc0")
    j[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    out.append(("jpeg_bomb_60000x60000.jpg", bytes(j), "decompression bomb"))
    # GIF: a 65,535 x 65,535 logical screen around a small frame.
    g = bytearray(gif)
    g[6:10] = struct.pack("<HH", 65535, 65535)
    out.append(("gif_bomb_screen.gif", bytes(g), "decompression bomb"))
    # GIF: a small screen whose first frame sits at (65000, 65000).
    g = bytearray(gif)
    at = gif_first_descriptor(g)
    g[at + 1:at + 5] = struct.pack("<HH", 65000, 65000)
    out.append(("gif_bomb_frame_offset.gif", bytes(g), "decompression bomb"))
    # WebP (lossy, VP8): a frame header of 16,383 x 16,383.
    w = bytearray(webp)
    vp8 = w.find(b"\x9d\x01\x2a")
    w[vp8 + 3:vp8 + 7] = struct.pack("<HH", 16383, 16383)
    out.append(("webp_bomb_16383x16383.webp", bytes(w), "decompression bomb"))
    for name, b in [("jpeg", jpeg), ("png", png), ("webp", webp), ("gif", gif)]:
        out.append((f"truncated_half.{name}", b[:len(b) // 2], "malformed"))
        out.append((f"truncated_header.{name}", b[:20], "malformed"))
    p = bytearray(png)
    p[29] ^= 0xFF  # IHDR's CRC
    out.append(("png_bad_crc.png", bytes(p), "malformed PNG"))
    rng = np.random.default_rng(7)
    out.append(("jpeg_garbage.jpg", b"\xff\xd8\xff" + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(),
                "malformed JPEG"))
    out.append(("png_garbage.png", b"\x89PNG\r\n\x1a\n" + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(),
                "malformed PNG"))
    out.append(("not_an_image.txt", b"hello, this is text and not an image\n", "not an image dlrt decodes"))
    out.append(("empty.png", b"", "empty image"))
    out.append(("tiff_unsupported.tif", saved(photo(8, 8, 60), "TIFF"), "not an image dlrt decodes"))
    return out


def exif_hostile(jpeg):
    """JPEGs whose EXIF blocks are hostile but whose pixels decode: the orientation is
    then 1 (as absent), as Pillow does when the tag cannot be read. (name, bytes)."""
    out = []

    def with_app1(payload):
        seg = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
        return jpeg[:2] + seg + jpeg[2:]
    # IFD0 offset past the end; an entry count far past the block; a maximal APP1 of junk.
    out.append(("exif_offset_past_end.jpg", with_app1(b"Exif\0\0MM\0\x2a\xff\xff\xff\x00")))
    out.append(("exif_entry_count_65535.jpg", with_app1(b"Exif\0\0II\x2a\0\x08\0\0\0\xff\xff" + b"\0" * 40)))
    junk = np.random.default_rng(8).integers(0, 256, 65000, dtype=np.uint8).tobytes()
    out.append(("exif_huge_junk.jpg", with_app1(b"Exif\0\0II\x2a\0\x08\0\0\0" + junk)))
    return out


def references():
    """Rewrites every <name>.<config>.npy of manifest.json from the committed
    images and configs, and the manifest's reference versions."""
    with open(os.path.join(OUT, "manifest.json")) as f:
        manifest = json.load(f)
    from transformers import AutoImageProcessor
    from transformers.utils import is_torchvision_available
    if not is_torchvision_available():
        sys.exit("--references needs torch and torchvision ($IMAGE_REFERENCE_PACKAGES) for the _fast configs")
    procs = {}
    for name, (cls, kw) in {**CONFIGS, **FAST_CONFIGS}.items():
        d = os.path.join(OUT, "configs", name)
        fast = name in FAST_CONFIGS
        if not os.path.isdir(d):  # a config added since the full run
            os.makedirs(d)
            path = os.path.join(d, "preprocessor_config.json")
            cls(**kw).to_json_file(path)
            with open(path) as f:
                conf = json.load(f)
            conf["image_processor_type"] = cls.__name__.removesuffix("Pil") + ("Fast" if fast else "")
            with open(path, "w") as f:
                json.dump(conf, f, indent=2, sort_keys=True)
                f.write("\n")
        procs[name] = AutoImageProcessor.from_pretrained(d, backend="torchvision" if fast else "pil")
        assert procs[name].backend == ("torchvision" if fast else "pil"), (name, type(procs[name]))
    changed = 0
    for entry in manifest["images"]:
        stem = entry["file"].rsplit(".", 1)[0]
        plain = Image.fromarray(np.asarray(load_image(os.path.join(OUT, entry["file"]))).copy())
        entry["references"] += [c for c in {**CONFIGS, **FAST_CONFIGS} if c not in entry["references"] and
                                (c not in BIG_CONFIG_IMAGES or BIG_CONFIG_IMAGES[c] == stem)]
        for cname in entry["references"]:
            pv = procs[cname](images=plain, return_tensors="np", input_data_format="channels_last")
            arr = pv["pixel_values"][0].astype(np.float32)
            path = os.path.join(OUT, f"{stem}.{cname}.npy")
            if not os.path.exists(path) or not np.array_equal(np.load(path), arr):
                np.save(path, arr)
                changed += 1
    import torch
    import torchvision
    manifest["references_generator"] = {"transformers": transformers.__version__, "pillow": PIL.__version__,
                                        "numpy": np.__version__, "torch": torch.__version__,
                                        "torchvision": torchvision.__version__}
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"rewrote {changed} reference arrays")


def main():
    if sys.argv[1:] == ["--references"]:
        return references()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "bad"))
    procs = {}
    for name, (cls, kw) in CONFIGS.items():
        d = os.path.join(OUT, "configs", name)
        os.makedirs(d)
        proc = cls(**kw)
        proc.to_json_file(os.path.join(d, "preprocessor_config.json"))
        procs[name] = cls.from_pretrained(d)  # as a folder is read
    manifest = {"generator": {"transformers": transformers.__version__, "pillow": PIL.__version__,
                              "numpy": np.__version__}, "images": [], "bad": [], "exif_hostile": []}
    imgs = images()
    for fname, data in imgs:
        write(fname, data)
        path = os.path.join(OUT, fname)
        stem = fname.rsplit(".", 1)[0]
        rgb = np.array(load_image(path))
        np.save(os.path.join(OUT, stem + ".rgb.npy"), rgb)
        entry = {"file": fname, "width": rgb.shape[1], "height": rgb.shape[0], "references": []}
        for cname, proc in procs.items():
            if cname in BIG_CONFIG_IMAGES and stem != BIG_CONFIG_IMAGES[cname]:
                continue
            pv = proc(images=load_image(path), return_tensors="np", input_data_format="channels_last")
            arr = pv["pixel_values"][0].astype(np.float32)
            np.save(os.path.join(OUT, f"{stem}.{cname}.npy"), arr)
            entry["references"].append(cname)
        manifest["images"].append(entry)
    by = dict(imgs)
    for fname, data, err in bad_files(by["jpeg_baseline_160x120.jpg"], by["png_rgb_64x48.png"],
                                      by["webp_lossy_80x60.webp"], by["gif_not_interlaced_40x30.gif"]):
        write(os.path.join("bad", fname), data)
        manifest["bad"].append({"file": "bad/" + fname, "error": err})
    for fname, data in exif_hostile(by["jpeg_exif_orientation1_40x24.jpg"]):
        write(fname, data)
        rgb = np.array(load_image(os.path.join(OUT, fname)))
        np.save(os.path.join(OUT, fname.rsplit(".", 1)[0] + ".rgb.npy"), rgb)
        manifest["exif_hostile"].append({"file": fname, "width": rgb.shape[1], "height": rgb.shape[0]})
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(dp, n)) for dp, _, ns in os.walk(OUT) for n in ns)
    print(f"wrote {len(imgs)} images, {len(manifest['bad'])} bad files to {OUT} ({total} bytes)")


if __name__ == "__main__":
    sys.exit(main())
