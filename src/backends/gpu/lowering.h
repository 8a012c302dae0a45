// Lowering ONNX nodes to GPU kernel launches (host side of kernels/*.cl).
//
// The kernels are written once in a dialect that compiles both as OpenCL C
// and as CUDA C++ (kernels/common.cl), so the OpenCL and CUDA backends share
// this lowering and the executor (executor.h); only the way a launch reaches
// the device differs.
//
// The executor walks a partition in order. Nodes it classifies as device
// nodes are lowered here: given the shapes (and, for shape-like inputs, the
// host values) of their inputs, a lowering fixes the output shapes and emits
// launches whose buffer arguments are *slots*, device buffers the plan assigns
// later by liveness. Reshape-like ops alias their input's slot (no copy).
//
// Thread-safety: a LowerCtx is used by one thread; the op table is immutable.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "ir/graph.h"

namespace dlrt::gpu {

inline constexpr int kMaxRank = 6;

// Mirrors of the kernels' parameter structs (ints/floats only: the layouts match).
struct GeoArgs {
  int32_t rank = 0, n = 0;
  int32_t dims[kMaxRank] = {};
  int32_t s[4][kMaxRank] = {};
};
struct GemmArgs {
  int32_t M = 0, N = 0, K = 0;
  int32_t a_off = 0, a_sm = 0, a_sk = 0, a_sb1 = 0, a_sb2 = 0;
  int32_t b_off = 0, b_sk = 0, b_sn = 0, b_sb1 = 0, b_sb2 = 0;
  int32_t c_off = 0, c_sm = 0, c_sn = 0, c_sb1 = 0, c_sb2 = 0;
  int32_t bias_off = 0, bias_sm = 0, bias_sn = 0, has_bias = 0;
  int32_t nb2 = 1, act = 0;
  float alpha = 1, beta = 1, act_a = 0, act_b = 0;
};
struct ConvArgs {
  int32_t C = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int32_t x_off = 0, n = 0;
  int32_t kp = 0, x_bstride = 0;  // im2col over several images: K * P per image, input elements per image
  int32_t fast = 0;                // kp < 2^22: divide by the reciprocals below
  float r_p = 0, r_ow = 0, r_kw = 0, r_kh = 0;
  int32_t col_img = 0, col_row = 0;  // col[img * col_img + row * col_row + q]
};
struct DwArgs {
  int32_t C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, KH = 0, KW = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1,
          dw = 1, mult = 1, has_bias = 0, act = 0, n = 0;
  float act_a = 0, act_b = 0;
};
struct ConvTArgs {  // ConvTranspose; C and M per group, weights [G*C, M, KH, KW]
  int32_t C = 0, H = 0, W = 0, M = 0, G = 1, OH = 0, OW = 0, KH = 0, KW = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1,
          dw = 1, has_bias = 0, act = 0, n = 0;
  float act_a = 0, act_b = 0;
};
struct PoolArgs {
  int32_t C = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0, sh = 1, sw = 1, ph = 0, pw = 0, ph_end = 0, pw_end = 0,
          dh = 1, dw = 1, count_include_pad = 0, n = 0;
};
struct ResizeArgs {
  int32_t C = 0, H = 0, W = 0, OH = 0, OW = 0, linear = 0, coord = 0, nearest = 0, n = 0;
  float scale_h = 1, scale_w = 1;
};

// Activation codes (ACT_* in kernels/common.cl).
enum Act : int32_t {
  kActNone = 0, kActRelu = 1, kActClip = 2, kActSigmoid = 3, kActLeaky = 4, kActHardSigmoid = 5, kActHardSwish = 6,
  kActTanh = 7, kActGeluErf = 8, kActGeluTanh = 9, kActExp = 10, kActLog = 11, kActSqrt = 12, kActAbs = 13,
  kActNeg = 14, kActErf = 15, kActRecip = 16, kActFloor = 17, kActCeil = 18, kActSoftplus = 19, kActIdentity = 20,
  kActSin = 21, kActCos = 22, kActElu = 23, kActSelu = 24, kActMul = 25, kActRound = 26, kActSign = 27,
  kActSoftsign = 28, kActMish = 29, kActRsqrt = 30,
};

// An activation folded into the producing Gemm/MatMul/Conv.
struct Epilogue {
  int32_t act = kActNone;
  float a = 0, b = 0;
};

// One kernel argument: a slot (device buffer) or raw bytes (scalars, structs).
struct LArg {
  enum class Kind { kSlot, kBytes } kind = Kind::kBytes;
  int slot = -1;
  std::vector<uint8_t> bytes;
};

struct Launch {
  std::string kernel;
  std::vector<LArg> args;
  int dims = 1;
  size_t gws[3] = {1, 1, 1};
  // All zero: the device chooses. Kernels launched so take a 1-D range and
  // ignore work-items past their element count, so a device may round gws up.
  size_t lws[3] = {0, 0, 0};

  Launch& slot(int s) { args.push_back({LArg::Kind::kSlot, s, {}}); return *this; }
  template <typename T>
  Launch& val(const T& v) {
    LArg a;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    args.push_back(std::move(a));
    return *this;
  }
};

// What a lowering needs to know about the device.
struct DeviceParams {
  int gemm_ts = 64;    // GEMM tile (build option GEMM_TS)
  int gemm_wpt = 4;    // outputs per work-item per dim (GEMM_WPT)
  size_t max_wg = 256;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
};

// The executor's side of a lowering.
class LowerCtx {
 public:
  virtual ~LowerCtx() = default;
  virtual const DeviceParams& device() const = 0;
  // The value's shape and dtype (host or device).
  virtual const Shape& shape(ir::ValueId v) const = 0;
  virtual DType dtype(ir::ValueId v) const = 0;
  // The host tensor of a host value, nullptr for a device value or an absent one.
  virtual const Tensor* host(ir::ValueId v) const = 0;
  // The slot holding value v on the device (host values are uploaded).
  virtual Result<int> slot_of(ir::ValueId v) = 0;
  // Declares a device output with a fresh slot; returns the slot.
  virtual Result<int> define(ir::ValueId out, Shape shape, DType dtype) = 0;
  // Declares `out` as a view of `in` with another shape (no copy).
  virtual Status alias(ir::ValueId out, ir::ValueId in, Shape shape) = 0;
  // A scratch buffer alive for this node only.
  virtual int scratch(size_t bytes) = 0;
  virtual void launch(Launch l) = 0;
};

// Whether the device can run `node` (float32 data), given which of its inputs
// are host values (`host_input[i]`) and the value types of `graph`. Empty when
// it can; else why not.
std::string device_unsupported_reason(const ir::Graph& graph, const ir::Node& node,
                                      const std::vector<bool>& host_input);

// Lowers one device node. `epi` is an activation fused into it (Gemm, MatMul,
// Conv only); `out_override` replaces output 0 (the fused activation's output).
Status lower_node(LowerCtx& ctx, const ir::Node& node, const Epilogue& epi, ir::ValueId out_override);

// MatMul whose output gets `bias` ([N], a fused Add) added before `epi`;
// the result is written to `out`.
Status lower_matmul_bias(LowerCtx& ctx, const ir::Node& node, ir::ValueId bias, ir::ValueId out, const Epilogue& epi);

// The activation of a unary node that may be fused as an epilogue, if any.
bool epilogue_of(const ir::Node& node, const std::vector<const Tensor*>& host_inputs, Epilogue* epi);

}  // namespace dlrt::gpu
