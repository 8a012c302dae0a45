// flush_subnormal_weights: subnormal elements of float32 product weights
// become zero (see passes.h).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

// Whether `n` reads its input `k` as the weights of a sum of products (the
// standard ops whose kernels multiply every weight element into a sum).
bool weight_input(const Node& n, size_t k) {
  if (!n.domain.empty()) return false;
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "ConvTranspose") return k == 1;
  if (op == "Gemm" || op == "MatMul") return k <= 1;
  if (op == "LSTM" || op == "GRU" || op == "RNN") return k == 1 || k == 2;
  return false;
}

bool subnormal(uint32_t bits) { return (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0; }

// Branch-free, so that the compiler vectorizes it (it reads every weight of
// the model): the magnitude's bits are in [1, 0x007fffff] exactly when
// subnormal(bits). Blocks of a fixed 64 elements: at -O2 GCC vectorizes only
// loops whose trip count needs no scalar remainder (the open-ended loop ran
// one element at a time, 12 ms of a ResNet-50's 170 ms session create).
int64_t count_subnormals(const float* p, int64_t n) {
  constexpr int64_t kBlock = 64;
  auto is_subnormal = [](const float* x) {
    uint32_t bits;
    std::memcpy(&bits, x, sizeof bits);
    return static_cast<uint32_t>((bits & 0x7fffffffu) - 1u < 0x007fffffu);
  };
  int64_t count = 0, i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t block = 0;
    for (int64_t j = 0; j < kBlock; ++j) block += is_subnormal(p + i + j);
    count += block;
  }
  for (; i < n; ++i) count += is_subnormal(p + i);
  return count;
}

// A copy of `t` (float32) with its subnormal elements replaced by a zero of
// the same sign.
Result<Tensor> flushed_copy(const Tensor& t) {
  DLRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate_uninitialized(DType::kFloat32, t.shape()));
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < t.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, src + i, sizeof bits);
    if (subnormal(bits)) bits &= 0x80000000u;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
  return out;
}

}  // namespace

int flush_subnormal_weights(Graph& g, PassContext& ctx) {
  // 1: read only as product weights; 0: read some other way (or a graph output / capture).
  std::vector<signed char> weights_only(g.values.size(), -1);
  auto mark = [&](ValueId v, bool weight) {
    if (v < 0 || static_cast<size_t>(v) >= g.values.size()) return;
    signed char& m = weights_only[static_cast<size_t>(v)];
    m = (m != 0 && weight) ? 1 : 0;
  };
  for (const Node& n : g.nodes) {
    // A product a dynamic quantizer depends on keeps its weights exact (PassContext::exact_values).
    const bool exact = !n.outputs.empty() && ctx.keeps_rounding(n.outputs[0]);
    for (size_t k = 0; k < n.inputs.size(); ++k) mark(n.inputs[k], weight_input(n, k) && !exact);
  }
  for (ValueId v : g.outputs) mark(v, false);
  for (ValueId v : g.captures) mark(v, false);
  int fired = 0;
  for (size_t v = 0; v < g.values.size(); ++v) {
    Value& value = g.values[v];
    if (weights_only[v] != 1 || !value.constant || value.constant->dtype() != DType::kFloat32) continue;
    const int64_t count = count_subnormals(value.constant->data<float>(), value.constant->size());
    if (count == 0) continue;
    auto flushed = flushed_copy(*value.constant);
    if (!flushed.ok()) continue;  // out of memory: the weights stay exact, only slower
    value.constant = std::move(flushed).value();
    log_fired("flush-subnormal-weights", std::to_string(count) + " of " + std::to_string(value.constant->size()) +
                                             " elements of '" + value.name + "' were subnormal, now zero");
    ++fired;
  }
  ctx.count("flush-subnormal-weights", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
