"""Small graphs of single com.microsoft transformer ops (and ONNX Runtime's
SimplifiedLayerNormalization), with random weights and inputs, for
make_quant_zoo.py to record ONNX Runtime's outputs on: each attribute, optional
input and mask format dlrt implements, one model apiece.

contrib_models(out_dir, rng) -> [(name, path, {input: array}, description)]
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def _save(out, name, nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(model, path)
    return path


def _f(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def contrib_models(out, rng):
    made = []
    B, S, H = 2, 6, 16
    F = TensorProto.FLOAT

    # SkipLayerNormalization: full skip, beta and bias, the sum output; and a
    # [S, H] skip shared by the batch without beta/bias.
    for tag, skip_shape, extras in (("full", [B, S, H], True), ("shared_skip", [S, H], False)):
        inits = {"gamma": _f(rng, H), "beta": _f(rng, H), "bias": _f(rng, H)}
        ins = ["x", "skip", "gamma"] + (["beta", "bias"] if extras else [])
        outs = ["y", "", "", "sum"] if extras else ["y"]
        node = helper.make_node("SkipLayerNormalization", ins, outs, domain=MS, epsilon=1e-5)
        gouts = [_vi("y", F, [B, S, H])] + ([_vi("sum", F, [B, S, H])] if extras else [])
        if not extras:
            inits = {"gamma": inits["gamma"]}
        path = _save(out, f"ms_skip_layer_norm_{tag}", [node], [_vi("x", F, [B, S, H]), _vi("skip", F, skip_shape)],
                     gouts, inits)
        made.append((f"ms_skip_layer_norm_{tag}", path, {"x": _f(rng, B, S, H), "skip": _f(rng, *skip_shape)},
                     f"com.microsoft SkipLayerNormalization ({tag})"))

    node = helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"], ["y", "", "", "sum"],
                            domain=MS, epsilon=1e-6)
    path = _save(out, "ms_skip_simplified_layer_norm", [node], [_vi("x", F, [B, S, H]), _vi("skip", F, [B, S, H])],
                 [_vi("y", F, [B, S, H]), _vi("sum", F, [B, S, H])], {"gamma": _f(rng, H), "bias": _f(rng, H)})
    made.append(("ms_skip_simplified_layer_norm", path, {"x": _f(rng, B, S, H), "skip": _f(rng, B, S, H)},
                 "com.microsoft SkipSimplifiedLayerNormalization with bias and the sum output"))

    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-6)
    path = _save(out, "simplified_layer_norm", [node], [_vi("x", F, [B, S, H])], [_vi("y", F, [B, S, H])],
                 {"scale": _f(rng, H)})
    made.append(("simplified_layer_norm", path, {"x": _f(rng, B, S, H)},
                 "ONNX Runtime's SimplifiedLayerNormalization (ONNX domain)"))

    # The GELU family.
    act_cases = [
        ("ms_gelu", helper.make_node("Gelu", ["x"], ["y"], domain=MS), {}),
        ("ms_bias_gelu", helper.make_node("BiasGelu", ["x", "b"], ["y"], domain=MS), {"b": _f(rng, H)}),
        ("ms_fast_gelu", helper.make_node("FastGelu", ["x"], ["y"], domain=MS), {}),
        ("ms_fast_gelu_bias", helper.make_node("FastGelu", ["x", "b"], ["y"], domain=MS), {"b": _f(rng, H)}),
        ("ms_quick_gelu", helper.make_node("QuickGelu", ["x"], ["y"], domain=MS, alpha=1.3), {}),
    ]  # (BiasAdd: ONNX Runtime's CPU provider has no kernel to compare with)
    for name, node, inits in act_cases:
        path = _save(out, name, [node], [_vi("x", F, [B, S, H])], [_vi("y", F, [B, S, H])], inits)
        made.append((name, path, {"x": _f(rng, B, S, H, scale=2.0)}, f"com.microsoft {node.op_type}"))

    # Attention: 2 heads of 8 over hidden 16, each mask_index format ONNX
    # Runtime's CPU provider runs (not [B, 1, M, M]), causal, attention_bias,
    # and V of another width (qkv_hidden_sizes).
    lengths = np.array([6, 4], np.int32)
    mask2d = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 1, 0]], np.int32)
    att_cases = [
        ("none", {}, None, {}),
        ("lengths", {}, lengths, {}),
        ("end_start", {}, np.array([6, 5, 0, 2], np.int32), {}),
        ("mask_2d", {}, mask2d, {}),
        ("mask_3d", {}, np.tril(np.ones((S, S), np.int32))[None].repeat(B, 0), {}),
        ("causal_mask_2d", {"unidirectional": 1}, mask2d, {}),
        ("attention_bias", {}, None, {"attention_bias": _f(rng, 1, 2, S, S)}),
        ("v_width", {"qkv_hidden_sizes": [H, H, 8]}, lengths, {}),
        ("scale", {"scale": 0.2}, lengths, {}),
    ]
    for tag, attrs, mask, extra in att_cases:
        n_out = 16 + 16 + attrs.get("qkv_hidden_sizes", [H, H, H])[2]
        ins = ["x", "w", "bias", "mask" if mask is not None else ""]
        if "attention_bias" in extra:
            ins += ["", "attention_bias"]
        node = helper.make_node("Attention", ins, ["y"], domain=MS, num_heads=2, **attrs)
        inputs = {"x": _f(rng, B, S, H)}
        graph_in = [_vi("x", F, [B, S, H])]
        if mask is not None:
            inputs["mask"] = mask
            graph_in.append(_vi("mask", TensorProto.INT32, list(mask.shape)))
        if "attention_bias" in extra:
            inputs["attention_bias"] = extra["attention_bias"]
            graph_in.append(_vi("attention_bias", F, list(extra["attention_bias"].shape)))
        v_out = attrs.get("qkv_hidden_sizes", [H, H, H])[2]
        path = _save(out, f"ms_attention_{tag}", [node], graph_in, [_vi("y", F, [B, S, v_out])],
                     {"w": _f(rng, H, n_out, scale=0.5), "bias": _f(rng, n_out, scale=0.1)})
        made.append((f"ms_attention_{tag}", path, inputs, f"com.microsoft Attention ({tag})"))

    # EmbedLayerNormalization with segments and a right-padded mask, and
    # without either.
    for tag, full in (("segments_mask", True), ("words_only", False)):
        inits = {"word": _f(rng, 30, H), "pos": _f(rng, 10, H), "gamma": _f(rng, H), "beta": _f(rng, H)}
        if full:
            inits["seg"] = _f(rng, 2, H)
        ins = ["ids", "segs" if full else "", "word", "pos", "seg" if full else "", "gamma", "beta"]
        ins += ["mask"] if full else []
        node = helper.make_node("EmbedLayerNormalization", ins, ["y", "mask_index"], domain=MS, epsilon=1e-12)
        inputs = {"ids": rng.integers(0, 30, (B, S)).astype(np.int32)}
        graph_in = [_vi("ids", TensorProto.INT32, [B, S])]
        if full:
            inputs["segs"] = rng.integers(0, 2, (B, S)).astype(np.int32)
            inputs["mask"] = np.array([[1] * 6, [1] * 3 + [0] * 3], np.int32)
            graph_in += [_vi("segs", TensorProto.INT32, [B, S]), _vi("mask", TensorProto.INT32, [B, S])]
        path = _save(out, f"ms_embed_layer_norm_{tag}", [node], graph_in,
                     [_vi("y", F, [B, S, H]), _vi("mask_index", TensorProto.INT32, [B])], inits)
        made.append((f"ms_embed_layer_norm_{tag}", path, inputs, f"com.microsoft EmbedLayerNormalization ({tag})"))
    return made
