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


def _h(a):
    return a.astype(np.float16)


def _case(out, made, name, node, graph_in, feeds, outputs, inits, desc, half=False):
    """One one-op model; with `half` every float input, output and
    initializer is float16 (ONNX Runtime's float16 graph)."""
    dt = TensorProto.FLOAT16 if half else TensorProto.FLOAT
    if half:
        feeds = {k: _h(v) if v.dtype == np.float32 else v for k, v in feeds.items()}
        inits = {k: _h(v) for k, v in inits.items()}
    gi = [_vi(n, dt if feeds[n].dtype in (np.float32, np.float16) else
              (TensorProto.INT32 if feeds[n].dtype == np.int32 else TensorProto.INT64), list(feeds[n].shape))
          for n in graph_in]
    go = [_vi(n, dt, None) for n in outputs]
    path = _save(out, name, [node], gi, go, inits)
    compare = {"rtol": 1e-2, "atol": 1e-2} if half else {"rtol": 1e-4, "atol": 1e-5}
    made.append((name, path, feeds, desc + (" (float16)" if half else ""), compare))


def attention_family_models(out, rng):
    """FusedMatMul, RotaryEmbedding, MultiHeadAttention, GroupQueryAttention:
    each attribute, layout, mask and past variant dlrt implements (and
    ONNX Runtime's CPU provider runs), float32 and a float16 sample of each.
    Returns [(name, path, {input: array}, description, compare)]."""
    made = []
    I32, I64 = np.int32, np.int64

    # FusedMatMul: alpha with a constant B (MatMul's packed path), the
    # transposes of the last two dims, the batch transposes, broadcasting.
    fmm = [
        ("alpha", {"alpha": 0.5}, (2, 3, 4), (4, 5), True),
        ("trans", {"transA": 1, "transB": 1, "alpha": 1.5}, (2, 4, 3), (2, 5, 4), False),
        ("trans_batch", {"transBatchA": 1, "transBatchB": 1}, (3, 2, 4), (4, 2, 5), False),
        ("trans_batch_trans", {"transBatchA": 1, "transA": 1, "transBatchB": 1, "transB": 1, "alpha": 0.7},
         (4, 2, 3), (5, 2, 4), False),
        ("broadcast", {"transA": 1}, (2, 1, 4, 3), (3, 4, 5), False),
        ("trans_batch_4d", {"transBatchA": 1}, (3, 2, 2, 4), (2, 2, 4, 5), False),
    ]
    for half in (False, True):
        for tag, attrs, sa, sb, const_b in fmm:
            if half and tag not in ("alpha", "trans_batch_trans"):
                continue
            node = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, **attrs)
            feeds = {"a": _f(rng, *sa)}
            inits = {"b": _f(rng, *sb)} if const_b else {}
            if not const_b:
                feeds["b"] = _f(rng, *sb)
            _case(out, made, f"ms_fused_matmul_{tag}" + ("_fp16" if half else ""), node, list(feeds), feeds, ["y"],
                  inits, f"com.microsoft FusedMatMul ({tag})", half)

    # RotaryEmbedding: [B, S, hidden] and [B, N, S, H] inputs, an offset and
    # [B, S] position ids, interleaved, a partial rotary dim, no num_heads.
    B, S = 2, 3
    cache = (_f(rng, 16, 8), _f(rng, 16, 8))
    ids = rng.integers(0, 16, (B, S)).astype(I64)
    rot = [
        ("offset", {"num_heads": 2}, (B, S, 32), np.array([5], I64), 8),
        ("ids_interleaved", {"num_heads": 2, "interleaved": 1}, (B, S, 32), ids, 8),
        ("bnsh", {}, (B, 2, S, 16), ids, 8),
        ("bnsh_interleaved", {"interleaved": 1}, (B, 2, S, 16), np.array([0], I64), 8),
        ("partial", {"num_heads": 2, "rotary_embedding_dim": 8}, (B, S, 32), ids, 4),
        ("no_num_heads", {}, (B, S, 32), ids, 8),
    ]
    for half in (False, True):
        for tag, attrs, shape, pos, width in rot:
            if half and tag not in ("offset", "bnsh"):
                continue
            node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, **attrs)
            feeds = {"x": _f(rng, *shape), "pos": pos, "cos": cache[0][:, :width].copy(),
                     "sin": cache[1][:, :width].copy()}
            _case(out, made, f"ms_rotary_{tag}" + ("_fp16" if half else ""), node, list(feeds), feeds, ["y"], {},
                  f"com.microsoft RotaryEmbedding ({tag})", half)

    # MultiHeadAttention: 2 heads of 8; separate Q/K/V (cross lengths), bias,
    # K/V as [B, N, L, H], past/present (decoding), each key_padding_mask
    # format, attention_bias, causal (with ONNX Runtime's rows), scale.
    B, S, L, N, Hd, P = 2, 3, 5, 2, 8, 4
    D = N * Hd
    T = P + S
    def mha(tag, attrs, feeds, ins, outs, half=False):
        node = helper.make_node("MultiHeadAttention", ins, outs, domain=MS, num_heads=N, **attrs)
        _case(out, made, f"ms_mha_{tag}" + ("_fp16" if half else ""), node, [i for i in ins if i], feeds,
              [o for o in outs if o], {}, f"com.microsoft MultiHeadAttention ({tag})", half)
    qkv = lambda s, l: {"q": _f(rng, B, s, D), "k": _f(rng, B, l, D), "v": _f(rng, B, l, D)}
    mha("qkv", {}, qkv(S, L), ["q", "k", "v"], ["y"])
    mha("bias", {}, dict(qkv(S, L), bias=_f(rng, 3 * D)), ["q", "k", "v", "bias"], ["y", "pk", "pv"])
    mha("kv_bnsh", {}, {"q": _f(rng, B, S, D), "k": _f(rng, B, N, L, Hd), "v": _f(rng, B, N, L, Hd),
                        "bias": _f(rng, 3 * D)}, ["q", "k", "v", "bias"], ["y", "pk", "pv"])
    past = lambda: {"pk": _f(rng, B, N, P, Hd), "pv": _f(rng, B, N, P, Hd)}
    for half in (False, True):
        mha("past_causal", {"unidirectional": 1}, dict(qkv(S, S), bias=_f(rng, 3 * D), **past()),
            ["q", "k", "v", "bias", "", "", "pk", "pv"], ["y", "ok", "ov"], half)
    mha("past_lengths", {}, dict(qkv(S, S), mask=np.array([7, 5], I32), **past()),
        ["q", "k", "v", "", "mask", "", "pk", "pv"], ["y", "ok", "ov"])
    mha("mask_2d", {"mask_filter_value": -1000.0},
        dict(qkv(S, L), mask=np.array([[1, 1, 0, 1, 1], [1, 0, 1, 1, 0]], I32)), ["q", "k", "v", "", "mask"], ["y"])
    mha("mask_3d", {}, dict(qkv(S, L), mask=rng.integers(0, 2, (B, S, L)).astype(I32)), ["q", "k", "v", "", "mask"],
        ["y"])
    mha("attention_bias", {"scale": 0.2}, dict(qkv(S, L), ab=_f(rng, 1, N, S, L)), ["q", "k", "v", "", "", "ab"], ["y"])
    mha("attention_bias_batch", {}, dict(qkv(S, S), ab=_f(rng, B, 1, S, T), **past()),
        ["q", "k", "v", "", "", "ab", "pk", "pv"], ["y", "ok", "ov"])
    mha("causal_cross", {"unidirectional": 1}, qkv(S, L), ["q", "k", "v"], ["y"])
    mha("causal_mask_2d", {"unidirectional": 1}, dict(qkv(S, S), mask=np.array([[1, 1, 1], [1, 1, 0]], I32)),
        ["q", "k", "v", "", "mask"], ["y"])

    # GroupQueryAttention: 4 query heads over 2 KV heads of 16; the first
    # prompt (also right-padded), token generation (past buffer longer than
    # the total, and exactly as long), a continued prompt (batch 1), the
    # local window, softcap with scale, rotary, packed QKV.
    N, KV, Hd = 4, 2, 16
    def gqa(tag, attrs, b, s, pbuf, lens, total, rotary=False, packed=False, half=False, pos=None, ab=None,
            sink=None):
        feeds = {}
        if packed:
            feeds["q"] = _f(rng, b, s, (N + 2 * KV) * Hd)
        else:
            feeds.update(q=_f(rng, b, s, N * Hd), k=_f(rng, b, s, KV * Hd), v=_f(rng, b, s, KV * Hd))
        if pbuf:
            feeds.update(pk=_f(rng, b, KV, pbuf, Hd), pv=_f(rng, b, KV, pbuf, Hd))
        feeds.update(lens=np.array(lens, I32), total=np.array(total, I32))
        if rotary:
            feeds.update(cos=_f(rng, 32, Hd // 2), sin=_f(rng, 32, Hd // 2))
            attrs = dict(attrs, do_rotary=1)
        ins = ["q", "" if packed else "k", "" if packed else "v", "pk" if pbuf else "", "pv" if pbuf else "", "lens",
               "total"] + (["cos", "sin"] if rotary else [])
        extra = {"pos": pos, "ab": ab, "sink": sink}
        last = max([i for i, v in enumerate(extra.values()) if v is not None], default=-1)
        for i, (name, val) in enumerate(extra.items()):
            if i > last:
                break
            if len(ins) < 9:
                ins += ["", ""]
            ins.append(name if val is not None else "")
            if val is not None:
                feeds[name] = val
        node = helper.make_node("GroupQueryAttention", ins, ["y", "ok", "ov"], domain=MS, num_heads=N, kv_num_heads=KV,
                                **attrs)
        _case(out, made, f"ms_gqa_{tag}" + ("_fp16" if half else ""), node, [i for i in ins if i], feeds,
              ["y", "ok", "ov"], {}, f"com.microsoft GroupQueryAttention ({tag})", half)
    for half in (False, True):
        gqa("prompt", {}, 2, 5, 0, [4, 4], 5, half=half)
        gqa("token", {}, 2, 1, 8, [4, 2], 5, half=half)
    gqa("prompt_padded", {}, 2, 5, 0, [4, 2], 5)
    gqa("token_exact_past", {}, 2, 1, 4, [4, 4], 5)
    gqa("continued_prompt", {}, 1, 3, 8, [6], 7)
    gqa("local_window_prompt", {"local_window_size": 2}, 2, 5, 0, [4, 4], 5)
    gqa("local_window_token", {"local_window_size": 3}, 2, 1, 8, [6, 5], 7)
    gqa("softcap_scale", {"softcap": 1.5, "scale": 0.3}, 2, 5, 0, [4, 4], 5)
    gqa("softcap_token", {"softcap": 2.0}, 2, 1, 8, [4, 2], 5)
    gqa("rotary_prompt", {}, 2, 5, 0, [4, 4], 5, rotary=True)
    gqa("rotary_token_interleaved", {"rotary_interleaved": 1}, 2, 1, 8, [4, 2], 5, rotary=True)
    gqa("packed_rotary_prompt", {}, 2, 5, 0, [4, 4], 5, rotary=True, packed=True)
    gqa("packed_token", {}, 2, 1, 8, [4, 2], 5, packed=True)
    gqa("rotary_position_ids", {}, 2, 1, 8, [4, 2], 5, rotary=True, pos=np.array([[9], [3]], I64))
    gqa("smooth_softmax", {"smooth_softmax": 1}, 2, 5, 0, [4, 4], 5)
    gqa("head_sink_token", {}, 2, 1, 8, [4, 2], 5, sink=_f(rng, N, scale=2.0))
    gqa("attention_bias_prompt", {}, 2, 5, 0, [4, 4], 5, ab=_f(rng, 1, N, 5, 5))
    gqa("attention_bias_softcap_token", {"softcap": 1.5}, 2, 1, 8, [4, 2], 5, ab=_f(rng, 2, 1, 1, 5))

    # Attention with past/present: past [2, B, N, P, H] in front of this
    # run's keys and values; masks over the P + S keys; causal decoding
    # (ONNX Runtime refuses past with attention_bias).
    B, S, N, Hd, P = 2, 3, 2, 8, 4
    D = N * Hd
    T = P + S
    def att(tag, attrs, mask, ab, with_past, half=False):
        ins = ["x", "w", "bias", "mask" if mask is not None else "", "past" if with_past else ""]
        feeds = {"x": _f(rng, B, S, D)}
        if mask is not None:
            feeds["mask"] = mask
        if with_past:
            feeds["past"] = _f(rng, 2, B, N, P, Hd)
        if ab is not None:
            ins.append("ab")
            feeds["ab"] = ab
        node = helper.make_node("Attention", ins, ["y", "present"], domain=MS, num_heads=N, **attrs)
        _case(out, made, f"ms_attention_{tag}" + ("_fp16" if half else ""), node, [i for i in ins if i in feeds],
              feeds, ["y", "present"], {"w": _f(rng, D, 3 * D, scale=0.5), "bias": _f(rng, 3 * D, scale=0.1)},
              f"com.microsoft Attention ({tag})", half)
    for half in (False, True):
        att("past_causal", {"unidirectional": 1}, None, None, True, half)
    att("past_lengths", {}, np.array([7, 5], I32), None, True)
    att("past_mask_2d", {}, np.array([[1, 1, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1, 0]], I32), None, True)
    att("present_bias", {}, None, _f(rng, 1, N, S, S), False)
    att("past_causal_mask_3d", {"unidirectional": 1}, rng.integers(0, 2, (B, S, T)).astype(I32), None, True)
    att("present_only", {"unidirectional": 1}, None, None, False)
    return made
