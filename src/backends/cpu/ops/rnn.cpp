// Recurrent layers: RNN, GRU, LSTM (opsets 1..14+); the time loop and how it
// uses the threads are in rnn_loop.h and run_rnn below.
//
// For each direction the input projection X*W^T (+ biases) is one GEMM over
// every timestep; the loop over time then only adds H*R^T (a small GEMM per
// step) and applies the gate element-wise maths. Float16/BFloat16 compute in
// float; float64 computes in double. Constant weights are transposed once,
// when the session is prepared, and a run's buffers are per-thread scratch
// kept from run to run.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/lstm_cell.h"
#include "backends/cpu/kernels/rnn_step_gemm.h"
#include "backends/cpu/kernels/simple_gemm_impl.h"
#include "backends/cpu/ops/rnn_attrs.h"
#include "backends/cpu/ops/rnn_loop.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {
namespace {

using namespace rnn;

template <typename T>
void rnn_activate(const RnnActivation& a, T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    // The common gates through the vectorised activation of the GEMM epilogue.
    Activation v;
    if (a.kind == RnnActKind::kSigmoid) v.kind = ActKind::kSigmoid;
    else if (a.kind == RnnActKind::kTanh) v.kind = ActKind::kTanh;
    else if (a.kind == RnnActKind::kRelu) v.kind = ActKind::kRelu;
    if (v.kind != ActKind::kNone) {
      apply_activation(v, x, n);
      return;
    }
  }
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
    case RnnActKind::kRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : T(0); break;
    case RnnActKind::kTanh: for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]); break;
    case RnnActKind::kSigmoid:
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
    case RnnActKind::kAffine: for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta; break;
    case RnnActKind::kLeakyRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * x[i]; break;
    case RnnActKind::kThresholdedRelu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= alpha ? x[i] : T(0); break;
    case RnnActKind::kScaledTanh: for (int64_t i = 0; i < n; ++i) x[i] = alpha * std::tanh(beta * x[i]); break;
    case RnnActKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(T(1), std::max(T(0), alpha * x[i] + beta));
      break;
    case RnnActKind::kElu: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * (std::exp(x[i]) - T(1)); break;
    case RnnActKind::kSoftsign: for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::abs(x[i])); break;
    case RnnActKind::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], T(0)) + std::log1p(std::exp(-std::abs(x[i])));
      break;
  }
}

// The fused cell update for an LSTM it covers (see RnnLoop::lstm_cell), else null.
// At 128 bits (portable code) the cell stays unfused, as the rest of the run.
template <typename T>
auto fused_lstm_cell(const RnnAttrs& cfg, bool peephole) -> void (*)(int64_t, const T*, T*, T*) {
  if constexpr (std::is_same_v<T, float>) {
    const SimdWidth width = simd_width();
    if (cfg.cell != Cell::kLstm || peephole || cfg.has_clip || cfg.input_forget || width == SimdWidth::k128)
      return nullptr;
    for (size_t i = 0; i < cfg.acts.size(); ++i)
      if (cfg.acts[i].kind != (i % 3 == 0 ? RnnActKind::kSigmoid : RnnActKind::kTanh)) return nullptr;
    return lstm_cell_at(width);
  }
  (void)cfg, (void)peephole;
  return nullptr;
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

// Copies `n` elements of `t` (or zeros when it is absent) into `dst` as T.
template <typename T, typename E>
void convert_into(const Tensor* t, size_t n, T* dst) {
  if (!t) {
    std::fill(dst, dst + n, T(0));
    return;
  }
  const E* p = t->data<E>();
  for (size_t i = 0; i < n; ++i) dst[i] = Converter<T, E>::in(p[i]);
}

// Writes the [rows, cols] block `src` transposed, as [cols, rows], into `dst`.
template <typename T, typename E>
void transpose_into(const E* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock)
      for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kBlock); ++c)
          dst[c * rows + r] = Converter<T, E>::in(src[r * cols + c]);
}

// The per-step product h R^T: a batch of up to 8 rows runs the few-row kernel on
// one thread (rnn_step_gemm.h, at the CPU's vector width); more rows, another
// type or no vector kernels (DLRT_CPU_ISA=generic) the tiled gemm_acc.
template <typename T>
void step_gemm_acc(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
                   int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    if (M <= 8 && cpu_has_simd_kernels()) return few_rows_gemm_acc(simd_width(), M, N, K, A, lda, B, ldb, C, ldc);
  }
  detail::gemm_acc<T>(M, N, K, A, lda, B, ldb, C, ldc, pool);
}

// The weights in the form the loop reads: per direction W^T [I, GH] and R^T
// in panels (rnn_loop.h), the biases [D, 2 GH] and peepholes [D, 3 H], all in T; prepared
// float weights also hold each direction's W^T packed for the GEMM.
template <typename T>
struct Weights {
  T* wt = nullptr;
  T* rt = nullptr;
  T* bias = nullptr;
  T* peep = nullptr;
  bool has_peep = false;
  const PackedMatrix* wt_packed[2] = {nullptr, nullptr};
};

struct WeightSizes {
  size_t wt, rt, bias, peep;
};

WeightSizes weight_sizes(const RnnAttrs& at, const Dims& dm) {
  const int64_t GH = at.G * dm.H;
  return {static_cast<size_t>(at.D * dm.I * GH), static_cast<size_t>(at.D * dm.H * GH),
          static_cast<size_t>(at.D * 2 * GH), static_cast<size_t>(at.D * 3 * dm.H)};
}

template <typename T, typename E>
void prepare_weights(const RnnAttrs& at, const Dims& dm, const Tensor* w, const Tensor* r, const Tensor* b,
                     const Tensor* p, const Weights<T>& out) {
  const int64_t GH = at.G * dm.H;
  const WeightSizes ws = weight_sizes(at, dm);
  for (int64_t d = 0; d < at.D; ++d) {
    transpose_into<T, E>(w->data<E>() + d * GH * dm.I, GH, dm.I, out.wt + d * dm.I * GH);
    pack_r_panels<T, E>(r->data<E>() + d * GH * dm.H, at.G, dm.H, rnn_chunk_width(at.D, at.G, dm.H, sizeof(T)),
                        out.rt + d * dm.H * GH, Converter<T, E>::in);
  }
  convert_into<T, E>(b, ws.bias, out.bias);
  convert_into<T, E>(at.cell == Cell::kLstm ? p : nullptr, ws.peep, out.peep);
}

// Weights prepared once from the graph's constants; a run uses them only when
// its inputs are the very tensors they were made from.
template <typename T>
struct PreparedWeights {
  const void* w = nullptr;
  const void* r = nullptr;
  const void* b = nullptr;
  const void* p = nullptr;
  Dims dims;
  std::vector<T> data;
  std::shared_ptr<const PackedMatrix> packed[2];  // W^T per direction (float, vector ISAs)
  Weights<T> view;

  bool matches(const Tensor* w_in, const Tensor* r_in, const Tensor* b_in, const Tensor* p_in, const Dims& dm) const {
    // The very tensor, or the stand-in of one an executor freed (drop_constant).
    auto same = [](const void* made_from, const Tensor* t) {
      if (!t) return made_from == nullptr;
      return made_from && (t->raw_data() == made_from || is_freed_constant(*t));
    };
    return w && same(w, w_in) && same(r, r_in) && same(b, b_in) && same(p, p_in) && dims.I == dm.I && dims.H == dm.H;
  }
  // Whether constant input `input` (W 1, R 2, B 3, P 7) is one these were made from.
  bool made_from_input(size_t input) const {
    if (!w) return false;
    return input == 1 || input == 2 || (input == 3 && b) || (input == 7 && p);
  }
};

// Per-thread buffers of the recurrence, kept from run to run: a run whose
// shapes the thread has seen allocates nothing.
template <typename T>
T* workspace(size_t n) {
  static thread_local AlignedScratch ws;
  return ws.get<T>(n, AlignedScratch::Growth::kByHalf);
}

int64_t* lens_buffer(size_t n) {
  static thread_local AlignedScratch ws;
  return ws.get<int64_t>(n);
}

// A run's buffers, carved in order from the thread's workspace (one
// allocation): X as [S, B, I] when it needs converting, the weights unless
// prepared ones match, the states [D, B, H], Y [S, D, B, H] unless written in
// place, and per direction the loop's gates, scratch and input projections.
template <typename T>
struct RnnBuffers {
  const T* xs = nullptr;
  Weights<T> wv;
  bool has_peep = false;
  T* h_all = nullptr;
  T* h_alt = nullptr;
  T* c_all = nullptr;
  bool want_y = false, y_direct = false;
  Tensor* y_out = nullptr;
  T* ys = nullptr;
  T* gates_all = nullptr;
  T* scratch_all = nullptr;
  T* row_bias = nullptr;
  T* xw_all = nullptr;
};

template <typename T, typename E>
Result<RnnBuffers<T>> rnn_buffers(KernelContext& ctx, const RnnAttrs& cfg, const Dims& dm,
                                  const PreparedWeights<T>* pre) {
  const int64_t S = dm.S, B = dm.B, I = dm.I, H = dm.H, D = cfg.D, G = cfg.G, GH = G * H;
  const bool batch_first = cfg.layout == 1;
  const Tensor* x_in = ctx.input(0);
  const Tensor* w_in = ctx.input(1);
  const Tensor* r_in = ctx.input(2);
  const Tensor* b_in = ctx.input(3);
  const Tensor* p_in = cfg.cell == Cell::kLstm ? ctx.input(7) : nullptr;
  const bool use_pre = pre && pre->matches(w_in, r_in, b_in, p_in, dm);
  for (const Tensor* t : {w_in, r_in, b_in, p_in})
    if (!use_pre && t && is_freed_constant(*t))
      return Internal("a weight was freed for prepared weights that do not apply to this run");
  const bool want_y = ctx.output_requested(0);
  // Y in the [S, D, B, H] order of the loop can be written in place when no
  // conversion or transposition is needed.
  constexpr bool kSameType = std::is_same_v<T, E>;
  const bool y_direct = want_y && kSameType && !batch_first;

  // One workspace, carved in order.
  const WeightSizes wsz = weight_sizes(cfg, dm);
  const size_t n_x = kSameType && !batch_first ? 0 : static_cast<size_t>(S * B * I);
  const size_t n_weights = use_pre ? 0 : wsz.wt + wsz.rt + wsz.bias + wsz.peep;
  const size_t n_state = static_cast<size_t>(D * B * H);
  const size_t n_y = want_y && !y_direct ? static_cast<size_t>(S * D * B * H) : 0;
  const size_t n_loop = static_cast<size_t>(D * B * GH + D * B * H + GH + D * S * B * GH);
  T* cur = workspace<T>(n_x + n_weights + 3 * n_state + n_y + n_loop);
  auto carve = [&cur](size_t n) {
    T* p = cur;
    cur += n;
    return p;
  };

  // X as [S, B, I].
  const T* xs = nullptr;
  if constexpr (kSameType) xs = x_in->data<T>();
  if (n_x) {
    T* dst_x = carve(n_x);
    const E* x = x_in->data<E>();
    for (int64_t t = 0; t < S; ++t)
      for (int64_t b = 0; b < B; ++b) {
        const E* src = x + (batch_first ? (b * S + t) : (t * B + b)) * I;
        T* dst = dst_x + (t * B + b) * I;
        for (int64_t i = 0; i < I; ++i) dst[i] = Converter<T, E>::in(src[i]);
      }
    xs = dst_x;
  }
  Weights<T> wv;
  if (use_pre) {
    wv = pre->view;
  } else {
    wv.wt = carve(wsz.wt);
    wv.rt = carve(wsz.rt);
    wv.bias = carve(wsz.bias);
    wv.peep = carve(wsz.peep);
    prepare_weights<T, E>(cfg, dm, w_in, r_in, b_in, p_in, wv);
  }
  const bool has_peep = p_in != nullptr;

  // Initial states as [D, B, H].
  auto read_state = [&](const Tensor* t, T* s) {
    if (!t) {
      std::fill(s, s + n_state, T(0));
      return;
    }
    const E* p = t->data<E>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j)
          s[(d * B + b) * H + j] = Converter<T, E>::in(p[(batch_first ? (b * D + d) : (d * B + b)) * H + j]);
  };
  T* h_all = carve(n_state);
  T* c_all = carve(n_state);
  T* h_alt = carve(n_state);
  read_state(ctx.input(5), h_all);
  if (cfg.cell == Cell::kLstm) read_state(ctx.input(6), c_all);

  Tensor* y_out = nullptr;
  T* ys = nullptr;  // [S, D, B, H]
  if (want_y) {
    Shape shape = batch_first ? Shape{B, S, D, H} : Shape{S, D, B, H};
    DLRT_ASSIGN_OR_RETURN(y_out, ctx.allocate_output(0, x_in->dtype(), shape));  // zero-filled: skipped steps stay 0
    if (y_direct) {
      if constexpr (kSameType) ys = y_out->data<T>();
    } else {
      ys = carve(n_y);
      std::fill(ys, ys + n_y, T(0));
    }
  }

  T* gates_all = carve(static_cast<size_t>(D * B * GH));
  T* scratch_all = carve(static_cast<size_t>(D * B * H));
  T* row_bias = carve(static_cast<size_t>(GH));
  T* xw_all = carve(static_cast<size_t>(D * S * B * GH));

  RnnBuffers<T> buf;
  buf.xs = xs, buf.wv = wv, buf.has_peep = has_peep, buf.h_all = h_all, buf.h_alt = h_alt, buf.c_all = c_all;
  buf.want_y = want_y, buf.y_direct = y_direct, buf.y_out = y_out, buf.ys = ys;
  buf.gates_all = gates_all, buf.scratch_all = scratch_all, buf.row_bias = row_bias, buf.xw_all = xw_all;
  return buf;
}

// The input projection X W^T plus the biases of every step, per direction,
// each on the whole pool.
template <typename T>
void rnn_input_projection(const RnnAttrs& cfg, const Dims& dm, const RnnBuffers<T>& buf, ThreadPool* pool) {
  const int64_t S = dm.S, B = dm.B, I = dm.I, H = dm.H, D = cfg.D, GH = cfg.G * dm.H;
  const T* xs = buf.xs;
  const Weights<T>& wv = buf.wv;
  T* row_bias = buf.row_bias;
  T* xw_all = buf.xw_all;
  for (int64_t d = 0; d < D; ++d) {
    const T* wt = wv.wt + d * I * GH;  // [I, GH]
    const T* wb = wv.bias + d * 2 * GH;
    const T* rb = wb + GH;
    T* xw = xw_all + d * S * B * GH;
    // Row bias folded into the input projection (GRU with linear_before_reset keeps Rbh apart).
    for (int64_t k = 0; k < GH; ++k) {
      const bool rb_inside = cfg.cell == Cell::kGru && cfg.linear_before_reset && k >= 2 * H;
      row_bias[k] = wb[k] + (rb_inside ? T(0) : rb[k]);
    }
    for (int64_t row = 0; row < S * B; ++row) std::copy(row_bias, row_bias + GH, xw + row * GH);
    // float on a CPU with a vector sgemm kernel: the packed GEMM; else the tiled loop (faster
    // than sgemm's portable kernel).
    // W^T packed when the weights were prepared (not packed again every run).
    bool packed = false;
    if constexpr (std::is_same_v<T, float>) {
      packed = cpu_has_avx2();
      const SgemmOperand a{xs, I, false, nullptr, nullptr}, b{wt, GH, false, wv.wt_packed[d], nullptr};
      if (packed && !(b.packed && sgemm_ex(S * B, GH, I, 1.0f, a, b, 1.0f, xw, GH, nullptr, pool).ok()))
        sgemm(false, false, S * B, GH, I, 1.0f, xs, I, wt, GH, 1.0f, xw, GH, pool);
    }
    if (!packed) detail::gemm_acc<T>(S * B, GH, I, xs, I, wt, GH, xw, GH, pool);
  }
}

// Y, Y_h and Y_c in the layout the node asked for.
template <typename T, typename E>
Status rnn_write_outputs(KernelContext& ctx, const RnnAttrs& cfg, const Dims& dm, const RnnBuffers<T>& buf) {
  const int64_t S = dm.S, B = dm.B, H = dm.H, D = cfg.D;
  const bool batch_first = cfg.layout == 1;
  const Tensor* x_in = ctx.input(0);
  const T* ys = buf.ys;
  Tensor* y_out = buf.y_out;
  if (buf.want_y && !buf.y_direct) {
    E* out = y_out->data<E>();
    for (int64_t t = 0; t < S; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < B; ++b) {
          const T* src = ys + ((t * D + d) * B + b) * H;
          E* dst = out + (batch_first ? ((b * S + t) * D + d) : ((t * D + d) * B + b)) * H;
          for (int64_t j = 0; j < H; ++j) dst[j] = Converter<T, E>::out(src[j]);
        }
  }
  auto write_state = [&](size_t idx, const T* st) -> Status {
    if (!ctx.output_requested(idx)) return Status::Ok();
    Shape shape = batch_first ? Shape{B, D, H} : Shape{D, B, H};
    DLRT_ASSIGN_OR_RETURN(Tensor * o, ctx.allocate_output(idx, x_in->dtype(), shape));
    E* out = o->data<E>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b) {
        const T* src = st + (d * B + b) * H;
        E* dst = out + (batch_first ? (b * D + d) : (d * B + b)) * H;
        for (int64_t j = 0; j < H; ++j) dst[j] = Converter<T, E>::out(src[j]);
      }
    return Status::Ok();
  };
  DLRT_RETURN_IF_ERROR(write_state(1, buf.h_all));
  if (cfg.cell == Cell::kLstm) DLRT_RETURN_IF_ERROR(write_state(2, buf.c_all));
  return Status::Ok();
}

template <typename T, typename E>
Status run_rnn(KernelContext& ctx, const RnnAttrs& cfg, const Dims& dm, const int64_t* lens,
               const PreparedWeights<T>* pre) {
  const int64_t H = dm.H, D = cfg.D;
  ThreadPool* pool = &ctx.pool();
  DLRT_ASSIGN_OR_RETURN(const RnnBuffers<T> buf, (rnn_buffers<T, E>(ctx, cfg, dm, pre)));
  rnn_input_projection<T>(cfg, dm, buf, pool);

  RnnLoop<T> loop;
  loop.cfg = &cfg, loop.dm = dm, loop.lens = lens, loop.rtp = buf.wv.rt, loop.bias = buf.wv.bias;
  loop.peep = buf.has_peep ? buf.wv.peep : nullptr, loop.xw = buf.xw_all, loop.gates = buf.gates_all;
  loop.scratch = buf.scratch_all, loop.h = buf.h_all, loop.h_alt = buf.h_alt, loop.c = buf.c_all;
  loop.ys = buf.want_y ? buf.ys : nullptr;
  loop.W = rnn_chunk_width(D, cfg.G, H, sizeof(T));
  loop.lstm_cell = fused_lstm_cell<T>(cfg, loop.peep != nullptr);
  const T clip = static_cast<T>(cfg.clip);
  auto do_clip = [&](T* x, int64_t n) {
    if (!cfg.has_clip) return;
    for (int64_t i = 0; i < n; ++i) x[i] = std::min(clip, std::max(-clip, x[i]));
  };
  auto act = [](const RnnActivation& a, T* x, int64_t n) { rnn_activate(a, x, n); };
  auto acc = [](int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
                ThreadPool* inner) { step_gemm_acc<T>(M, N, K, A, lda, B, ldb, C, ldc, inner); };
  // Where R (every direction's) does not fit one core's L2 the units come in
  // several chunks, and each step is split over the threads by chunk, one
  // direction after the other: each thread then reads only its slice of one
  // direction's R, the smallest share there is, which can stay in its L2
  // across the steps (ddddocr's LSTM: 4 MiB per direction, 2 MiB per thread
  // on 2 threads). Where R fits, a bidirectional layer runs one direction per
  // thread with no per-step synchronisation.
  const int threads = pool->num_threads();
  if (threads > 1 && loop.W < H) {
    for (int64_t d = 0; d < D; ++d) run_recurrence<T>(loop, d, d + 1, pool, acc, act, do_clip);
  } else if (D == 2 && threads > 1) {
    pool->parallel_for(2, 1, [&](int64_t b, int64_t e) {
      for (int64_t d = b; d < e; ++d) run_recurrence<T>(loop, d, d + 1, nullptr, acc, act, do_clip);
    });
  } else {
    run_recurrence<T>(loop, 0, D, threads > 1 ? pool : nullptr, acc, act, do_clip);
  }

  return rnn_write_outputs<T, E>(ctx, cfg, dm, buf);
}

Status check_shape(const KernelContext& ctx, const Tensor* t, const char* name, const Shape& want) {
  if (!t) return Status::Ok();
  if (t->shape() != want)
    return ctx.invalid(std::string("input ") + name + " has shape " + shape_to_string(t->shape()) + ", expected " +
                       shape_to_string(want));
  return Status::Ok();
}

// RNN, GRU and LSTM: attributes parsed at creation and, where W and R (and B,
// P) are graph constants, the weights converted and transposed once.
class RecurrentKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& node, Cell cell, const ConstantInputs* constants) {
    auto k = std::make_unique<RecurrentKernel>();
    DLRT_ASSIGN_OR_RETURN(k->at_, parse_attrs(node, cell));
    if (constants) k->prepare(*constants);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    const RnnAttrs& at = at_;
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(const Tensor* r, required_input(ctx, 2));
    if (!dtype_is_float(x->dtype()))
      return ctx.unsupported(std::string("dtype ") + dtype_name(x->dtype()) + " is not supported");
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (i == 4) continue;  // sequence_lens is int32
      const Tensor* t = ctx.input(i);
      if (t && t->dtype() != x->dtype()) return ctx.invalid("input " + std::to_string(i) + " has a different dtype than X");
    }
    if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3) return ctx.invalid("X, W and R must be 3-D");
    Dims dm;
    dm.S = at.layout == 0 ? x->dim(0) : x->dim(1);
    dm.B = at.layout == 0 ? x->dim(1) : x->dim(0);
    dm.I = x->dim(2);
    dm.H = r->dim(2);
    if (at.hidden_size >= 0 && at.hidden_size != dm.H)
      return ctx.invalid("hidden_size " + std::to_string(at.hidden_size) + " does not match R's shape " +
                         shape_to_string(r->shape()));
    const int64_t D = at.D, B = dm.B, H = dm.H, GH = at.G * dm.H;
    DLRT_RETURN_IF_ERROR(check_shape(ctx, w, "W", {D, GH, dm.I}));
    DLRT_RETURN_IF_ERROR(check_shape(ctx, r, "R", {D, GH, H}));
    DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(3), "B", {D, 2 * GH}));
    const Shape state_shape = at.layout == 0 ? Shape{D, B, H} : Shape{B, D, H};
    DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(5), "initial_h", state_shape));
    if (at.cell == Cell::kLstm) {
      DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(6), "initial_c", state_shape));
      DLRT_RETURN_IF_ERROR(check_shape(ctx, ctx.input(7), "P", {D, 3 * H}));
    }

    int64_t* lens = lens_buffer(static_cast<size_t>(B));
    std::fill(lens, lens + B, dm.S);
    if (const Tensor* sl = ctx.input(4)) {
      DLRT_RETURN_IF_ERROR(check_shape(ctx, sl, "sequence_lens", {B}));
      if (sl->dtype() != DType::kInt32 && sl->dtype() != DType::kInt64)
        return ctx.invalid(std::string("sequence_lens must be int32 or int64, got ") + dtype_name(sl->dtype()));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t v = sl->dtype() == DType::kInt32 ? sl->data<int32_t>()[b] : sl->data<int64_t>()[b];
        if (v < 0 || v > dm.S)
          return ctx.invalid("sequence_lens value " + std::to_string(v) + " is outside [0, " + std::to_string(dm.S) + "]");
        lens[b] = v;
      }
    }

    switch (x->dtype()) {
      case DType::kFloat32: return run_rnn<float, float>(ctx, at, dm, lens, &pre_f_);
      case DType::kFloat64: return run_rnn<double, double>(ctx, at, dm, lens, &pre_d_);
      case DType::kFloat16: return run_rnn<float, Float16>(ctx, at, dm, lens, &pre_f_);
      case DType::kBFloat16: return run_rnn<float, BFloat16>(ctx, at, dm, lens, &pre_f_);
      default: return ctx.unsupported(std::string("dtype ") + dtype_name(x->dtype()) + " is not supported");
    }
  }

  // The prepared weights are copies (converted, transposed, packed): the
  // constants they were made from can go, and this kernel holds none of them.
  bool can_drop_constant(size_t input) const override {
    return pre_f_.made_from_input(input) || pre_d_.made_from_input(input);
  }

 private:
  // Prepares the weights from the graph's constants when W and R are
  // constants whose shapes fit the attributes (and B, P are constants or
  // absent); anything else is left to the run, which reports what is wrong.
  void prepare(const ConstantInputs& constants) {
    const Tensor* w = constants(1);
    const Tensor* r = constants(2);
    if (!w || !r || w->rank() != 3 || r->rank() != 3 || w->dtype() != r->dtype()) return;
    Dims dm;
    dm.I = w->dim(2);
    dm.H = r->dim(2);
    const int64_t GH = at_.G * dm.H;
    if (w->shape() != Shape{at_.D, GH, dm.I} || r->shape() != Shape{at_.D, GH, dm.H}) return;
    const Tensor* b = constants(3);
    const Tensor* p = at_.cell == Cell::kLstm ? constants(7) : nullptr;
    if (b && (b->dtype() != w->dtype() || b->shape() != Shape{at_.D, 2 * GH})) return;
    if (p && (p->dtype() != w->dtype() || p->shape() != Shape{at_.D, 3 * dm.H})) return;
    switch (w->dtype()) {
      case DType::kFloat32: prepare_as<float, float>(dm, w, r, b, p, pre_f_); break;
      case DType::kFloat64: prepare_as<double, double>(dm, w, r, b, p, pre_d_); break;
      case DType::kFloat16: prepare_as<float, Float16>(dm, w, r, b, p, pre_f_); break;
      case DType::kBFloat16: prepare_as<float, BFloat16>(dm, w, r, b, p, pre_f_); break;
      default: break;
    }
  }

  template <typename T, typename E>
  void prepare_as(const Dims& dm, const Tensor* w, const Tensor* r, const Tensor* b, const Tensor* p,
                  PreparedWeights<T>& pre) {
    const WeightSizes ws = weight_sizes(at_, dm);
    pre.data.assign(ws.wt + ws.rt + ws.bias + ws.peep, T(0));
    pre.view.wt = pre.data.data();
    pre.view.rt = pre.view.wt + ws.wt;
    pre.view.bias = pre.view.rt + ws.rt;
    pre.view.peep = pre.view.bias + ws.bias;
    prepare_weights<T, E>(at_, dm, w, r, b, p, pre.view);
    if constexpr (std::is_same_v<T, float>) {
      for (int64_t d = 0; d < at_.D && cpu_has_avx2(); ++d) {
        const int64_t GH = at_.G * dm.H;
        pre.packed[d] = PackedMatrix::pack_b(false, dm.I, GH, pre.view.wt + d * dm.I * GH, GH);
        pre.view.wt_packed[d] = pre.packed[d].get();
      }
    }
    pre.w = w->raw_data();
    pre.r = r->raw_data();
    pre.b = b ? b->raw_data() : nullptr;
    pre.p = p ? p->raw_data() : nullptr;
    pre.dims = dm;
  }

  RnnAttrs at_;
  PreparedWeights<float> pre_f_;
  PreparedWeights<double> pre_d_;
};

KernelDef recurrent_def(const char* op, Cell cell) {
  KernelDef def;
  def.op_type = op;
  def.min_opset = 1;
  def.factory = [cell](const ir::Node& node) { return RecurrentKernel::create(node, cell, nullptr); };
  def.factory_with_constants = [cell](const ir::Node& node, const ConstantInputs& constants) {
    return RecurrentKernel::create(node, cell, &constants);
  };
  return def;
}

}  // namespace

Status register_rnn_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(recurrent_def("RNN", Cell::kRnn)));
  DLRT_RETURN_IF_ERROR(r.add(recurrent_def("GRU", Cell::kGru)));
  DLRT_RETURN_IF_ERROR(r.add(recurrent_def("LSTM", Cell::kLstm)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
