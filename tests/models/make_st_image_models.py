#!/usr/bin/env python3
"""Writes the CLIP test folders of sentence-transformers and optimum under
tests/models/image/ (committed): a tiny CLIP (clip_tiny's configuration and
tokenizer, random weights of its own seed) saved by the families' own code, with the ONNX
graph those folders carry once exported, and the family's own vectors of
TEXTS and IMAGES as the reference (<name>_reference.json, clip_tiny's format).

Run once by a developer, not by `make test`, in a venv with torch,
transformers 5, onnx, onnxruntime and pillow, sentence-transformers on
PYTHONPATH (5.0 to 5.3 for st5_clip_tiny, 5.4 or later 5.x for st57_clip_tiny, 6.x for st6_clip_tiny):

    PYTHONPATH=<sentence-transformers 5.3> python tests/models/make_st_image_models.py --only clip_optimum_tiny st5_clip_tiny
    PYTHONPATH=<sentence-transformers 5.7> python tests/models/make_st_image_models.py --only st57_clip_tiny st57_siglip_tiny \\
        st57_siglip2_tiny
    PYTHONPATH=<sentence-transformers 6.x> python tests/models/make_st_image_models.py --only st6_clip_tiny st6_siglip_tiny \\
        st6_siglip2_tiny

Families:

  clip_optimum_tiny  transformers' folder (config.json, the processor and
             tokenizer files) with model.onnx as optimum exports CLIP for
             zero-shot-image-classification (CLIPOnnxConfig): inputs
             pixel_values, input_ids, attention_mask; outputs
             logits_per_image, logits_per_text, text_embeds, image_embeds
             (CLIPModel.forward's, the embeds normalised). Reference:
             get_text_features / get_image_features.

  siglip_optimum_tiny  the same for SigLIP (siglip_tiny's configuration,
             tokenizer and image processor): optimum's SiglipOnnxConfig takes
             input_ids and pixel_values, no attention mask; texts padded to
             max_length as SigLIP was trained. (Its image vectors once differed
             from dlrt's on 2 of the 8 images, cosine 0.999899 and 0.999997:
             Pillow 13 resizes those two sizes vertically first, which dlrt
             now does too.)

  st57_siglip_tiny, st6_siglip_tiny  SigLIP as sentence-transformers 5.4+
             and 6.x save it (make_st_siglip says how).

  st57_siglip2_tiny, st6_siglip2_tiny  SigLIP 2 NaFlex as sentence-transformers
             5.4+ and 6.x save it (make_st_siglip2 says how).

  st5_clip_tiny  sentence-transformers 5.0 to 5.3: SentenceTransformer(modules=
             [models.CLIPModel(folder)]).save(): modules.json and the CLIP
             folder in the root (CLIPModel.save_in_root), model.safetensors.
             This CLIPModel exports no ONNX (its load ignores backend=); the graph is onnx/model.onnx as optimum
             exports a sentence-transformers CLIP folder (`optimum-cli export
             onnx --library sentence_transformers --task feature-extraction`,
             SentenceTransformersCLIPOnnxConfig): inputs pixel_values,
             input_ids, attention_mask; outputs text_embeds, image_embeds
             (the projections, not normalised). Reference: model.encode of the
             texts and of the images as PIL images.

  st57_clip_tiny  the same with sentence-transformers 5.4 and later, whose
             CLIPModel (deprecated for the Transformer module) subclasses
             Transformer: modules.json names it
             sentence_transformers.sentence_transformer.modules.clip_model.CLIPModel
             and sentence_bert_config.json holds its modality_config.

  st6_clip_tiny  sentence-transformers 6.x: SentenceTransformer(folder) on
             transformers' CLIP folder, saved: one Transformer module with
             modality_config in sentence_bert_config.json, the processor in
             processor_config.json. 6.x's backend="onnx" hands a Transformer
             to optimum's ORTModelForFeatureExtraction, whose CLIP export is
             CLIPOnnxConfig's (as clip_optimum_tiny's), saved as
             onnx/model.onnx. Reference: model.encode.

optimum itself is not run: optimum-onnx pins transformers < 4.58 and
sentence-transformers 6 needs transformers 5. The graphs are torch.onnx
exports of modules computing what optimum's configs and patchers compute,
with their input, output and dynamic axis names. ONNX Runtime on each graph
is checked against the reference.
"""
import json
import os
import shutil

import numpy as np
import torch
import transformers

from families_main import main as families_main
from make_image_models import (IMAGES, OUT, ROOT, SIGLIP2_SPECIAL, SIGLIP2_TEXTS, TEXTS, export_siglip2_vision,
                               export_siglip_text, plain_images, pooled, siglip2_text_reference, siglip2_tokenizer,
                               siglip2_vision_args, tiny_config, write_json)

TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt"]

# optimum's CLIPOnnxConfig names (inputs in its order).
INPUT_AXES = {
    "pixel_values": {0: "batch_size", 1: "num_channels", 2: "height", 3: "width"},
    "input_ids": {0: "text_batch_size", 1: "sequence_length"},
    "attention_mask": {0: "text_batch_size", 1: "sequence_length"},
}
ZERO_SHOT_AXES = {
    "logits_per_image": {0: "image_batch_size", 1: "text_batch_size"},
    "logits_per_text": {0: "text_batch_size", 1: "image_batch_size"},
    "text_embeds": {0: "text_batch_size"},
    "image_embeds": {0: "image_batch_size"},
}
ST_AXES = {"text_embeds": {0: "text_batch_size"}, "image_embeds": {0: "image_batch_size"}}


class ZeroShot(torch.nn.Module):
    """CLIPModel.forward's outputs, as optimum's CLIPOnnxConfig exports them."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, pixel_values, input_ids, attention_mask):
        out = self.clip(input_ids=input_ids, pixel_values=pixel_values, attention_mask=attention_mask)
        return out.logits_per_image, out.logits_per_text, out.text_embeds, out.image_embeds


class StClip(torch.nn.Module):
    """SentenceTransformersCLIPPatcher's forward: each tower's projection."""

    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, pixel_values, input_ids, attention_mask):
        image = self.clip.visual_projection(self.clip.vision_model(pixel_values=pixel_values)[1])
        text = self.clip.text_projection(self.clip.text_model(input_ids=input_ids, attention_mask=attention_mask)[1])
        return text, image


def tiny_clip(work):
    """transformers' CLIPModel from clip_tiny's configuration (2 layers, hidden
    32, projection 16, 32 x 32 images in 8 x 8 patches; seed 79) and its
    processor read from the committed clip_tiny folder: (CLIPModel, CLIPProcessor)."""
    from transformers import CLIPConfig, CLIPModel, CLIPProcessor

    clip_tiny = os.path.join(OUT, "clip_tiny")
    processor = CLIPProcessor.from_pretrained(clip_tiny)
    config = CLIPConfig.from_pretrained(clip_tiny)
    torch.manual_seed(79)
    return CLIPModel(config).eval(), processor


def export_graph(module, processor, path, outputs):
    import onnxruntime as ort
    from transformers.image_utils import load_image

    text_in = processor.tokenizer(TEXTS[:2], padding=True, return_tensors="pt")
    pixels = processor.image_processor(images=[load_image(os.path.join(ROOT, IMAGES[0]))], return_tensors="pt")
    args = (pixels["pixel_values"], text_in["input_ids"], text_in["attention_mask"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.onnx.export(module, args, path, input_names=list(INPUT_AXES), output_names=list(outputs),
                      dynamic_axes={**INPUT_AXES, **outputs}, opset_version=17, dynamo=False)
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def check_cosines(session, feeds, text_embeds, image_embeds, what):
    """ONNX Runtime's text_embeds and image_embeds (one run of `session` on
    `feeds`) against the reference, by cosine."""
    outs = session.run(["text_embeds", "image_embeds"], feeds)
    for name, got, want in zip(("text_embeds", "image_embeds"), outs, (text_embeds, image_embeds)):
        cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        if cos.min() < 0.999999:
            raise SystemExit(f"{what}: ONNX Runtime's {name} differs from the reference (cosine {cos.min()})")


def check(session, processor, text_embeds, image_embeds, what):
    """check_cosines with all texts (padded to the longest, masked) and images."""
    text_in = processor.tokenizer(TEXTS, padding=True, truncation=True, return_tensors="np")
    pixels = processor.image_processor(images=plain_images(), return_tensors="np")
    check_cosines(session, {"pixel_values": pixels["pixel_values"], "input_ids": text_in["input_ids"],
                            "attention_mask": text_in["attention_mask"]}, text_embeds, image_embeds, what)


def reference(out_dir, text_embeds, image_embeds, made_by, texts=TEXTS):
    # The model card sentence-transformers writes (its template's prose) is not kept.
    if os.path.exists(os.path.join(out_dir, "README.md")):
        os.remove(os.path.join(out_dir, "README.md"))
    write_json(os.path.join(out_dir, "..", os.path.basename(out_dir) + "_reference.json"), {
        "made_by": made_by,
        "texts": texts,
        "images": IMAGES,
        "text_embeds": np.asarray(text_embeds).tolist(),
        "image_embeds": np.asarray(image_embeds).tolist(),
    })


def add_st_text_embeds(out_dir, st_text_embeds, text_embeds, text_embeds_by, **extra):
    """Adds to reference()'s file `extra`, what text_embeds are (text_embeds_by),
    sentence-transformers' own text vectors and their cosines to text_embeds."""
    ref_path = os.path.join(out_dir, "..", os.path.basename(out_dir) + "_reference.json")
    with open(ref_path, encoding="utf-8") as f:
        ref = json.load(f)
    norms = np.linalg.norm(st_text_embeds, axis=1) * np.linalg.norm(text_embeds, axis=1)
    ref.update(extra)
    ref["text_embeds_by"] = text_embeds_by
    ref["st_text_embeds"] = np.asarray(st_text_embeds).tolist()
    ref["st_text_cosines"] = [round(float(c), 6) for c in (st_text_embeds * text_embeds).sum(1) / norms]
    write_json(ref_path, ref)


def st_version(out_dir, major):
    """sentence-transformers' version, which must be `major`.x and, for 5.x, 5.4 or later."""
    import sentence_transformers

    version = sentence_transformers.__version__
    old = version.split(".")[:2] in (["5", "0"], ["5", "1"], ["5", "2"], ["5", "3"])
    if not version.startswith(major + ".") or old:
        raise SystemExit(f"{os.path.basename(out_dir)} needs sentence-transformers {major}.x (5.4 or later), "
                         f"not {version}")
    return version


def fresh(out_dir):
    work = out_dir + ".work"
    for d in (work, out_dir):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(work)
    return work


def make_clip_optimum_tiny(out_dir):
    import transformers

    work = fresh(out_dir)
    model, processor = tiny_clip(work)
    os.makedirs(out_dir)
    model.config.save_pretrained(out_dir)  # optimum-cli writes the config, processor and tokenizer beside model.onnx
    processor.save_pretrained(out_dir)
    text_in = processor.tokenizer(TEXTS, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        text_embeds = pooled(model.get_text_features(**text_in))
        pixels = processor.image_processor(images=plain_images(), return_tensors="pt")
        image_embeds = pooled(model.get_image_features(**pixels))
        session = export_graph(ZeroShot(model), processor, os.path.join(out_dir, "model.onnx"), ZERO_SHOT_AXES)
    check(session, processor, text_embeds, image_embeds, "clip_optimum_tiny")
    shutil.rmtree(work)
    reference(out_dir, text_embeds, image_embeds, f"transformers {transformers.__version__}")


class SiglipZeroShot(torch.nn.Module):
    """SiglipModel.forward's outputs, as optimum's SiglipOnnxConfig exports them
    (input_ids and pixel_values; no attention mask)."""

    def __init__(self, siglip):
        super().__init__()
        self.siglip = siglip

    def forward(self, input_ids, pixel_values):
        out = self.siglip(input_ids=input_ids, pixel_values=pixel_values)
        return out.logits_per_image, out.logits_per_text, out.text_embeds, out.image_embeds


def export_siglip_zero_shot(model, input_ids, pixels, path, text_embeds, image_embeds, what):
    """SiglipZeroShot as optimum exports SigLIP (input_ids and pixel_values,
    traced on two texts and one image) to `path`, checked by check_cosines on
    all of input_ids and pixels."""
    import onnxruntime as ort

    axes = {"input_ids": INPUT_AXES["input_ids"], "pixel_values": {0: "image_batch_size", 1: "num_channels",
                                                                   2: "height", 3: "width"}}
    with torch.no_grad():
        torch.onnx.export(SiglipZeroShot(model), (input_ids[:2], pixels[:1]), path,
                          input_names=["input_ids", "pixel_values"], output_names=list(ZERO_SHOT_AXES),
                          dynamic_axes={**axes, **ZERO_SHOT_AXES}, opset_version=17, dynamo=False)
    check_cosines(ort.InferenceSession(path, providers=["CPUExecutionProvider"]),
                  {"input_ids": input_ids.numpy(), "pixel_values": pixels.numpy()}, text_embeds, image_embeds, what)


def make_siglip_optimum_tiny(out_dir):
    """siglip_tiny's configuration, tokenizer and image processor (random
    weights of seed 80) with model.onnx as optimum exports SigLIP for
    zero-shot-image-classification; texts padded to max_length."""
    import transformers
    from transformers import AutoTokenizer, SiglipConfig, SiglipImageProcessor, SiglipModel

    work = fresh(out_dir)
    siglip_tiny = os.path.join(OUT, "siglip_tiny")
    tokenizer = AutoTokenizer.from_pretrained(siglip_tiny)
    image_processor = SiglipImageProcessor.from_pretrained(siglip_tiny)
    torch.manual_seed(80)
    model = SiglipModel(SiglipConfig.from_pretrained(siglip_tiny)).eval()
    os.makedirs(out_dir)
    model.config.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    image_processor.save_pretrained(out_dir)
    max_length = tokenizer.model_max_length
    text_in = tokenizer(TEXTS, padding="max_length", truncation=True, max_length=max_length, return_tensors="pt")
    pixels = image_processor(images=plain_images(), return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        text_embeds = pooled(model.get_text_features(input_ids=text_in["input_ids"]))
        image_embeds = pooled(model.get_image_features(pixel_values=pixels))
    export_siglip_zero_shot(model, text_in["input_ids"], pixels, os.path.join(out_dir, "model.onnx"), text_embeds,
                            image_embeds, "siglip_optimum_tiny")
    shutil.rmtree(work)
    reference(out_dir, text_embeds, image_embeds, f"transformers {transformers.__version__}")


def st_encode(st, texts=TEXTS):
    return st.encode(texts, convert_to_numpy=True), st.encode(plain_images(), convert_to_numpy=True)


def st5_clip_module(hf, modules_path):
    """sentence-transformers 5.x's CLIPModel module of the transformers folder `hf`:
    5.0 to 5.3's sentence_transformers.models.CLIPModel, or (modules_path) 5.4's
    and later's, a Transformer subclass saved with a modality_config."""
    import sentence_transformers

    version = sentence_transformers.__version__
    if not version.startswith("5."):
        raise SystemExit(f"needs sentence-transformers 5.x, not {version}")
    if modules_path:
        from sentence_transformers.sentence_transformer.modules import CLIPModel
    else:
        try:
            from sentence_transformers.models.CLIPModel import CLIPModel
        except ImportError:
            raise SystemExit(f"st5_clip_tiny needs sentence-transformers 5.0 to 5.3, not {version}")
    return CLIPModel(hf)


def make_st5(out_dir, modules_path):
    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    work = fresh(out_dir)
    model, processor = tiny_clip(work)
    model.save_pretrained(os.path.join(work, "hf"))
    processor.save_pretrained(os.path.join(work, "hf"))
    st = SentenceTransformer(modules=[st5_clip_module(os.path.join(work, "hf"), modules_path)], device="cpu")
    st.save(out_dir)
    st = SentenceTransformer(out_dir, device="cpu")
    text_embeds, image_embeds = st_encode(st)
    clip = st[0].model.eval()
    with torch.no_grad():
        session = export_graph(StClip(clip), st[0].processor, os.path.join(out_dir, "onnx", "model.onnx"), ST_AXES)
    check(session, st[0].processor, text_embeds, image_embeds, os.path.basename(out_dir))
    shutil.rmtree(work)
    reference(out_dir, text_embeds, image_embeds, f"sentence-transformers {sentence_transformers.__version__}")


def make_st5_clip_tiny(out_dir):
    make_st5(out_dir, modules_path=False)


def make_st57_clip_tiny(out_dir):
    make_st5(out_dir, modules_path=True)


def make_st6_clip_tiny(out_dir):
    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    if not sentence_transformers.__version__.startswith("6."):
        raise SystemExit(f"st6_clip_tiny needs sentence-transformers 6.x, not {sentence_transformers.__version__}")
    work = fresh(out_dir)
    model, processor = tiny_clip(work)
    model.save_pretrained(os.path.join(work, "hf"))
    processor.save_pretrained(os.path.join(work, "hf"))
    SentenceTransformer(os.path.join(work, "hf"), device="cpu").save(out_dir)
    st = SentenceTransformer(out_dir, device="cpu")
    text_embeds, image_embeds = st_encode(st)
    clip = st[0].model.eval()
    with torch.no_grad():
        session = export_graph(ZeroShot(clip), st[0].processor, os.path.join(out_dir, "onnx", "model.onnx"),
                               ZERO_SHOT_AXES)
    check(session, st[0].processor, text_embeds, image_embeds, "st6_clip_tiny")
    shutil.rmtree(work)
    reference(out_dir, text_embeds, image_embeds, f"sentence-transformers {sentence_transformers.__version__}")


def make_st_siglip(out_dir, major):
    """siglip_tiny's configuration, tokenizer and image processor (random
    weights of seed 81 for 5.x, 82 for 6.x) as sentence-transformers 5.4 and
    later (5.0 to 5.3's CLIPModel loads CLIP only) and 6.x save a SigLIP: one
    Transformer module (sentence_transformers.base.modules.transformer.Transformer
    in both) whose modality_config calls get_text_features and
    get_image_features, the processor in processor_config.json. The graph is
    onnx/model.onnx as optimum exports SigLIP (siglip_optimum_tiny's).
    Reference: image_embeds are model.encode of the images; text_embeds are
    get_text_features of the texts as SigLIP was trained (max_length, no
    mask), which dlrt gives. sentence-transformers pads a batch's texts to its
    longest and masks the padding (its vectors, st_text_embeds, depend on the
    batch: st_text_cosines says how far they lie from text_embeds)."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    version = st_version(out_dir, major)
    work = fresh(out_dir)
    siglip_tiny = os.path.join(OUT, "siglip_tiny")
    torch.manual_seed(81 if major == "5" else 82)
    model = SiglipModel(SiglipConfig.from_pretrained(siglip_tiny)).eval()
    hf = os.path.join(work, "hf")
    model.save_pretrained(hf)
    SiglipProcessor(image_processor=SiglipImageProcessor.from_pretrained(siglip_tiny),
                    tokenizer=AutoTokenizer.from_pretrained(siglip_tiny)).save_pretrained(hf)
    SentenceTransformer(hf, device="cpu").save(out_dir)
    st = SentenceTransformer(out_dir, device="cpu")
    st_text_embeds, image_embeds = st_encode(st)
    model = st[0].model.eval()
    tokenizer = st[0].processor.tokenizer
    max_length = tokenizer.model_max_length
    text_in = tokenizer(TEXTS, padding="max_length", truncation=True, max_length=max_length, return_tensors="pt")
    pixels = st[0].processor.image_processor(images=plain_images(), return_tensors="pt")["pixel_values"]
    path = os.path.join(out_dir, "onnx", "model.onnx")
    os.makedirs(os.path.dirname(path))
    with torch.no_grad():
        text_embeds = pooled(model.get_text_features(input_ids=text_in["input_ids"]))
    export_siglip_zero_shot(model, text_in["input_ids"], pixels, path, text_embeds, image_embeds,
                            os.path.basename(out_dir))
    shutil.rmtree(work)
    reference(out_dir, text_embeds, image_embeds, f"sentence-transformers {version}")
    add_st_text_embeds(out_dir, st_text_embeds, text_embeds,
                       f"transformers {transformers.__version__} get_text_features, max_length, no mask")


def make_st57_siglip_tiny(out_dir):
    make_st_siglip(out_dir, "5")


def make_st6_siglip_tiny(out_dir):
    make_st_siglip(out_dir, "6")


def make_st_siglip2(out_dir, major):
    """A SigLIP 2 NaFlex as sentence-transformers 6.x (or 5.4 and later 5.x) saves it: one
    Transformer module over a Siglip2Model, Siglip2Processor in
    processor_config.json. That processor applies its class defaults (16 x 16
    patches, at most 256, texts padded to 64) over the image processor's, so
    the tiny model (siglip2_tiny's sizes otherwise; seed 84 for 6.x, 85 for 5.x) has them: a
    16 x 16 position grid, 64 text positions. The tokenizer is
    siglip2_tiny's (make_image_models.siglip2_tokenizer: SigLIP 2's settings).
    The graphs are siglip2_tiny's towers in onnx/ (no optimum export of SigLIP
    2 exists to follow); model.safetensors is not kept. Text reference:
    transformers' processor and get_text_features on the saved folder
    (make_image_models.siglip2_text_reference) for SIGLIP2_TEXTS;
    sentence-transformers' encode (st_text_embeds) pads a batch to its longest
    text rather than to 64, which differs (st_text_cosines)."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, Siglip2Config, Siglip2ImageProcessor, Siglip2Model, Siglip2Processor

    version = st_version(out_dir, major)
    work = fresh(out_dir)
    tokenizer = AutoTokenizer.from_pretrained(siglip2_tokenizer(work))
    torch.manual_seed(84 if major == "6" else 85)
    config = tiny_config(Siglip2Config, len(tokenizer.get_vocab()), 64, SIGLIP2_SPECIAL,
                         dict(patch_size=16, num_patches=256))
    hf = os.path.join(work, "hf")
    Siglip2Model(config).eval().save_pretrained(hf)
    Siglip2Processor(image_processor=Siglip2ImageProcessor(), tokenizer=tokenizer).save_pretrained(hf)
    SentenceTransformer(hf, device="cpu").save(out_dir)
    st = SentenceTransformer(out_dir, device="cpu")
    st_text_embeds, image_embeds = st_encode(st, SIGLIP2_TEXTS)
    model = st[0].model.eval()
    input_ids, _, text_embeds = siglip2_text_reference(out_dir, model, SIGLIP2_TEXTS)
    _, vision_args = siglip2_vision_args(st[0].processor.image_processor)
    with torch.no_grad():
        onnx_dir = os.path.join(out_dir, "onnx")
        os.makedirs(onnx_dir)
        export_siglip_text(model, onnx_dir, text_embeds, input_ids)
        export_siglip2_vision(model, vision_args, onnx_dir, image_embeds)
    shutil.rmtree(work)
    os.remove(os.path.join(out_dir, "model.safetensors"))  # 400 KB dlrt does not read
    reference(out_dir, text_embeds, image_embeds, f"sentence-transformers {version}", texts=SIGLIP2_TEXTS)
    add_st_text_embeds(out_dir, st_text_embeds, text_embeds,
                       f"transformers {transformers.__version__}: AutoProcessor(text=...) on the folder "
                       "(Siglip2Tokenizer, padded to 64, no mask), get_text_features",
                       input_ids=input_ids.tolist())


def make_st57_siglip2_tiny(out_dir):
    make_st_siglip2(out_dir, "5")


def make_st6_siglip2_tiny(out_dir):
    make_st_siglip2(out_dir, "6")


FAMILIES = {"clip_optimum_tiny": make_clip_optimum_tiny, "st5_clip_tiny": make_st5_clip_tiny,
            "st57_clip_tiny": make_st57_clip_tiny, "st6_clip_tiny": make_st6_clip_tiny,
            "siglip_optimum_tiny": make_siglip_optimum_tiny, "st57_siglip_tiny": make_st57_siglip_tiny,
            "st6_siglip_tiny": make_st6_siglip_tiny, "st6_siglip2_tiny": make_st6_siglip2_tiny,
            "st57_siglip2_tiny": make_st57_siglip2_tiny}


if __name__ == "__main__":
    families_main(__doc__, OUT, FAMILIES)
