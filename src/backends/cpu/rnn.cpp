// Recurrent layers: RNN, GRU, LSTM (opsets 1..14+), one direction at a time.
//
// For each direction the input projection X*W^T (+ biases) is one GEMM over
// every timestep; the loop over time then only adds H*R^T (a small GEMM per
// step) and applies the gate element-wise maths. Float16/BFloat16 compute in
// float; float64 computes in double.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/simple_gemm_impl.h"

namespace dlrt::cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

enum class ActKind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                     kSoftsign, kSoftplus };

struct Activation {
  ActKind kind = ActKind::kTanh;
  float alpha = 0;
  float beta = 0;
};

struct ActSpec {
  const char* name;
  ActKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults
};

constexpr ActSpec kActSpecs[] = {
    {"relu", ActKind::kRelu, false, false, 0, 0},
    {"tanh", ActKind::kTanh, false, false, 0, 0},
    {"sigmoid", ActKind::kSigmoid, false, false, 0, 0},
    {"affine", ActKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", ActKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", ActKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::kElu, true, false, 1.0f, 0},
    {"softsign", ActKind::kSoftsign, false, false, 0, 0},
    {"softplus", ActKind::kSoftplus, false, false, 0, 0},
};

template <typename T>
void apply_activation(const Activation& a, T* x, int64_t n) {
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
    case ActKind::kRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : T(0); break;
    case ActKind::kTanh: for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]); break;
    case ActKind::kSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        // Written so neither branch overflows exp().
        const T v = x[i];
        if (v >= 0) {
          x[i] = T(1) / (T(1) + std::exp(-v));
        } else {
          const T e = std::exp(v);
          x[i] = e / (T(1) + e);
        }
      }
      break;
    case ActKind::kAffine: for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta; break;
    case ActKind::kLeakyRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * x[i]; break;
    case ActKind::kThresholdedRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= alpha ? x[i] : T(0); break;
    case ActKind::kScaledTanh: for (int64_t i = 0; i < n; ++i) x[i] = alpha * std::tanh(beta * x[i]); break;
    case ActKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(T(1), std::max(T(0), alpha * x[i] + beta));
      break;
    case ActKind::kElu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * (std::exp(x[i]) - T(1)); break;
    case ActKind::kSoftsign: for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::abs(x[i])); break;
    case ActKind::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], T(0)) + std::log1p(std::exp(-std::abs(x[i])));
      break;
  }
}

struct Config {
  Cell cell = Cell::kRnn;
  int64_t S = 0, B = 0, I = 0, H = 0, D = 1, G = 1;
  bool reverse = false;  // only meaningful when D == 1
  int64_t layout = 0;
  bool has_clip = false;
  float clip = 0;
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<Activation> acts;  // D * acts_per_dir
  std::vector<int64_t> lens;     // per batch entry
};

// Parses activations/activation_alpha/activation_beta; `defaults` is one direction's list.
Status parse_activations(const KernelContext& ctx, const std::vector<std::string>& defaults, Config& cfg) {
  const ir::Node& n = ctx.node();
  std::vector<std::string> names = n.attr_strings("activations");
  const size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int64_t d = 0; d < cfg.D; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && cfg.D == 2) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(cfg.D))
    return ctx.invalid("expected " + std::to_string(per_dir * cfg.D) + " activations, got " +
                       std::to_string(names.size()));
  const std::vector<float> alphas = n.attr_floats("activation_alpha");
  const std::vector<float> betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& raw : names) {
    std::string lower;
    for (char c : raw) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const ActSpec* spec = nullptr;
    for (const ActSpec& s : kActSpecs)
      if (lower == s.name) spec = &s;
    if (!spec) return ctx.unsupported("activation '" + raw + "' is not supported");
    Activation a;
    a.kind = spec->kind;
    a.alpha = spec->alpha;
    a.beta = spec->beta;
    if (spec->uses_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (spec->uses_beta && bi < betas.size()) a.beta = betas[bi++];
    cfg.acts.push_back(a);
  }
  return Status::Ok();
}

template <typename T, typename E>
struct Converter {
  static T in(E v) { return static_cast<T>(v); }
  static E out(T v) { return E(static_cast<float>(v)); }
};
template <>
struct Converter<double, double> {
  static double in(double v) { return v; }
  static double out(double v) { return v; }
};

template <typename T, typename E>
std::vector<T> to_vector(const Tensor* t, size_t expected_size) {
  std::vector<T> v(expected_size, T(0));
  if (!t) return v;
  const E* p = t->data<E>();
  for (size_t i = 0; i < expected_size; ++i) v[i] = Converter<T, E>::in(p[i]);
  return v;
}

// Transposes a [rows, cols] block into [cols, rows].
template <typename T>
std::vector<T> transpose(const T* src, int64_t rows, int64_t cols) {
  std::vector<T> dst(static_cast<size_t>(rows * cols));
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock)
      for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kBlock); ++c) dst[c * rows + r] = src[r * cols + c];
  return dst;
}

template <typename T, typename E>
Status run_rnn(KernelContext& ctx, const Config& cfg) {
  const int64_t S = cfg.S, B = cfg.B, I = cfg.I, H = cfg.H, D = cfg.D, G = cfg.G, GH = G * H;
  const bool batch_first = cfg.layout == 1;
  ThreadPool* pool = &ctx.pool();

  // X as [S, B, I].
  std::vector<T> xs(static_cast<size_t>(S * B * I));
  {
    const E* x = ctx.input(0)->data<E>();
    for (int64_t t = 0; t < S; ++t)
      for (int64_t b = 0; b < B; ++b) {
        const E* src = x + (batch_first ? (b * S + t) : (t * B + b)) * I;
        T* dst = xs.data() + (t * B + b) * I;
        for (int64_t i = 0; i < I; ++i) dst[i] = Converter<T, E>::in(src[i]);
      }
  }
  const std::vector<T> w = to_vector<T, E>(ctx.input(1), static_cast<size_t>(D * GH * I));
  const std::vector<T> r = to_vector<T, E>(ctx.input(2), static_cast<size_t>(D * GH * H));
  const std::vector<T> bias = to_vector<T, E>(ctx.input(3), static_cast<size_t>(D * 2 * GH));
  const bool has_peep = cfg.cell == Cell::kLstm && ctx.input(7) != nullptr;
  const std::vector<T> peep = to_vector<T, E>(has_peep ? ctx.input(7) : nullptr, static_cast<size_t>(D * 3 * H));

  // Initial states as [D, B, H].
  auto read_state = [&](const Tensor* t) {
    std::vector<T> s(static_cast<size_t>(D * B * H), T(0));
    if (!t) return s;
    const E* p = t->data<E>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j)
          s[(d * B + b) * H + j] = Converter<T, E>::in(p[(batch_first ? (b * D + d) : (d * B + b)) * H + j]);
    return s;
  };
  std::vector<T> h_all = read_state(ctx.input(5));
  std::vector<T> c_all = cfg.cell == Cell::kLstm ? read_state(ctx.input(6)) : std::vector<T>();

  const bool want_y = ctx.output_requested(0);
  std::vector<T> ys(want_y ? static_cast<size_t>(S * D * B * H) : 0, T(0));  // [S, D, B, H]

  const T clip = static_cast<T>(cfg.clip);
  auto do_clip = [&](T* x, int64_t n) {
    if (!cfg.has_clip) return;
    for (int64_t i = 0; i < n; ++i) x[i] = std::min(clip, std::max(-clip, x[i]));
  };
  const size_t apd = cfg.cell == Cell::kRnn ? 1 : (cfg.cell == Cell::kGru ? 2 : 3);

  std::vector<T> gates(static_cast<size_t>(B * GH));
  std::vector<T> scratch(static_cast<size_t>(B * H));
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = D == 2 ? d == 1 : cfg.reverse;
    const Activation* act = &cfg.acts[d * apd];
    const std::vector<T> wt = transpose(w.data() + d * GH * I, GH, I);  // [I, GH]
    const std::vector<T> rt = transpose(r.data() + d * GH * H, GH, H);  // [H, GH]
    const T* wb = bias.data() + d * 2 * GH;
    const T* rb = wb + GH;

    // Row bias folded into the input projection (GRU with linear_before_reset keeps Rbh apart).
    std::vector<T> row_bias(static_cast<size_t>(GH));
    for (int64_t k = 0; k < GH; ++k) {
      const bool rb_inside = cfg.cell == Cell::kGru && cfg.linear_before_reset && k >= 2 * H;
      row_bias[k] = wb[k] + (rb_inside ? T(0) : rb[k]);
    }
    std::vector<T> xw(static_cast<size_t>(S * B * GH));
    for (int64_t row = 0; row < S * B; ++row) std::copy(row_bias.begin(), row_bias.end(), xw.begin() + row * GH);
    detail::gemm_acc<T>(S * B, GH, I, xs.data(), I, wt.data(), GH, xw.data(), GH, pool);

    T* h = h_all.data() + d * B * H;
    T* c = cfg.cell == Cell::kLstm ? c_all.data() + d * B * H : nullptr;
    const T* p_i = has_peep ? peep.data() + d * 3 * H : nullptr;
    const T* p_o = p_i ? p_i + H : nullptr;
    const T* p_f = p_i ? p_i + 2 * H : nullptr;

    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = reverse ? S - 1 - s : s;
      bool any_active = false;
      for (int64_t b = 0; b < B; ++b) any_active |= t < cfg.lens[b];
      if (!any_active) continue;
      std::copy(xw.begin() + t * B * GH, xw.begin() + (t + 1) * B * GH, gates.begin());
      T* y_t = want_y ? ys.data() + (t * D + d) * B * H : nullptr;

      if (cfg.cell == Cell::kRnn) {
        detail::gemm_acc<T>(B, H, H, h, H, rt.data(), GH, gates.data(), GH, pool);
        for (int64_t b = 0; b < B; ++b) {
          if (t >= cfg.lens[b]) continue;
          T* g = gates.data() + b * GH;
          do_clip(g, H);
          apply_activation(act[0], g, H);
          std::copy(g, g + H, h + b * H);
        }
      } else if (cfg.cell == Cell::kGru) {
        // z and r first: they only need H_{t-1}.
        detail::gemm_acc<T>(B, 2 * H, H, h, H, rt.data(), GH, gates.data(), GH, pool);
        for (int64_t b = 0; b < B; ++b) {
          T* g = gates.data() + b * GH;
          do_clip(g, 2 * H);
          apply_activation(act[0], g, 2 * H);
        }
        if (cfg.linear_before_reset) {
          std::fill(scratch.begin(), scratch.end(), T(0));
          detail::gemm_acc<T>(B, H, H, h, H, rt.data() + 2 * H, GH, scratch.data(), H, pool);
          for (int64_t b = 0; b < B; ++b) {
            T* g = gates.data() + b * GH;
            const T* hr = scratch.data() + b * H;
            for (int64_t j = 0; j < H; ++j) g[2 * H + j] += g[H + j] * (hr[j] + rb[2 * H + j]);
          }
        } else {
          for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < H; ++j) scratch[b * H + j] = gates[b * GH + H + j] * h[b * H + j];
          detail::gemm_acc<T>(B, H, H, scratch.data(), H, rt.data() + 2 * H, GH, gates.data() + 2 * H, GH, pool);
        }
        for (int64_t b = 0; b < B; ++b) {
          if (t >= cfg.lens[b]) continue;
          T* g = gates.data() + b * GH;
          T* hh = g + 2 * H;
          do_clip(hh, H);
          apply_activation(act[1], hh, H);
          T* hb = h + b * H;
          for (int64_t j = 0; j < H; ++j) hb[j] = (T(1) - g[j]) * hh[j] + g[j] * hb[j];
        }
      } else {
        detail::gemm_acc<T>(B, GH, H, h, H, rt.data(), GH, gates.data(), GH, pool);
        for (int64_t b = 0; b < B; ++b) {
          if (t >= cfg.lens[b]) continue;
          T* gi = gates.data() + b * GH;
          T* go = gi + H;
          T* gf = gi + 2 * H;
          T* gc = gi + 3 * H;
          T* cb = c + b * H;
          if (p_i)
            for (int64_t j = 0; j < H; ++j) {
              gi[j] += p_i[j] * cb[j];
              gf[j] += p_f[j] * cb[j];
            }
          do_clip(gi, H);
          apply_activation(act[0], gi, H);
          if (cfg.input_forget) {
            for (int64_t j = 0; j < H; ++j) gf[j] = T(1) - gi[j];
          } else {
            do_clip(gf, H);
            apply_activation(act[0], gf, H);
          }
          do_clip(gc, H);
          apply_activation(act[1], gc, H);
          for (int64_t j = 0; j < H; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
          if (p_o)
            for (int64_t j = 0; j < H; ++j) go[j] += p_o[j] * cb[j];
          do_clip(go, H);
          apply_activation(act[0], go, H);
          T* tmp = scratch.data() + b * H;
          std::copy(cb, cb + H, tmp);
          apply_activation(act[2], tmp, H);
          for (int64_t j = 0; j < H; ++j) h[b * H + j] = go[j] * tmp[j];
        }
      }
      if (y_t)
        for (int64_t b = 0; b < B; ++b)
          if (t < cfg.lens[b]) std::copy(h + b * H, h + (b + 1) * H, y_t + b * H);
    }
  }

  // Outputs, in the layout the node asked for.
  if (want_y) {
    Shape shape = batch_first ? Shape{B, S, D, H} : Shape{S, D, B, H};
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ctx.input(0)->dtype(), shape));
    E* out = y->data<E>();
    for (int64_t t = 0; t < S; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < B; ++b) {
          const T* src = ys.data() + ((t * D + d) * B + b) * H;
          E* dst = out + (batch_first ? ((b * S + t) * D + d) : ((t * D + d) * B + b)) * H;
          for (int64_t j = 0; j < H; ++j) dst[j] = Converter<T, E>::out(src[j]);
        }
  }
  auto write_state = [&](size_t idx, const std::vector<T>& st) -> Status {
    if (!ctx.output_requested(idx)) return Status::Ok();
    Shape shape = batch_first ? Shape{B, D, H} : Shape{D, B, H};
    DLRT_ASSIGN_OR_RETURN(Tensor * o, ctx.allocate_output(idx, ctx.input(0)->dtype(), shape));
    E* out = o->data<E>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b) {
        const T* src = st.data() + (d * B + b) * H;
        E* dst = out + (batch_first ? (b * D + d) : (d * B + b)) * H;
        for (int64_t j = 0; j < H; ++j) dst[j] = Converter<T, E>::out(src[j]);
      }
    return Status::Ok();
  };
  DLRT_RETURN_IF_ERROR(write_state(1, h_all));
  if (cfg.cell == Cell::kLstm) DLRT_RETURN_IF_ERROR(write_state(2, c_all));
  return Status::Ok();
}

Status check_shape(const KernelContext& ctx, const Tensor* t, const char* name, const Shape& want) {
  if (!t) return Status::Ok();
  if (t->shape() != want)
    return ctx.invalid(std::string("input ") + name + " has shape " + shape_to_string(t->shape()) + ", expected " +
                       shape_to_string(want));
  return Status::Ok();
}

Status compute_recurrent(KernelContext& ctx, Cell cell) {
  const ir::Node& n = ctx.node();
  Config cfg;
  cfg.cell = cell;
  cfg.G = cell == Cell::kRnn ? 1 : (cell == Cell::kGru ? 3 : 4);
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* r, required_input(ctx, 2));
  if (!dtype_is_float(x->dtype())) return ctx.unsupported(std::string("dtype ") + dtype_name(x->dtype()) + " is not supported");
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (i == 4) continue;  // sequence_lens is int32
    const Tensor* t = ctx.input(i);
    if (t && t->dtype() != x->dtype()) return ctx.invalid("input " + std::to_string(i) + " has a different dtype than X");
  }
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3) return ctx.invalid("X, W and R must be 3-D");

  const std::string direction = n.attr_string("direction", "forward");
  if (direction == "forward") {
    cfg.D = 1;
  } else if (direction == "reverse") {
    cfg.D = 1;
    cfg.reverse = true;
  } else if (direction == "bidirectional") {
    cfg.D = 2;
  } else {
    return ctx.invalid("unknown direction '" + direction + "'");
  }
  cfg.layout = ctx.opset() >= 14 ? n.attr_int("layout", 0) : 0;
  if (cfg.layout != 0 && cfg.layout != 1) return ctx.invalid("layout must be 0 or 1");
  cfg.S = cfg.layout == 0 ? x->dim(0) : x->dim(1);
  cfg.B = cfg.layout == 0 ? x->dim(1) : x->dim(0);
  cfg.I = x->dim(2);
  cfg.H = r->dim(2);
  if (n.has_attr("hidden_size") && n.attr_int("hidden_size", 0) != cfg.H)
    return ctx.invalid("hidden_size " + std::to_string(n.attr_int("hidden_size", 0)) + " does not match R's shape " +
                       shape_to_string(r->shape()));
  const int64_t D = cfg.D, B = cfg.B, H = cfg.H, GH = cfg.G * cfg.H;
  DLRT_RETURN_IF_ERROR(check_shape(ctx, w, "W", {D, GH, cfg.I}));
  DLRT_RETURN_IF_ERROR(check_shape(ctx, r, "R", {D, GH, H}));
  DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(3), "B", {D, 2 * GH}));
  const Shape state_shape = cfg.layout == 0 ? Shape{D, B, H} : Shape{B, D, H};
  DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(5), "initial_h", state_shape));
  if (cell == Cell::kLstm) {
    DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(6), "initial_c", state_shape));
    DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(7), "P", {D, 3 * H}));
  }

  cfg.lens.assign(static_cast<size_t>(B), cfg.S);
  if (const Tensor* sl = ctx.input(4)) {
    DLRT_RETURN_IF_ERROR(check_shape(ctx, sl, "sequence_lens", {B}));
    DLRT_ASSIGN_OR_RETURN(cfg.lens, read_int_tensor(*sl, ctx));
    for (int64_t v : cfg.lens)
      if (v < 0 || v > cfg.S)
        return ctx.invalid("sequence_lens value " + std::to_string(v) + " is outside [0, " + std::to_string(cfg.S) + "]");
  }
  if (const ir::Attribute* a = n.attr("clip")) {
    cfg.has_clip = true;
    cfg.clip = a->f;
    if (!(cfg.clip > 0)) return ctx.invalid("clip must be positive");
  }
  cfg.linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  cfg.input_forget = n.attr_int("input_forget", 0) != 0;
  static const std::vector<std::string> kRnnActs = {"Tanh"}, kGruActs = {"Sigmoid", "Tanh"},
                                        kLstmActs = {"Sigmoid", "Tanh", "Tanh"};
  DLRT_RETURN_IF_ERROR(
      parse_activations(ctx, cell == Cell::kRnn ? kRnnActs : (cell == Cell::kGru ? kGruActs : kLstmActs), cfg));

  switch (x->dtype()) {
    case DType::kFloat32: return run_rnn<float, float>(ctx, cfg);
    case DType::kFloat64: return run_rnn<double, double>(ctx, cfg);
    case DType::kFloat16: return run_rnn<float, Float16>(ctx, cfg);
    case DType::kBFloat16: return run_rnn<float, BFloat16>(ctx, cfg);
    default: return ctx.unsupported(std::string("dtype ") + dtype_name(x->dtype()) + " is not supported");
  }
}

Status compute_rnn(KernelContext& ctx) { return compute_recurrent(ctx, Cell::kRnn); }
Status compute_gru(KernelContext& ctx) { return compute_recurrent(ctx, Cell::kGru); }
Status compute_lstm(KernelContext& ctx) { return compute_recurrent(ctx, Cell::kLstm); }

}  // namespace

Status register_rnn_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("RNN", compute_rnn, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GRU", compute_gru, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("LSTM", compute_lstm, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
