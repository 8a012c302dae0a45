// Conv's float32 paths over the GEMM-like kernels (Winograd, Yᵀ = im2colᵀ ·
// Wᵀ, the direct tile, W_g times the im2col rows on the GEMM or AMX) and the
// float64 path; conv.cpp chooses among them.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/scratch.h"
#include "core/first_error.h"

namespace dlrt::cpu {
namespace conv_detail {
namespace {

// col[(c*K + kk), o] = x[c, pos(o, kk)] or 0 in the padding. `x` holds `channels` planes.
template <typename T>
void im2col(const T* x, int64_t channels, const Geo3& g, T* col) {
  const int64_t in_plane = g.in_size(), out_plane = g.out_size();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_plane;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++row) {
          T* dst = col + row * out_plane;
          // Output columns whose input column is inside the image: ow in [w0, w1).
          const int64_t off_w = kw * g.d[2] - g.pb[2];
          int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
          int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
          w1 = std::min(w1, g.out[2]);
          w0 = std::min(w0, w1);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh, dst += g.out[2]) {
              const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(dst, dst + g.out[2], T(0));
                continue;
              }
              const T* src = xc + (id * g.in[1] + ih) * g.in[2];
              std::fill(dst, dst + w0, T(0));
              if (g.s[2] == 1) {
                if (w1 > w0) std::memcpy(dst + w0, src + w0 + off_w, static_cast<size_t>(w1 - w0) * sizeof(T));
              } else {
                for (int64_t ow = w0; ow < w1; ++ow) dst[ow] = src[ow * g.s[2] + off_w];
              }
              std::fill(dst + w1, dst + g.out[2], T(0));
            }
          }
        }
  }
}

// Columns [j0, j0+n) of im2col row p = (c, kd, kh, kw), for the GEMM's
// packing to read directly (no im2col matrix in memory).
template <typename T>
void im2col_row(const T* x, const Geo3& g, int64_t p, int64_t j0, int64_t n, T* dst) {
  const int64_t ks = g.k_size();
  const int64_t c = p / ks;
  int64_t r = p % ks;
  const int64_t kw = r % g.k[2];
  r /= g.k[2];
  const int64_t kh = r % g.k[1], kd = r / g.k[1];
  const T* xc = x + c * g.in_size();
  const int64_t off_w = kw * g.d[2] - g.pb[2];
  int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
  int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
  w1 = std::min(w1, g.out[2]);
  w0 = std::min(w0, w1);
  const int64_t end = j0 + n;
  // The output position of column j0, then stepped row by row (no divisions per row).
  const int64_t row0 = j0 / g.out[2];
  int64_t ow0 = j0 % g.out[2], oh = row0 % g.out[1], od = row0 / g.out[1];
  for (int64_t j = j0; j < end; ow0 = 0, oh = oh + 1 == g.out[1] ? 0 : oh + 1, od += oh == 0) {
    const int64_t ow1 = std::min(g.out[2], ow0 + (end - j));
    T* d = dst + (j - j0);  // d[ow - ow0] is output column ow of this row
    const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
    const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
      for (int64_t ow = ow0; ow < ow1; ++ow) d[ow - ow0] = T(0);
    } else {
      const T* src = xc + (id * g.in[1] + ih) * g.in[2];
      const int64_t lo = std::clamp(w0, ow0, ow1), hi = std::clamp(w1, lo, ow1);
      for (int64_t ow = ow0; ow < lo; ++ow) d[ow - ow0] = T(0);
      if (g.s[2] == 1) {
        if (hi > lo) std::memcpy(d + (lo - ow0), src + lo + off_w, static_cast<size_t>(hi - lo) * sizeof(T));
      } else if (g.s[2] == 2) {
        // The stride as a constant: the loop vectorises (SSE/NEON shuffles), as fast as AVX-512's permute.
        for (int64_t ow = lo; ow < hi; ++ow) d[ow - ow0] = src[2 * ow + off_w];
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) d[ow - ow0] = src[ow * g.s[2] + off_w];
      }
      for (int64_t ow = hi; ow < ow1; ++ow) d[ow - ow0] = T(0);
    }
    j += ow1 - ow0;
  }
}

}  // namespace

#if defined(__x86_64__) || defined(__i386__)
namespace {

// Row p of im2colᵀ for image x (C channels, 2-D geometry g): the K = C * kh * kw
// inputs output position p reads, in W's (channel, ky, kx) order; 0 in the padding.
void im2col_t_row(const float* x, int64_t C, const Geo3& g, int64_t p, float* row) {
  const int64_t H = g.in[1], Wd = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t oy = p / g.out[2], ox = p % g.out[2];
  const int64_t y0 = oy * g.s[1] - g.pb[1], x0 = ox * g.s[2] - g.pb[2];
  int64_t i = 0;
  for (int64_t c = 0; c < C; ++c) {
    const float* xc = x + c * H * Wd;
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int64_t iy = y0 + ky * g.d[1];
      const bool row_in = iy >= 0 && iy < H;
      if (row_in && g.d[2] == 1 && x0 >= 0 && x0 + kw <= Wd) {  // the whole kernel row inside: one copy
        std::memcpy(row + i, xc + iy * Wd + x0, static_cast<size_t>(kw) * sizeof(float));
        i += kw;
        continue;
      }
      for (int64_t kx = 0; kx < kw; ++kx, ++i) {
        const int64_t ix = x0 + kx * g.d[2];
        row[i] = row_in && ix >= 0 && ix < Wd ? xc[iy * Wd + ix] : 0.0f;
      }
    }
  }
}

std::atomic<uint64_t> g_transposed_runs{0};

}  // namespace
#endif

namespace {
std::atomic<uint64_t> g_amx_runs{0};
}  // namespace

bool conv_winograd_f32(const ConvProblem& prob, const ConvFusion& fuse, int wtile) {
  const float* X = prob.x->data<float>();
  const float* Bv = prob.bias ? prob.bias->data<float>() : nullptr;
  const float* Z = prob.z ? prob.z->data<float>() : nullptr;
  float* Y = prob.y->data<float>();
  const int64_t N = prob.N, C = prob.C, M = prob.M, in_plane = prob.in_plane, out_plane = prob.out_plane;
  const Geo3 g = prob.g;
  ThreadPool& pool = *prob.pool;
  const ConvPrepacked* pre = prob.pre;
  GemmEpilogue ep;
  ep.act = fuse.act;
  WinogradGeometry wg;
  wg.in_h = g.in[1], wg.in_w = g.in[2], wg.out_h = g.out[1], wg.out_w = g.out[2];
  wg.pad_top = g.pb[1], wg.pad_left = g.pb[2];
  if (winograd_ok(wg)) {
    const bool w4 = wtile == 4;
    const WinogradFilters& wf = w4 ? pre->winograd4() : pre->winograd();
    for (int64_t n = 0; n < N; ++n) {
      GemmEpilogue e = ep;
      e.row_bias = Bv;
      e.residual = Z ? Z + n * M * out_plane : nullptr;
      e.ldr = out_plane;
      if (w4) conv_winograd4(wf, wg, X + n * C * in_plane, Y + n * M * out_plane, e, pool);
      else conv_winograd(wf, wg, X + n * C * in_plane, Y + n * M * out_plane, e, pool);
    }
    return true;
  }
  return false;
}

#if defined(__x86_64__) || defined(__i386__)
Status conv_transposed_f32(const ConvProblem& prob, const ConvFusion& fuse) {
  const float* X = prob.x->data<float>();
  const float* W = prob.w->data<float>();
  const float* Bv = prob.bias ? prob.bias->data<float>() : nullptr;
  const float* Z = prob.z ? prob.z->data<float>() : nullptr;
  float* Y = prob.y->data<float>();
  const int64_t N = prob.N, C = prob.C, M = prob.M, in_plane = prob.in_plane, out_plane = prob.out_plane;
  const int64_t col_rows = prob.col_rows;
  const Geo3 g = prob.g;
  ThreadPool& pool = *prob.pool;
  const ConvPrepacked* pre = prob.pre;
  GemmEpilogue ep;
  ep.act = fuse.act;
  const PackedMatrix& wt = pre->transposed();
  const int64_t K = col_rows, P = out_plane;
  thread_local AlignedScratch scratch;  // im2colᵀ, then Yᵀ
  float* at = scratch.get<float>(static_cast<size_t>(P * K + P * M));
  float* ct = at + P * K;
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = X + n * C * in_plane;
    pool.parallel_for(P, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) im2col_t_row(xn, C, g, p, at + p * K);
    });
    // W itself (M x K: op(B) = Wᵀ) rides along for sgemm_ex's fp32
    // fallback, should a Wᵀ packed for AMX meet a thread where AMX is off.
    DLRT_RETURN_IF_ERROR(sgemm_ex(P, M, K, 1.0f, SgemmOperand{at, K, false, nullptr, nullptr},
                                  SgemmOperand{W, K, true, &wt, nullptr}, 0.0f, ct, M, nullptr, &pool));
    float* yn = Y + n * M * P;
    GemmEpilogue e = ep;
    e.row_bias = Bv;
    e.residual = Z ? Z + n * M * P : nullptr;
    e.ldr = P;
    // Yᵀ back to Y and the epilogue, by blocks of channels on the pool.
    pool.parallel_for(M, std::max<int64_t>(1, 4096 / std::max<int64_t>(P, 1)), [&](int64_t b, int64_t end) {
      for (int64_t m = b; m < end; ++m)
        for (int64_t p = 0; p < P; ++p) yn[m * P + p] = ct[p * M + m];
      apply_epilogue(e, yn + b * P, P, b, 0, end - b, P);
    });
    g_transposed_runs.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::Ok();
}
#endif

Status conv_gemm_f32(const ConvProblem& prob, const ConvFusion& fuse, bool amx) {
  const float* X = prob.x->data<float>();
  const float* W = prob.w->data<float>();
  const float* Bv = prob.bias ? prob.bias->data<float>() : nullptr;
  const float* Z = prob.z ? prob.z->data<float>() : nullptr;
  float* Y = prob.y->data<float>();
  const int64_t N = prob.N, C = prob.C, M = prob.M, group = prob.group, Cg = prob.Cg, Mg = prob.Mg;
  const int64_t in_plane = prob.in_plane, out_plane = prob.out_plane, col_rows = prob.col_rows;
  const bool pointwise = prob.pointwise;
  const Geo3 g = prob.g;
  ThreadPool& pool = *prob.pool;
  const ConvPrepacked* pre = prob.pre;
  GemmEpilogue ep;
  ep.act = fuse.act;
  // 1-D/2-D convs with weights packed for the AVX-512 8x48 tile or the
  // 6x16 one (AVX2, NEON) run the direct path for that tile where it is the
  // faster one (conv_direct.h; DLRT_CONV_DIRECT =0 turns it off, =1 takes it
  // for every shape).
  ConvDirectPlan dplan;
  const int64_t* doff = nullptr;
  const ConvDirectMode dmode = pre && !amx ? conv_direct_mode() : ConvDirectMode::kOff;
  // The direct kernel for the weights' tile (its policy's ISA: kAvx2 or
  // kNeon for 6x16, whose choices are the same); generic: none (mode on
  // means a vector ISA).
  CpuIsa disa = CpuIsa::kGeneric;
  if (dmode != ConvDirectMode::kOff) {
    const PackedMatrix& pw = pre->group(0);
    if (pw.mr() == 6 && pw.nr() == 16) disa = cpu_isa() >= CpuIsa::kAvx2 ? CpuIsa::kAvx2 : CpuIsa::kNeon;
  #if defined(__x86_64__) || defined(__i386__)  // the 512-bit instantiation
    if (pw.mr() == 8 && pw.nr() == 48 && cpu_isa() >= CpuIsa::kAvx512) disa = CpuIsa::kAvx512;
  #endif
  }
  if (disa != CpuIsa::kGeneric && g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.pb[0] == 0) {
    ConvDirectGeometry dg;
    dg.channels = Cg;
    dg.in_h = g.in[1], dg.in_w = g.in[2], dg.out_h = g.out[1], dg.out_w = g.out[2];
    dg.kh = g.k[1], dg.kw = g.k[2], dg.sh = g.s[1], dg.sw = g.s[2], dg.dh = g.d[1], dg.dw = g.d[2];
    dg.pad_top = g.pb[1], dg.pad_left = g.pb[2];
    const bool sliced = disa != CpuIsa::kAvx512;  // the 6x16 kernel: rows at the shared-pad pitch
    if (conv_direct_plan(dg, &dplan, sliced, conv_direct_tap_columns(dg, disa)) &&
        (dmode == ConvDirectMode::kForce || conv_direct_worth(dplan, disa, pool.num_threads(), Mg))) {
      thread_local std::vector<int64_t> offsets;  // grows only: no allocation once warm
      if (offsets.size() < static_cast<size_t>(dplan.k)) offsets.resize(static_cast<size_t>(dplan.k));
      conv_direct_offsets(dplan, offsets.data());
      doff = offsets.data();
    }
  }

  // One (image, group) product: Y_g = epilogue(W_g * col). General convs
  // read the im2col matrix straight from the image while packing.
  FirstError err;
  auto one = [&](int64_t n, int64_t gi, ThreadPool* p) {
    const float* xg = X + (n * C + gi * Cg) * in_plane;
    float* yg = Y + (n * M + gi * Mg) * out_plane;
    GemmEpilogue e = ep;
    e.row_bias = Bv ? Bv + gi * Mg : nullptr;
    e.residual = Z ? Z + (n * M + gi * Mg) * out_plane : nullptr;
    e.ldr = out_plane;
    if (doff) {
      const PackedMatrix& pw = pre->group(gi);
  #if defined(__x86_64__) || defined(__i386__)  // the 512-bit instantiation
      if (disa == CpuIsa::kAvx512) return conv_direct_whole_k(SimdWidth::k512, dplan, doff, xg, pw, yg, e, p);
  #endif
      return conv_direct_sliced(conv_direct_sliced_width(), dplan, doff, xg, pw, yg, e, p);
    }
    SgemmOperand a;
    if (amx) {
      a.packed = pre->amx_group(gi);
      a.data = W + gi * Mg * col_rows;  // sgemm_ex's fp32 fallback, should AMX become unusable meanwhile
      a.ld = col_rows;
    } else if (pre) {
      a.packed = &pre->group(gi);
    } else {
      a.data = W + gi * Mg * col_rows;
      a.ld = col_rows;
    }
    if (pointwise) {
      SgemmOperand b{xg, out_plane, false, nullptr, nullptr};
      err.record(sgemm_ex(Mg, out_plane, col_rows, 1.0f, a, b, 0.0f, yg, out_plane, &e, p));
    } else {
      BRowSource rows = [&](int64_t row, int64_t j0, int64_t cnt, float* dst) {
        im2col_row<float>(xg, g, row, j0, cnt, dst);
      };
      SgemmOperand b{nullptr, 0, false, nullptr, &rows};
      err.record(sgemm_ex(Mg, out_plane, col_rows, 1.0f, a, b, 0.0f, yg, out_plane, &e, p));
    }
  };
  if (amx) g_amx_runs.fetch_add(1, std::memory_order_relaxed);
  const int64_t tasks = N * group;
  if (tasks >= 2 * pool.num_threads() && Mg * out_plane * col_rows < (int64_t{1} << 22)) {
    // Many small products (grouped convs, batches of small images): one per task.
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) one(t / group, t % group, nullptr);
    };
    pool.parallel_for(tasks, 1, body);
  } else {
    for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, &pool);
  }
  return err.take();
}

Status conv_f64(const ConvProblem& prob, const ConvFusion& fuse) {
  const Tensor* x = prob.x;
  const Tensor* w = prob.w;
  const Tensor* bias = prob.bias;
  const Tensor* z = prob.z;
  Tensor* y = prob.y;
  const int64_t N = prob.N, C = prob.C, M = prob.M, group = prob.group, Cg = prob.Cg, Mg = prob.Mg;
  const int64_t in_plane = prob.in_plane, out_plane = prob.out_plane, ks = prob.ks, col_rows = prob.col_rows;
  const bool pointwise = prob.pointwise;
  const bool depthwise = prob.depthwise;
  const Geo3 g = prob.g;
  ThreadPool& pool = *prob.pool;
  using T = double;
  const T* X = x->data<T>();
  const T* W = w->data<T>();
  const T* Bv = bias ? bias->data<T>() : nullptr;
  T* Y = y->data<T>();
  if (Bv) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) std::fill_n(Y + (n * M + m) * out_plane, out_plane, Bv[m]);
  }
  if (depthwise) {
    pool.parallel_for(N * M, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t n = t / M, m = t % M;
        depthwise_plane_f64(X + (n * C + m) * in_plane, W + m * ks, g, Y + t * out_plane);
      }
    });
  } else {
    const T beta = Bv ? T(1) : T(0);
    auto one = [&](int64_t n, int64_t gi, T* col, ThreadPool* p) {
      const T* xg = X + (n * C + gi * Cg) * in_plane;
      const T* wg = W + gi * Mg * col_rows;
      T* yg = Y + (n * M + gi * Mg) * out_plane;
      if (pointwise) {
        gemm_t<T>(false, false, Mg, out_plane, col_rows, wg, col_rows, xg, out_plane, beta, yg, out_plane, p);
      } else {
        im2col<T>(xg, Cg, g, col);
        gemm_t<T>(false, false, Mg, out_plane, col_rows, wg, col_rows, col, out_plane, beta, yg, out_plane, p);
      }
    };
    const int64_t tasks = N * group;
    const size_t col_elems = pointwise ? 0 : static_cast<size_t>(col_rows * out_plane);
    if (tasks >= 2 * pool.num_threads() && Mg * out_plane * col_rows < (int64_t{1} << 22)) {
      pool.parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
        auto col = std::make_unique_for_overwrite<T[]>(col_elems);
        for (int64_t t = b; t < e; ++t) one(t / group, t % group, col.get(), nullptr);
      });
    } else {
      auto col = std::make_unique_for_overwrite<T[]>(col_elems);
      for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, col.get(), &pool);
    }
  }
  if (z || !fuse.act.none()) {
    const T* Z = z ? z->data<T>() : nullptr;
    for (int64_t i = 0; i < y->size(); ++i) {
      double v = Y[i] + (Z ? Z[i] : 0.0);
      Y[i] = fuse.act.none() ? v : static_cast<double>(activate(fuse.act, static_cast<float>(v)));
    }
  }
  return Status::Ok();
}

}  // namespace conv_detail

uint64_t conv_amx_runs() { return conv_detail::g_amx_runs.load(std::memory_order_relaxed); }

uint64_t conv_transposed_runs() {
#if defined(__x86_64__) || defined(__i386__)
  return conv_detail::g_transposed_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

}  // namespace dlrt::cpu
