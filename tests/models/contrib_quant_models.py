"""Small graphs of single quantized com.microsoft ops (MatMulNBits, QAttention,
QEmbedLayerNormalization), with random weights and inputs, for make_quant_zoo.py
to record ONNX Runtime's outputs on: each attribute and optional input variant
dlrt implements, one model apiece. The weights are packed here in
ONNX Runtime's layouts (MatMulNBits: N rows of k_blocks blobs, values low bits
first; zero points packed per row the same way).

contrib_quant_models(out_dir, rng) -> [(name, path, {input: array}, description, compare)]
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
EXACT = {"rtol": 1e-4, "atol": 1e-5}


def _save(out, name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(model, path)
    return path


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def pack_bits(values, bits):
    """Packs the last axis of `values` (ints < 2**bits) into bytes, low bits first."""
    per = 8 // bits
    v = values.reshape(*values.shape[:-1], -1, per).astype(np.uint8)
    out = np.zeros(v.shape[:-1], dtype=np.uint8)
    for i in range(per):
        out |= (v[..., i] << (bits * i)).astype(np.uint8)
    return out


def _nbits(rng, out, name, K, N, bits, block, *, zp=None, g_idx=False, bias=False, half=False, accuracy=None,
           a_shape=None):
    kb = (K + block - 1) // block
    q = rng.integers(0, 2 ** bits, size=(N, kb * block))
    b = pack_bits(q, bits).reshape(N, kb, block * bits // 8)
    ft = np.float16 if half else np.float32
    scales = rng.uniform(0.01, 0.05, size=(N, kb)).astype(ft)
    inits = {"B": b, "scales": scales}
    ins = ["A", "B", "scales"]
    if zp == "uint8":
        z = rng.integers(0, 2 ** bits, size=(N, kb))
        zb = (kb * bits + 7) // 8
        zpad = np.zeros((N, zb * (8 // bits)), dtype=np.int64)
        zpad[:, :kb] = z
        inits["zero_points"] = pack_bits(zpad, bits)
        ins.append("zero_points")
    elif zp == "float":
        inits["zero_points"] = rng.uniform(0, 2 ** bits - 1, size=(N, kb)).astype(ft)
        ins.append("zero_points")
    if g_idx:
        # A permutation of k's blocks, as act-order (GPTQ) quantization writes.
        inits["g_idx"] = rng.permutation(np.arange(K, dtype=np.int32) // block).astype(np.int32)
        ins += [""] * (4 - len(ins)) + ["g_idx"]
    if bias:
        inits["bias"] = rng.standard_normal(N).astype(ft)
        ins += [""] * (5 - len(ins)) + ["bias"]
    attrs = {"K": K, "N": N, "bits": bits, "block_size": block}
    if accuracy is not None:
        attrs["accuracy_level"] = accuracy
    node = helper.make_node("MatMulNBits", ins, ["Y"], domain=MS, **attrs)
    a_shape = a_shape or [3, K]
    et = TensorProto.FLOAT16 if half else TensorProto.FLOAT
    path = _save(out, name, [node], [_vi("A", et, a_shape)], [_vi("Y", et, a_shape[:-1] + [N])], inits)
    a = rng.standard_normal(a_shape).astype(ft)
    return path, {"A": a}


def contrib_quant_models(out, rng):
    made = []
    K, N = 96, 24
    # MatMulNBits: each bit width, zero point form, g_idx, bias, float16,
    # a K that is not a multiple of the block, a 3-D A.
    nbits_cases = [
        ("ms_matmul_nbits_4b", dict(K=K, N=N, bits=4, block=32)),
        ("ms_matmul_nbits_4b_zp", dict(K=K, N=N, bits=4, block=32, zp="uint8", bias=True)),
        ("ms_matmul_nbits_4b_zp_odd_blocks", dict(K=80, N=N, bits=4, block=32, zp="uint8")),
        ("ms_matmul_nbits_4b_float_zp", dict(K=K, N=N, bits=4, block=16, zp="float")),
        ("ms_matmul_nbits_4b_3d", dict(K=K, N=N, bits=4, block=64, a_shape=[2, 5, K])),
        ("ms_matmul_nbits_8b_zp", dict(K=K, N=N, bits=8, block=32, zp="uint8", bias=True)),
        ("ms_matmul_nbits_8b", dict(K=K, N=N, bits=8, block=16)),
        ("ms_matmul_nbits_2b_zp", dict(K=K, N=N, bits=2, block=32, zp="uint8")),
        ("ms_matmul_nbits_4b_fp16", dict(K=K, N=N, bits=4, block=32, zp="uint8", bias=True, half=True)),
        ("ms_matmul_nbits_4b_g_idx_trivial", dict(K=K, N=N, bits=4, block=32)),
        ("ms_matmul_nbits_4b_g_idx", dict(K=K, N=N, bits=4, block=32, g_idx=True, bias=True)),
        ("ms_matmul_nbits_4b_g_idx_float_zp", dict(K=K, N=N, bits=4, block=32, g_idx=True, zp="float")),
    ]
    for name, kw in nbits_cases:
        path, inputs = _nbits(rng, out, name, **kw)
        if name.endswith("g_idx_trivial"):
            # g_idx equal to k / block_size: the same weights.
            m = onnx.load(path)
            g = numpy_helper.from_array((np.arange(kw["K"]) // kw["block"]).astype(np.int32), "g_idx")
            m.graph.initializer.append(g)
            m.graph.node[0].input.extend(["", "g_idx"][len(m.graph.node[0].input) - 3:])
            onnx.save(m, path)
        # float16: the output rounds to half (ulp 2^-10 relative).
        compare = {"rtol": 2e-3, "atol": 2e-3} if kw.get("half") else EXACT
        made.append((name, path, inputs, f"com.microsoft MatMulNBits {kw}", compare))

    # accuracy_level 4: ONNX Runtime 1.30 on x86-64 rounds A to int8 per
    # block (4- and 8-bit weights; 2-bit ones in blocks of 32 or more), as
    # dlrt then does: the float tolerance (8-bit: sums of larger terms, atol
    # 1e-4). A 2-bit model in blocks of 16 stays float in both.
    acc_cases = [
        ("ms_matmul_nbits_4b_accuracy4", dict(K=K, N=N, bits=4, block=32, zp="uint8"), EXACT),
        ("ms_matmul_nbits_4b_accuracy4_odd_blocks", dict(K=80, N=N, bits=4, block=32, bias=True), EXACT),
        ("ms_matmul_nbits_8b_accuracy4", dict(K=K, N=N, bits=8, block=16, zp="uint8"), {"rtol": 1e-4, "atol": 1e-4}),
        ("ms_matmul_nbits_2b_accuracy4", dict(K=K, N=N, bits=2, block=32, zp="uint8"), EXACT),
        ("ms_matmul_nbits_2b_accuracy4_block16", dict(K=K, N=N, bits=2, block=16), EXACT),
        ("ms_matmul_nbits_4b_fp16_accuracy4", dict(K=K, N=N, bits=4, block=32, zp="uint8", half=True),
         {"rtol": 2e-3, "atol": 2e-3}),
    ]
    for name, kw, compare in acc_cases:
        path, inputs = _nbits(rng, out, name, accuracy=4, **kw)
        made.append((name, path, inputs, f"com.microsoft MatMulNBits accuracy_level 4 {kw}", compare))

    # QAttention: 2 heads of 8, uint8 input, uint8 and int8 weights, per
    # tensor and per column scales and zero points, mask formats, causal.
    B, S, D, H = 2, 5, 16, 2
    h = 8 * H
    qa_cases = [
        ("ms_qattention_u8u8", np.uint8, False, None, False),
        ("ms_qattention_u8s8_per_column", np.int8, True, None, False),
        ("ms_qattention_lengths", np.uint8, False, "lengths", False),
        ("ms_qattention_mask_2d_causal", np.int8, True, "mask_2d", True),
    ]
    for name, wt, per_col, mask, causal in qa_cases:
        lo, hi = (0, 256) if wt == np.uint8 else (-128, 128)
        w = rng.integers(lo, hi, size=(D, 3 * h)).astype(wt)
        ncol = 3 * h if per_col else 1
        w_scale = rng.uniform(0.002, 0.01, size=(ncol,)).astype(np.float32)
        w_zp = rng.integers(lo, hi, size=(ncol,)).astype(wt) if wt == np.uint8 or per_col else None
        inits = {"w": w, "bias": (rng.standard_normal(3 * h) * 0.1).astype(np.float32),
                 "x_scale": np.array(0.02, dtype=np.float32), "w_scale": w_scale if per_col else w_scale.reshape(()),
                 "x_zp": np.array(128, dtype=np.uint8)}
        if w_zp is not None:
            inits["w_zp"] = w_zp if per_col else w_zp.reshape(())
        ins = ["x", "w", "bias", "x_scale", "w_scale", "mask" if mask else "", "x_zp", "w_zp" if w_zp is not None else ""]
        while ins and ins[-1] == "":
            ins.pop()
        gins = [_vi("x", TensorProto.UINT8, [B, S, D])]
        feeds = {"x": rng.integers(0, 256, size=(B, S, D)).astype(np.uint8)}
        if mask == "lengths":
            gins.append(_vi("mask", TensorProto.INT32, [B]))
            feeds["mask"] = np.array([S, 3], dtype=np.int32)
        elif mask == "mask_2d":
            gins.append(_vi("mask", TensorProto.INT32, [B, S]))
            feeds["mask"] = np.array([[1] * S, [1, 1, 0, 1, 0]], dtype=np.int32)
        node = helper.make_node("QAttention", ins, ["y"], domain=MS, num_heads=H, unidirectional=int(causal))
        path = _save(out, name, [node], gins, [_vi("y", TensorProto.FLOAT, [B, S, h])], inits)
        made.append((name, path, feeds, f"com.microsoft QAttention ({name[len('ms_qattention_'):]})", EXACT))

    # QEmbedLayerNormalization: uint8 tables with segments and a mask; int8
    # tables without segments or mask.
    V, P, Hd = 30, 12, 16
    for name, qt, seg, mask in (("ms_qembed_layer_norm_u8", np.uint8, True, True),
                                ("ms_qembed_layer_norm_s8", np.int8, False, False)):
        lo, hi = (0, 256) if qt == np.uint8 else (-128, 128)
        tables = {"word": (V, Hd), "pos": (P, Hd), "seg": (2, Hd), "gamma": (Hd,), "beta": (Hd,)}
        inits = {}
        for t, shape in tables.items():
            if t == "seg" and not seg:
                continue
            inits[t] = rng.integers(lo, hi, size=shape).astype(qt)
            inits[t + "_scale"] = np.array(rng.uniform(0.005, 0.02), dtype=np.float32)
            inits[t + "_zp"] = np.array(rng.integers(lo, hi), dtype=qt)
        g = lambda t: t if t in inits else ""  # noqa: E731
        ins = ["ids", "seg_ids" if seg else "", "word", "pos", g("seg"), "gamma", "beta", "mask" if mask else "",
               "word_scale", "pos_scale", g("seg_scale"), "gamma_scale", "beta_scale",
               "word_zp", "pos_zp", g("seg_zp"), "gamma_zp", "beta_zp"]
        feeds = {"ids": rng.integers(0, V, size=(2, 7)).astype(np.int32)}
        gins = [_vi("ids", TensorProto.INT32, [2, 7])]
        if seg:
            feeds["seg_ids"] = rng.integers(0, 2, size=(2, 7)).astype(np.int32)
            gins.append(_vi("seg_ids", TensorProto.INT32, [2, 7]))
        if mask:
            feeds["mask"] = np.array([[1] * 7, [1] * 4 + [0] * 3], dtype=np.int32)
            gins.append(_vi("mask", TensorProto.INT32, [2, 7]))
        node = helper.make_node("QEmbedLayerNormalization", ins, ["y", "mask_index"], domain=MS, epsilon=1e-5)
        path = _save(out, name, [node], gins, [_vi("y", TensorProto.FLOAT, [2, 7, Hd]),
                                               _vi("mask_index", TensorProto.INT32, [2])], inits)
        made.append((name, path, feeds, f"com.microsoft QEmbedLayerNormalization ({qt.__name__} tables"
                     + (", segments, mask)" if seg else ")"), EXACT))
    return made

