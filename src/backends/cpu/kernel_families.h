// One registration function per op-family file in this folder.
#pragma once

#include <cstdint>

#include "backends/cpu/kernel.h"

namespace dlrt::cpu {

Status register_elementwise_kernels(KernelRegistry& r);     // elementwise.cpp: binary arithmetic, comparison, logic, Where
Status register_unary_kernels(KernelRegistry& r);           // unary.cpp: unary math
Status register_activation_kernels(KernelRegistry& r);      // activation.cpp
Status register_cast_kernels(KernelRegistry& r);            // cast.cpp: Cast, CastLike, BitCast
Status register_matmul_kernels(KernelRegistry& r);          // matmul.cpp: MatMul, Gemm
Status register_conv_kernels(KernelRegistry& r);            // conv.cpp: Conv, ConvTranspose
Status register_pool_kernels(KernelRegistry& r);            // pool.cpp
Status register_normalization_kernels(KernelRegistry& r);   // normalization.cpp
Status register_shape_kernels(KernelRegistry& r);           // shape.cpp: Reshape, Shape, Squeeze, ...
Status register_layout_kernels(KernelRegistry& r);          // layout.cpp: Transpose, Concat, Slice, Pad, ...
Status register_gather_scatter_kernels(KernelRegistry& r);  // gather_scatter.cpp
Status register_reduce_kernels(KernelRegistry& r);          // reduce.cpp: Reduce*, ArgMax, ArgMin
Status register_softmax_kernels(KernelRegistry& r);         // softmax.cpp: Softmax, LogSoftmax, Hardmax, losses
Status register_sort_kernels(KernelRegistry& r);            // sort.cpp: TopK, CumSum, CumProd, Unique, NonZero...
Status register_einsum_kernels(KernelRegistry& r);          // einsum.cpp
Status register_resize_kernels(KernelRegistry& r);          // resize.cpp: Resize, Upsample, GridSample
Status register_detection_kernels(KernelRegistry& r);       // detection.cpp: NonMaxSuppression, RoiAlign
Status register_rnn_kernels(KernelRegistry& r);             // rnn.cpp: RNN, GRU, LSTM
Status register_control_flow_kernels(KernelRegistry& r);    // control_flow.cpp: If, Loop, Scan
Status register_sequence_kernels(KernelRegistry& r);        // sequence.cpp: Sequence*, Optional*
Status register_quantize_kernels(KernelRegistry& r);        // quantize.cpp
Status register_quantize_conv_kernels(KernelRegistry& r);   // quantize_conv.cpp: ConvInteger, QLinearConv
Status register_quantize_conv_nhwc_kernels(KernelRegistry& r);  // quantize_conv_nhwc.cpp: com.dlrt QLinearConvNhwc
Status register_blocked_kernels(KernelRegistry& r);         // blocked.cpp: com.dlrt ToBlocked, ConvBlocked, ...
Status register_pool_nhwc_kernels(KernelRegistry& r);       // pool_nhwc.cpp: com.dlrt MaxPoolNhwc
Status register_quantize_contrib_kernels(KernelRegistry& r);  // quantize_contrib.cpp: com.microsoft QLinear*, QGemm
Status register_signal_kernels(KernelRegistry& r);          // signal.cpp: DFT, STFT, windows, MelWeightMatrix
Status register_linalg_kernels(KernelRegistry& r);          // linalg.cpp: Det
Status register_text_kernels(KernelRegistry& r);            // text.cpp: StringNormalizer, StringConcat, StringSplit, TfIdfVectorizer
Status register_fused_kernels(KernelRegistry& r);           // fused.cpp: com.dlrt FusedConv, FusedMatMul, FusedGemm
Status register_transformer_kernels(KernelRegistry& r);     // transformer.cpp: com.dlrt Attention
// contrib_transformer.cpp: com.microsoft SkipLayerNormalization, EmbedLayerNormalization, Attention, Gelu kinds, ...
Status register_contrib_transformer_kernels(KernelRegistry& r);
// contrib_quant_transformer.cpp: com.microsoft MatMulNBits, QAttention, QEmbedLayerNormalization
Status register_contrib_quant_transformer_kernels(KernelRegistry& r);
// contrib_attention.cpp, contrib_gqa.cpp: com.microsoft FusedMatMul, RotaryEmbedding, MultiHeadAttention,
// GroupQueryAttention
Status register_contrib_attention_kernels(KernelRegistry& r);
// ml.cpp: ai.onnx.ml Binarizer, ArrayFeatureExtractor, LabelEncoder, Scaler, Normalizer, Linear*
Status register_ml_kernels(KernelRegistry& r);
Status register_ml_tree_kernels(KernelRegistry& r);  // ml_trees.cpp: TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble
Status register_ml_svm_kernels(KernelRegistry& r);   // ml_svm.cpp: SVMClassifier, SVMRegressor
// ml_encoders.cpp: OneHotEncoder, Imputer, CategoryMapper, FeatureVectorizer
Status register_ml_encoder_kernels(KernelRegistry& r);
Status register_ml_map_kernels(KernelRegistry& r);  // ml_maps.cpp: ZipMap, DictVectorizer

// How many (batch, head, row block) tasks of com.dlrt Attention ran their
// products on AMX (precision bf16x3) since the process started; for tests.
uint64_t attention_amx_runs();
// The same for precision bf16's VDPBF16PS products.
uint64_t attention_bf16_runs();

}  // namespace dlrt::cpu
