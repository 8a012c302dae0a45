#!/usr/bin/env python3
"""Writes the image test models under tests/models/image/ (committed): tiny
random-weight models of the image families dlrt serves, made with
transformers and exported to ONNX the way their users ship them, with the
outputs of transformers (in torch) for committed images and texts as the
reference.

Run once by a developer, not by `make test` (the tests read the committed
folders without torch). It needs a venv with IMAGE_MODEL_PACKAGES of
scripts/pins.sh:

    python3 -m venv /tmp/venv-image
    . scripts/pins.sh && /tmp/venv-image/bin/pip install $IMAGE_MODEL_PACKAGES
    /tmp/venv-image/bin/python tests/models/make_image_models.py [--only NAME ...]

Families (one function each, `make_<name>(out_dir)`, listed in FAMILIES):

  clip_tiny  transformers' CLIPModel from a small CLIPConfig (2 layers, hidden
             32, projection 16, 32 x 32 images in 8 x 8 patches) with a
             byte-level BPE vocabulary of its own (CLIPTokenizerFast), exported
             as separate towers as transformers.js and FastEmbed repositories
             ship them: onnx/text_model.onnx (input_ids, attention_mask ->
             text_embeds, last_hidden_state) and onnx/vision_model.onnx
             (pixel_values -> image_embeds, last_hidden_state), beside
             config.json, preprocessor_config.json and the tokenizer files.
             clip_tiny_reference.json holds get_text_features of TEXTS (one
             padded batch, CLIPProcessor's tokenizer) and get_image_features
             of IMAGES as transformers' load_image and CLIPProcessor give them.

  siglip_tiny  transformers' SiglipModel the same way (make_siglip_tiny says
             what differs: texts padded to max_length, no attention mask).
             Made with transformers 5.24 and Pillow 13 (--only siglip_tiny),
             whose resize order dlrt follows (tests/image/make_image_set.py).

  siglip2_tiny  transformers' Siglip2Model (SigLIP 2's NaFlex variable
             resolution) the same way, made with transformers 5.24
             (make_siglip2_tiny says what its towers take), with a Gemma-style
             tokenizer saved as transformers' SigLIP 2 conversion saves the
             real one (siglip2_tokenizer); its texts are SIGLIP2_TEXTS.

  siglip2_mask_tiny  the same with the tokenizer config Siglip2Tokenizer's
             class defaults leave (padded on the left, a mask returned) and a
             text tower taking the mask (make_siglip2_mask_tiny).

Weights are random (fixed seeds). The script checks ONNX Runtime on the
exported towers against torch.
"""
import collections
import json
import os
import shutil

import numpy as np
import torch

from families_main import main as families_main

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "image")

# Texts for the reference: mixed lengths in one padded batch, an empty text,
# punctuation, accents (byte-level pieces) and one past the 32-token length.
TEXTS = [
    "a photo of a cat",
    "a diagram of a red fox jumping over a lazy dog.",
    "",
    "Café, naïve and résumé!",
    " ".join(["the river bank and the money bank"] * 6),
]

# SigLIP 2's texts: TEXTS with upper case and accents its tokenizer lowercases
# (a dotted capital I becomes two code points), letters outside the
# vocabulary (byte fallback), and the long one past its 64 positions.
SIGLIP2_TEXTS = TEXTS + ["A PHOTO OF A CAT", "Ünïcödé ÀÉÎ İstanbul Straße ǅ", " Two  spaces\tand tab "]

# Committed images of the image library's test set (tests/image/data/):
# each format, EXIF orientation, CMYK, 16-bit, transparency, odd sizes.
IMAGES = [
    "tests/image/data/jpeg_baseline_160x120.jpg",
    "tests/image/data/jpeg_exif_orientation6_40x24.jpg",
    "tests/image/data/jpeg_cmyk_48x36.jpg",
    "tests/image/data/png_rgba_odd_45x67.png",
    "tests/image/data/png_grey16_29x21.png",
    "tests/image/data/webp_lossy_80x60.webp",
    "tests/image/data/gif_partial_frame_transparent_52x41.gif",
    "tests/image/data/png_strip_200x10.png",
]


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, ensure_ascii=False)
        f.write("\n")


def learn_merges(words, merges_wanted):
    """BPE merges learnt from `words` (a Counter of symbol tuples): each time
    the most frequent adjacent pair (of equals, the greatest) merged, until
    `merges_wanted` or no pair is left."""
    merges = []
    for _ in range(merges_wanted):
        pairs = collections.Counter()
        for w, n in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        merged = collections.Counter()
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def small_clip_vocab(texts, merges_wanted=80):
    """A CLIP-style byte-level BPE vocabulary: the 256 byte symbols, each again
    with CLIP's end-of-word "</w>", `merges_wanted` merges learnt from `texts`
    (lowercased, split on spaces), then the two special tokens."""
    try:
        from transformers.models.clip.tokenization_clip import bytes_to_unicode
    except ImportError:  # transformers 5
        from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    vocab = symbols + [s + "</w>" for s in symbols]
    b2u = bytes_to_unicode()
    words = collections.Counter()
    for text in texts:
        for w in text.lower().split():
            chars = [b2u[b] for b in w.encode("utf-8")]
            chars[-1] += "</w>"
            words[tuple(chars)] += 1
    merges = learn_merges(words, merges_wanted)
    vocab += [a + b for a, b in merges] + ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(vocab)}, merges


class TextTower(torch.nn.Module):
    """CLIPTextModelWithProjection's outputs from CLIPModel's weights."""

    def __init__(self, clip):
        super().__init__()
        self.text_model = clip.text_model
        self.text_projection = clip.text_projection

    def forward(self, input_ids, attention_mask):
        out = self.text_model(input_ids=input_ids, attention_mask=attention_mask)
        return self.text_projection(out.pooler_output), out.last_hidden_state


class VisionTower(torch.nn.Module):
    """CLIPVisionModelWithProjection's outputs from CLIPModel's weights."""

    def __init__(self, clip):
        super().__init__()
        self.vision_model = clip.vision_model
        self.visual_projection = clip.visual_projection

    def forward(self, pixel_values):
        out = self.vision_model(pixel_values=pixel_values)
        return self.visual_projection(out.pooler_output), out.last_hidden_state


def export(module, args, path, input_names, output_names, dynamic_axes):
    torch.onnx.export(module, args, path, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes, opset_version=17, dynamo=False)


def check_onnx(path, feeds, want, what):
    import onnxruntime as ort

    got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        raise SystemExit(f"ONNX Runtime on the {what} tower differs from torch: {np.abs(got - want).max()}")


def fresh_work(out_dir):
    """The scratch folder beside out_dir, empty."""
    work = out_dir + ".work"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return work


def bpe_tokenizer(work, max_length):
    """small_clip_vocab of TEXTS and a few words as CLIPTokenizerFast (converted
    from the slow tokenizer, files in work): (tokenizer, vocab)."""
    from transformers import CLIPTokenizer, CLIPTokenizerFast

    vocab, merges = small_clip_vocab(TEXTS + ["photo cat dog red fox picture of an image"])
    with open(os.path.join(work, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(work, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    slow = CLIPTokenizer(os.path.join(work, "vocab.json"), os.path.join(work, "merges.txt"),
                         model_max_length=max_length)
    slow.save_pretrained(os.path.join(work, "slow"))
    return CLIPTokenizerFast.from_pretrained(os.path.join(work, "slow"), from_slow=True), vocab


def bpe_special(vocab):
    """A config's special token ids for bpe_tokenizer's vocab ("<|endoftext|>" pads and ends)."""
    eos = vocab["<|endoftext|>"]
    return dict(bos_token_id=vocab["<|startoftext|>"], eos_token_id=eos, pad_token_id=eos)


def tiny_config(config_class, vocab_size, max_length, special, vision, **top):
    """config_class (CLIPConfig, SiglipConfig, Siglip2Config) for 2 layers of
    hidden 32 in each tower: the text tower's of vocab_size and max_length
    positions with the `special` token ids, the vision tower's with `vision`
    (its image or patch sizes); `top` the model's own settings."""
    return config_class(
        text_config=dict(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=max_length, **special),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           **vision),
        **top)


def save_hf(work, model, *processors):
    """The model and its tokenizer and processors as a transformers folder in work: its path."""
    hf = os.path.join(work, "hf")
    for part in (model,) + processors:
        part.save_pretrained(hf)
    return hf


def publish(work, hf, out_dir, names, optional=()):
    """out_dir afresh: `names` (and those of `optional` that exist) from the
    transformers folder hf, its onnx/ folder; then work removed."""
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    for name in names + [n for n in optional if os.path.exists(os.path.join(hf, n))]:
        shutil.copy(os.path.join(hf, name), os.path.join(out_dir, name))
    shutil.copytree(os.path.join(hf, "onnx"), os.path.join(out_dir, "onnx"))
    shutil.rmtree(work)


def make_clip_tiny(out_dir):
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor
    from transformers.image_utils import load_image

    work = fresh_work(out_dir)
    max_length = 32
    tokenizer, vocab = bpe_tokenizer(work, max_length)
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer)

    torch.manual_seed(77)
    config = tiny_config(CLIPConfig, len(vocab), max_length, bpe_special(vocab), dict(image_size=32, patch_size=8),
                         projection_dim=16)
    model = CLIPModel(config).eval()
    hf = save_hf(work, model, processor)

    # References: transformers in torch, as a user calls it.
    text_in = processor(text=TEXTS, padding=True, truncation=True, return_tensors="pt")
    images = [load_image(os.path.join(ROOT, p)) for p in IMAGES]
    image_in = processor(images=images, return_tensors="pt")
    with torch.no_grad():
        text_embeds = model.get_text_features(**text_in).numpy()
        image_embeds = model.get_image_features(**image_in).numpy()

    onnx_dir = os.path.join(hf, "onnx")
    os.makedirs(onnx_dir)
    text_path = os.path.join(onnx_dir, "text_model.onnx")
    vision_path = os.path.join(onnx_dir, "vision_model.onnx")
    export(TextTower(model), (text_in["input_ids"], text_in["attention_mask"]), text_path,
           ["input_ids", "attention_mask"], ["text_embeds", "last_hidden_state"],
           {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "text_embeds": {0: "batch"}, "last_hidden_state": {0: "batch", 1: "sequence"}})
    export(VisionTower(model), (image_in["pixel_values"],), vision_path, ["pixel_values"],
           ["image_embeds", "last_hidden_state"],
           {"pixel_values": {0: "batch"}, "image_embeds": {0: "batch"}, "last_hidden_state": {0: "batch"}})
    check_onnx(text_path, {"input_ids": text_in["input_ids"].numpy(), "attention_mask": text_in["attention_mask"].numpy()},
               text_embeds, "text")
    check_onnx(vision_path, {"pixel_values": image_in["pixel_values"].numpy()}, image_embeds, "vision")

    publish(work, hf, out_dir, ["config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json",
                                "special_tokens_map.json", "vocab.json", "merges.txt"])
    write_json(os.path.join(out_dir, "..", "clip_tiny_reference.json"), {
        "texts": TEXTS,
        "token_counts": [int(n) for n in text_in["attention_mask"].sum(1)],
        "images": IMAGES,
        "text_embeds": text_embeds.tolist(),
        "image_embeds": image_embeds.tolist(),
    })


class SiglipTextTower(torch.nn.Module):
    """SiglipTextModel's pooled output from SiglipModel's weights: input_ids only
    (SigLIP was trained on texts padded to max_length, without a mask)."""

    def __init__(self, siglip):
        super().__init__()
        self.text_model = siglip.text_model

    def forward(self, input_ids):
        out = self.text_model(input_ids=input_ids)
        return out.pooler_output, out.last_hidden_state


class SiglipVisionTower(torch.nn.Module):
    def __init__(self, siglip):
        super().__init__()
        self.vision_model = siglip.vision_model

    def forward(self, pixel_values):
        out = self.vision_model(pixel_values=pixel_values)
        return out.pooler_output, out.last_hidden_state


def plain_rgb(image):
    """load_image's pixels as a plain RGB image: transformers 5's convert_to_rgb
    composites onto white the colour an RGB image's info still names as
    transparent (the GIF of IMAGES keeps one); 4.x, whose rule dlrt follows,
    does not."""
    from PIL import Image

    return Image.fromarray(np.asarray(image).copy())


def plain_images():
    """IMAGES as transformers' load_image decodes them, each through plain_rgb
    (with and without, the GIF's vectors lie at cosine 0.9886)."""
    from transformers.image_utils import load_image

    return [plain_rgb(load_image(os.path.join(ROOT, p))) for p in IMAGES]


def pooled(out):
    """get_*_features' vectors: transformers 5 returns them as pooler_output."""
    return (out.pooler_output if hasattr(out, "pooler_output") else out).detach().numpy()


def export_siglip_text(model, onnx_dir, text_embeds, input_ids, attention_mask=None):
    """The text tower as onnx_dir/text_model.onnx, checked against text_embeds:
    SiglipTextTower (input_ids only), or SiglipMaskedTextTower where an
    attention_mask is given."""
    path = os.path.join(onnx_dir, "text_model.onnx")
    tower, args, feeds = SiglipTextTower(model), (input_ids,), {"input_ids": input_ids.numpy()}
    if attention_mask is not None:
        tower, args = SiglipMaskedTextTower(model), (input_ids, attention_mask)
        feeds["attention_mask"] = attention_mask.numpy()
    outputs = ["text_embeds", "last_hidden_state"]
    export(tower, args, path, list(feeds), outputs, {name: {0: "batch"} for name in list(feeds) + outputs})
    check_onnx(path, feeds, text_embeds, "text")


def siglip2_vision_args(image_processor):
    """image_processor's NaFlex inputs of plain_images: (its output,
    (pixel_values, pixel_attention_mask, spatial_shapes))."""
    image_in = image_processor(images=plain_images(), return_tensors="pt")
    return image_in, (image_in["pixel_values"], image_in["pixel_attention_mask"], image_in["spatial_shapes"])


def export_siglip2_vision(model, vision_args, onnx_dir, image_embeds):
    """Siglip2VisionTower (pixel_values, pixel_attention_mask, spatial_shapes:
    vision_args; traced on the first image) as onnx_dir/vision_model.onnx,
    checked against image_embeds."""
    path = os.path.join(onnx_dir, "vision_model.onnx")
    export(Siglip2VisionTower(model), tuple(a[:1] for a in vision_args), path,
           ["pixel_values", "pixel_attention_mask", "spatial_shapes"], ["image_embeds", "last_hidden_state"],
           {"pixel_values": {0: "batch", 1: "patches"}, "pixel_attention_mask": {0: "batch", 1: "patches"},
            "spatial_shapes": {0: "batch"}, "image_embeds": {0: "batch"},
            "last_hidden_state": {0: "batch", 1: "patches"}})
    check_onnx(path, {"pixel_values": vision_args[0].numpy(), "pixel_attention_mask": vision_args[1].numpy(),
                      "spatial_shapes": vision_args[2].numpy()}, image_embeds, "vision")


def make_siglip_tiny(out_dir):
    """transformers' SiglipModel from a small SiglipConfig (2 layers, hidden 32,
    32 x 32 images in 8 x 8 patches, the attention-pooling head) with
    SiglipImageProcessor, exported as towers (text: input_ids only). The
    tokenizer is clip_tiny's byte-level BPE with "<|endoftext|>" as padding
    (SigLIP's SentencePiece vocabulary is not needed to test the text rule):
    texts padded to max_length 16, no attention mask, as SiglipProcessor's
    padding="max_length" gives them."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    work = fresh_work(out_dir)
    max_length = 16
    tokenizer, vocab = bpe_tokenizer(work, max_length)
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})

    torch.manual_seed(78)
    config = tiny_config(SiglipConfig, len(vocab), max_length, bpe_special(vocab), dict(image_size=32, patch_size=8))
    model = SiglipModel(config).eval()
    hf = save_hf(work, model, tokenizer, image_processor)

    text_in = tokenizer(TEXTS, padding="max_length", truncation=True, max_length=max_length, return_tensors="pt")
    image_in = image_processor(images=plain_images(), return_tensors="pt")
    with torch.no_grad():
        text_embeds = pooled(model.get_text_features(input_ids=text_in["input_ids"]))
        image_embeds = pooled(model.get_image_features(pixel_values=image_in["pixel_values"]))

    onnx_dir = os.path.join(hf, "onnx")
    os.makedirs(onnx_dir)
    export_siglip_text(model, onnx_dir, text_embeds, text_in["input_ids"])
    vision_path = os.path.join(onnx_dir, "vision_model.onnx")
    export(SiglipVisionTower(model), (image_in["pixel_values"],), vision_path, ["pixel_values"],
           ["image_embeds", "last_hidden_state"],
           {"pixel_values": {0: "batch"}, "image_embeds": {0: "batch"}, "last_hidden_state": {0: "batch"}})
    check_onnx(vision_path, {"pixel_values": image_in["pixel_values"].numpy()}, image_embeds, "vision")

    # transformers 5 writes no special_tokens_map, vocab, merges
    publish(work, hf, out_dir, ["config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json"],
            optional=["special_tokens_map.json", "vocab.json", "merges.txt"])
    write_json(os.path.join(out_dir, "..", "siglip_tiny_reference.json"), {
        "texts": TEXTS,
        "max_length": max_length,
        "images": IMAGES,
        "text_embeds": text_embeds.tolist(),
        "image_embeds": image_embeds.tolist(),
    })


class Siglip2VisionTower(torch.nn.Module):
    """Siglip2VisionModel's pooled output (NaFlex: patches, their mask and grid)."""

    def __init__(self, siglip2):
        super().__init__()
        self.vision_model = siglip2.vision_model

    def forward(self, pixel_values, pixel_attention_mask, spatial_shapes):
        out = self.vision_model(pixel_values=pixel_values, pixel_attention_mask=pixel_attention_mask,
                                spatial_shapes=spatial_shapes)
        return out.pooler_output, out.last_hidden_state


# The special token ids of siglip2_tokenizer's vocabulary, as a config's.
SIGLIP2_SPECIAL = dict(pad_token_id=0, eos_token_id=1, bos_token_id=2)


def siglip2_tokenizer(work, merges_wanted=40):
    """A tokenizer configured as transformers configures SigLIP 2's: a Gemma
    BPE (the special tokens <pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4, the
    256 byte-fallback tokens <0x00>..<0xFF>, lowercase letters with "▁" for
    the space, `merges_wanted` merges learnt from lowercased texts) made by
    transformers' GemmaTokenizer with the settings of its SigLIP 2 conversion
    (convert_siglip2_to_hf.get_siglip2_tokenizer: add_bos_token=False,
    add_eos_token=True, padding_side="right", model_input_names=["input_ids"]),
    saved through a Siglip2Processor (tokenizer_class "GemmaTokenizer",
    processor_class "Siglip2Processor"). Loading that folder, transformers
    builds its Siglip2Tokenizer, which lowercases. Returns the folder."""
    from transformers import GemmaTokenizer, Siglip2ImageProcessor, Siglip2Processor

    vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<mask>": 4}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    corpus = [t.lower().replace(" ", "\u2581") for t in
              ["a photo of a cat", "a diagram of a red fox jumping over a lazy dog.", "the river bank and the money bank",
               "café résumé straße istanbul unicode"]]
    for ch in sorted(set("".join(corpus))):
        vocab.setdefault(ch, len(vocab))
    merges = learn_merges(collections.Counter(tuple(c) for c in corpus), merges_wanted)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    tokenizer = GemmaTokenizer(vocab=vocab, merges=merges, add_bos_token=False, add_eos_token=True,
                               padding_side="right", model_input_names=["input_ids"])
    path = os.path.join(work, "siglip2_tokenizer")
    Siglip2Processor(image_processor=Siglip2ImageProcessor(), tokenizer=tokenizer).save_pretrained(path)
    return path


def siglip2_text_reference(folder, model, texts, masked=False):
    """transformers' own text path on a saved SigLIP 2 folder, as its users
    call it: AutoProcessor(text=...) (Siglip2Processor: the folder's
    tokenizer, padded to max_length 64, truncated) and get_text_features with
    what the processor returns (`masked`: an attention mask, else none).
    Returns (input_ids, attention_mask or None, text_embeds)."""
    from transformers import AutoProcessor, AutoTokenizer

    processor = AutoProcessor.from_pretrained(folder)
    built = {type(processor.tokenizer).__name__, type(AutoTokenizer.from_pretrained(folder)).__name__}
    if built != {"Siglip2Tokenizer"}:
        raise SystemExit(f"{folder}: transformers did not build a Siglip2Tokenizer")
    text_in = processor(text=texts, return_tensors="pt")
    if ("attention_mask" in text_in) != masked:
        raise SystemExit(f"{folder}: the processor's attention mask is {'missing' if masked else 'there'}")
    with torch.no_grad():
        text_embeds = pooled(model.get_text_features(**text_in))
    return text_in["input_ids"], text_in.get("attention_mask"), text_embeds


class SiglipMaskedTextTower(torch.nn.Module):
    """SiglipTextModel's pooled output given input_ids and attention_mask."""

    def __init__(self, siglip):
        super().__init__()
        self.text_model = siglip.text_model

    def forward(self, input_ids, attention_mask):
        out = self.text_model(input_ids=input_ids, attention_mask=attention_mask)
        return out.pooler_output, out.last_hidden_state


def make_siglip2_tiny(out_dir):
    make_siglip2(out_dir, seed=83, masked=False)


def make_siglip2_mask_tiny(out_dir):
    """siglip2_tiny's recipe (seed 86) with the tokenizer config as
    Siglip2Tokenizer's class defaults leave it (no padding_side, no
    model_input_names: padded on the left, an attention mask returned) and a
    text tower taking input_ids and attention_mask."""
    make_siglip2(out_dir, seed=86, masked=True)


def make_siglip2(out_dir, seed, masked):
    """transformers' Siglip2Model (SigLIP 2 NaFlex) from a small Siglip2Config
    (2 layers, hidden 32, 8 x 8 patches, a 4 x 4 position grid, 64 text
    positions as SigLIP 2's) with Siglip2ImageProcessor (at most 16 patches an
    image, each image resized to its own grid) and siglip2_tokenizer's
    tokenizer, exported as towers: text input_ids only (the tokenizer returns
    no mask), vision pixel_values [batch, 16, 192], pixel_attention_mask and
    spatial_shapes. Text reference: siglip2_text_reference (input_ids and
    vectors of SIGLIP2_TEXTS). Image reference: the image processor itself (the
    processor's class defaults would override its patch settings).
    Needs transformers 5 (its position-embedding resize is tensor arithmetic,
    which exports with the grid as an input)."""
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model

    work = fresh_work(out_dir)
    tok_dir = siglip2_tokenizer(work)
    with open(os.path.join(tok_dir, "tokenizer.json"), encoding="utf-8") as f:
        vocab_size = len(json.load(f)["model"]["vocab"])
    image_processor = Siglip2ImageProcessor(patch_size=8, max_num_patches=16)
    torch.manual_seed(seed)
    config = tiny_config(Siglip2Config, vocab_size, 64, SIGLIP2_SPECIAL, dict(patch_size=8, num_patches=16))
    model = Siglip2Model(config).eval()
    hf = save_hf(work, model, image_processor)
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(os.path.join(tok_dir, name), os.path.join(hf, name))
    if masked:
        with open(os.path.join(hf, "tokenizer_config.json"), encoding="utf-8") as f:
            tok_config = json.load(f)
        del tok_config["padding_side"], tok_config["model_input_names"]
        write_json(os.path.join(hf, "tokenizer_config.json"), tok_config)

    input_ids, attention_mask, text_embeds = siglip2_text_reference(hf, model, SIGLIP2_TEXTS, masked)
    image_in, vision_args = siglip2_vision_args(image_processor)
    with torch.no_grad():
        image_embeds = pooled(model.get_image_features(*vision_args))

    onnx_dir = os.path.join(hf, "onnx")
    os.makedirs(onnx_dir)
    export_siglip_text(model, onnx_dir, text_embeds, input_ids, attention_mask)
    export_siglip2_vision(model, vision_args, onnx_dir, image_embeds)

    publish(work, hf, out_dir, ["config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json"])
    reference = {
        "made_by": f"transformers {transformers_version()}",
        "texts": SIGLIP2_TEXTS,
        "max_length": 64,
        "input_ids": input_ids.tolist(),
        "images": IMAGES,
        "spatial_shapes": image_in["spatial_shapes"].tolist(),
        "text_embeds": text_embeds.tolist(),
        "image_embeds": image_embeds.tolist(),
    }
    if masked:
        reference["attention_mask"] = attention_mask.tolist()
    write_json(os.path.join(out_dir, "..", os.path.basename(out_dir) + "_reference.json"), reference)


def transformers_version():
    import transformers

    return transformers.__version__


FAMILIES = {"clip_tiny": make_clip_tiny, "siglip_tiny": make_siglip_tiny, "siglip2_tiny": make_siglip2_tiny,
            "siglip2_mask_tiny": make_siglip2_mask_tiny}


if __name__ == "__main__":
    families_main(__doc__, OUT, FAMILIES)
