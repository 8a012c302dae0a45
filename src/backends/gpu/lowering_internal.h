// What the files of the GPU lowering share (lowering.cpp: the op table and
// placement's checks; lowering_elementwise.cpp, lowering_gemm.cpp,
// lowering_conv.cpp, lowering_reduce.cpp, lowering_data.cpp: the ops;
// lowering_util.cpp: shapes, strides and copies). Not for other code:
// lowering.h is the interface.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "backends/gpu/lowering.h"

namespace dlrt::gpu::lowering_detail {

inline constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

// lowering_util.cpp
Status bad(const ir::Node& n, const std::string& msg);
Status unsup(const ir::Node& n, const std::string& msg);
int64_t numel(const Shape& s);
std::vector<int64_t> contiguous_strides(const Shape& s);
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
Result<Shape> broadcast_shape(const std::vector<Shape>& shapes, const ir::Node& n);
Result<GeoArgs> make_geo(const Shape& dims, const std::vector<std::vector<int64_t>>& strides, const ir::Node& n);
Result<std::vector<int64_t>> ints_of(const Tensor* t, const ir::Node& n, const char* what);
Result<float> float_scalar(const Tensor* t, const ir::Node& n, const char* what);
Result<int64_t> norm_axis(int64_t axis, int64_t rank, const ir::Node& n);
size_t elem_bytes(DType t);
const char* copy_kernel(DType t);
size_t pow2_at_most(size_t v);
Status emit_copy(LowerCtx& c, const ir::Node& n, DType t, int src, int64_t src_off, int dst, int64_t dst_off,
                 const Shape& dims, const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dst_strides);
Launch elementwise_launch(const char* kernel, int64_t count);

// lowering_elementwise.cpp
struct UnaryInfo {
  int32_t act;
  float a, b;
};
Result<UnaryInfo> unary_info(const ir::Node& n, const std::vector<const Tensor*>& host);
std::vector<const Tensor*> host_inputs(LowerCtx& c, const ir::Node& n);
ir::ValueId out0(const ir::Node& n, ir::ValueId override_out);
Status lower_unary(LowerCtx& c, const ir::Node& n);
Status lower_alias(LowerCtx& c, const ir::Node& n);
int32_t binary_code(const std::string& op);
Status emit_binary(LowerCtx& c, const ir::Node& n, const char* kernel, int32_t code, ir::ValueId a, ir::ValueId b,
                   ir::ValueId out, DType out_type);
Status lower_binary(LowerCtx& c, const ir::Node& n);
Status lower_compare(LowerCtx& c, const ir::Node& n);
Status lower_where(LowerCtx& c, const ir::Node& n);
Status lower_cast(LowerCtx& c, const ir::Node& n);

// lowering_gemm.cpp
void set_epilogue(GemmArgs& p, const Epilogue& e);
GemmArgs row_major_gemm(int64_t M, int64_t N, int64_t K);
void emit_gemm(LowerCtx& c, const GemmArgs& p, int a, int b, int y, int bias, int batch);
bool fits(int64_t v);
Status lower_gemm(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out);
Status lower_matmul(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out, ir::ValueId bias);

// lowering_conv.cpp
Status lower_conv(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out);
Status lower_convtranspose(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out);
Status lower_pool(LowerCtx& c, const ir::Node& n);

// lowering_reduce.cpp
int32_t reduce_code(const std::string& op);
int axes_input_opset(const std::string& op);
Status emit_reduce(LowerCtx& c, const ir::Node& n, int32_t code, const std::vector<bool>& reduced, bool keepdims);
Status lower_reduce(LowerCtx& c, const ir::Node& n);
size_t row_local_size(const LowerCtx& c, int64_t len);
Status lower_softmax(LowerCtx& c, const ir::Node& n);
Status lower_layernorm(LowerCtx& c, const ir::Node& n);

// lowering_data.cpp
Status lower_reshape(LowerCtx& c, const ir::Node& n);
Status lower_transpose(LowerCtx& c, const ir::Node& n);
Status lower_concat(LowerCtx& c, const ir::Node& n);
Status lower_split(LowerCtx& c, const ir::Node& n);
Status lower_slice(LowerCtx& c, const ir::Node& n);
Status lower_expand(LowerCtx& c, const ir::Node& n);
Status lower_gather(LowerCtx& c, const ir::Node& n);
const std::map<std::string, int32_t>& resize_coord_codes();
const std::map<std::string, int32_t>& resize_nearest_codes();
Status lower_resize(LowerCtx& c, const ir::Node& n);

}  // namespace dlrt::gpu::lowering_detail
