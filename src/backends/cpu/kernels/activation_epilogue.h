// Activations applied in kernel epilogues (the com.dlrt Fused* ops and the
// GEMM's output stage): parsed once from a node's `activation` /
// `activation_params` attributes, applied to a tile while it is in cache.
//
// Semantics match the unfused ONNX ops: Relu, Clip [min, max], Sigmoid, Tanh,
// LeakyRelu [alpha], HardSigmoid [alpha, beta], HardSwish, Gelu (erf form),
// Gelu_tanh (the tanh approximation) and Silu (x * Sigmoid(x), the ONNX
// pair Sigmoid then Mul by the input). NaN inputs stay NaN, except where
// the ONNX op itself maps them (Clip/Relu follow max/min like the ONNX kernels).
//
// An optional post-affine (attribute `activation_affine` = [scale, shift])
// follows the activation: y = fma(act(x), scale, shift), the Mul and Add by
// scalar constants that exporters put after activations (ir pass
// activation-affine). Every consumer of an Activation applies it: the vector
// paths through act::apply_array, apply_activation, apply_epilogue or their own
// affine step; the clamp-only paths never see one (clamp_stage reports no
// clamp and none() is false, so they take their general activation path).
//
// An optional post-clamp (attribute `activation_clamp` = [lo, hi]) follows
// the post-affine: y = min(max(y, lo), hi), the Max and Min by scalar
// constants after activations (ir pass activation-clamp). It keeps the
// semantics of dlrt's Max(y, lo) / Min(y, hi): NaN stays NaN, and where y
// equals a bound (+0 and -0) y is kept. The same consumers apply it next to
// the post-affine (apply_post, act::post_of); clamp_stage reports no
// clamp when there is one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt::cpu {

enum class ActKind : uint8_t {
  kNone,
  kRelu,
  kClip,
  kSigmoid,
  kTanh,
  kLeakyRelu,
  kHardSigmoid,
  kHardSwish,
  kGelu,
  kGeluTanh,
  kSilu,
};

struct Activation {
  ActKind kind = ActKind::kNone;
  float p0 = 0.0f;  // Clip min, LeakyRelu alpha, HardSigmoid alpha
  float p1 = 0.0f;  // Clip max, HardSigmoid beta
  // Post-affine y = act * scale + shift (one rounding); the defaults leave
  // every value as it is (-0 is the additive identity for -0 too).
  bool affine = false;
  float scale = 1.0f;
  float shift = -0.0f;
  // Post-clamp y = min(max(y, lo), hi) after the post-affine; lo <= hi.
  bool bounded = false;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool none() const { return kind == ActKind::kNone && !affine && !bounded; }
};

// Relu and Clip as the clamp to [lo, hi] a kernel's store applies in
// registers (Relu: [0, +inf)); `clamp` is false for every other kind.
struct ClampStage {
  bool clamp = false;
  float lo = 0.0f, hi = std::numeric_limits<float>::infinity();
};

inline ClampStage clamp_stage(const Activation& a) {
  ClampStage c;
  c.clamp = !a.affine && !a.bounded && (a.kind == ActKind::kRelu || a.kind == ActKind::kClip);
  if (a.kind == ActKind::kClip) c.lo = a.p0, c.hi = a.p1;
  return c;
}

// Whether the activation is nothing a clamp_stage cannot express.
inline bool clamp_or_none(const Activation& a) { return a.none() || clamp_stage(a).clamp; }

// Builds an activation from its name and parameters (the Fused* attribute
// values); missing parameters take the ONNX op's defaults.
inline Result<Activation> make_activation(const std::string& name, const std::vector<float>& params) {
  Activation a;
  auto param = [&](size_t i, float def) { return i < params.size() ? params[i] : def; };
  if (name.empty() || name == "None" || name == "Identity") {
    a.kind = ActKind::kNone;
  } else if (name == "Relu") {
    a.kind = ActKind::kRelu;
  } else if (name == "Clip") {
    a.kind = ActKind::kClip;
    a.p0 = param(0, -std::numeric_limits<float>::infinity());
    a.p1 = param(1, std::numeric_limits<float>::infinity());
  } else if (name == "Sigmoid") {
    a.kind = ActKind::kSigmoid;
  } else if (name == "Tanh") {
    a.kind = ActKind::kTanh;
  } else if (name == "LeakyRelu") {
    a.kind = ActKind::kLeakyRelu;
    a.p0 = param(0, 0.01f);
  } else if (name == "HardSigmoid") {
    a.kind = ActKind::kHardSigmoid;
    a.p0 = param(0, 0.2f);
    a.p1 = param(1, 0.5f);
  } else if (name == "HardSwish") {
    a.kind = ActKind::kHardSwish;
  } else if (name == "Gelu") {
    a.kind = ActKind::kGelu;
  } else if (name == "Gelu_tanh" || name == "GeluTanh") {
    a.kind = ActKind::kGeluTanh;
  } else if (name == "Silu") {
    a.kind = ActKind::kSilu;
  } else {
    return InvalidArgument("unknown fused activation '" + name + "'");
  }
  return a;
}

// Sets a's post-affine from the node's attribute `attr` ([scale, shift]) when it has one.
inline Status read_activation_affine(const ir::Node& node, const std::string& attr, Activation& a) {
  if (!node.has_attr(attr)) return Status::Ok();
  const std::vector<float> st = node.attr_floats(attr);
  if (st.size() != 2) return InvalidArgument(node.describe() + ": " + attr + " must hold [scale, shift]");
  a.affine = true;
  a.scale = st[0];
  a.shift = st[1];
  return Status::Ok();
}

// Sets a's post-clamp from the node's attribute `attr` ([lo, hi]) when it has one.
inline Status read_activation_clamp(const ir::Node& node, const std::string& attr, Activation& a) {
  if (!node.has_attr(attr)) return Status::Ok();
  const std::vector<float> b = node.attr_floats(attr);
  if (b.size() != 2 || std::isnan(b[0]) || std::isnan(b[1]) || b[0] > b[1])
    return InvalidArgument(node.describe() + ": " + attr + " must hold [lo, hi] with lo <= hi");
  a.bounded = true;
  a.lo = b[0];
  a.hi = b[1];
  return Status::Ok();
}

// The activation named by a node's `activation`, `activation_params`,
// `activation_affine` ([scale, shift]) and `activation_clamp` ([lo, hi])
// attributes (the last two optional).
inline Result<Activation> activation_of(const ir::Node& node) {
  auto a = make_activation(node.attr_string("activation", ""), node.attr_floats("activation_params"));
  if (!a.ok()) return InvalidArgument(node.describe() + ": " + a.status().message());
  DLRT_RETURN_IF_ERROR(read_activation_affine(node, "activation_affine", *a));
  DLRT_RETURN_IF_ERROR(read_activation_clamp(node, "activation_clamp", *a));
  return a;
}

inline float activate_only(const Activation& a, float x);

// The post-affine and the post-clamp of one activated element.
inline float apply_post(const Activation& a, float y) {
  if (a.affine) y = std::fma(y, a.scale, a.shift);
  if (a.bounded) {
    y = y < a.lo ? a.lo : y;  // NaN and ties keep y
    y = y > a.hi ? a.hi : y;
  }
  return y;
}

// One element (the reference the vector code is tested against).
inline float activate(const Activation& a, float x) { return apply_post(a, activate_only(a, x)); }

// The activation without the post-affine.
inline float activate_only(const Activation& a, float x) {
  switch (a.kind) {
    case ActKind::kNone: return x;
    case ActKind::kRelu: return x < 0.0f ? 0.0f : x;
    case ActKind::kClip: return x < a.p0 ? a.p0 : (x > a.p1 ? a.p1 : x);
    case ActKind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActKind::kTanh: return std::tanh(x);
    case ActKind::kLeakyRelu: return x < 0.0f ? a.p0 * x : x;
    case ActKind::kHardSigmoid: return std::max(std::min(a.p0 * x + a.p1, 1.0f), 0.0f);  // NaN stays NaN
    case ActKind::kHardSwish: return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
    case ActKind::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case ActKind::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case ActKind::kSilu: return x * (1.0f / (1.0f + std::exp(-x)));
  }
  return x;
}

// Applies `a` to x[0, n) in place (vectorised where the CPU allows; defined in gemm_epilogue.cpp).
void apply_activation(const Activation& a, float* x, int64_t n);

}  // namespace dlrt::cpu
