// Kernel body (simd/simd.h), compiled once per vector width by
// conv_winograd4_blocked.cpp: Winograd F(4x4, 3x3) on the 16-channel blocked
// layout, lanes holding channels (16 / kLanes vectors per channel block).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace winograd4_blocked {
namespace {  // internal linkage: per translation unit and width, open to inter-procedural optimisation

#include "backends/cpu/kernels/winograd4_transforms_simd.h"

using winograd4::at6;
using winograd4::bt6;
using winograd4::bt6_column;

constexpr int64_t kB = 16;
constexpr int kSub = static_cast<int>(kB) / kLanes;  // vectors per channel block

struct Plan {
  int64_t CB, MB, Cp, Mp;  // channel blocks, and channels rounded up to them
  int64_t TH, TW;          // tile rows and columns
  int64_t block_rows;      // tile rows per block
  int64_t ld;              // tiles per block (block_rows * TW): rows of V_e and M_e
};

// Phase 1 for input block cb and tile row th (the block's first tile row
// th0), for the vector `sub` of the channel block (a constant, so a
// single-vector block has no loop around it): V_e rows (th - th0) * TW ...
// for its tiles, lanes cb's channels.
template <int sub>
__attribute__((always_inline)) inline void input_row_vector(const Plan& p, const WinogradGeometry& g, const float* x,
                                                            int64_t cb, int64_t th, int64_t th0, float* V) {
  const float* xb = x + cb * g.in_h * g.in_w * kB + sub * kLanes;
  const int64_t es = p.ld * p.Cp;  // floats between V_e and V_e+1
  for (int64_t tw = 0; tw < p.TW; ++tw) {
    const int64_t ih0 = 4 * th - g.pad_top, iw0 = 4 * tw - g.pad_left;
    Vf h[6][6];  // h[r]: patch row r transformed along its columns
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const int64_t ih = ih0 + r;
      const bool row_in = ih >= 0 && ih < g.in_h;
      Vf d[6];
#pragma GCC unroll 6
      for (int k = 0; k < 6; ++k) {
        const int64_t iw = iw0 + k;
        d[k] = row_in && iw >= 0 && iw < g.in_w ? loadu(xb + (ih * g.in_w + iw) * kB) : zero();
      }
      bt6(d, h[r]);
    }
    float* v = V + ((th - th0) * p.TW + tw) * p.Cp + cb * kB + sub * kLanes;
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      Vf out[6];
      bt6_column(h, k, out);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) storeu(v + (i * 6 + k) * es, out[i]);
    }
  }
}

template <int... sub>
__attribute__((always_inline)) inline void input_row(const Plan& p, const WinogradGeometry& g, const float* x,
                                                     int64_t cb, int64_t th, int64_t th0, float* V,
                                                     std::integer_sequence<int, sub...>) {
  (input_row_vector<sub>(p, g, x, cb, th, th0, V), ...);
}

void input_row(const Plan& p, const WinogradGeometry& g, const float* x, int64_t cb, int64_t th, int64_t th0,
               float* V) {
  input_row(p, g, x, cb, th, th0, V, std::make_integer_sequence<int, kSub>{});
}

struct Stage {
  const float* bias;  // M values or null
  const float* z;     // like y, or null
  Activation act;
};

// Phase 3 for output block mb and tile row th, for the vector `sub` of the
// channel block: M_e rows of its tiles back to 4x4 outputs of its channels,
// stored in y with the bias, residual and clamp; after the block's last
// vector, other activations over the tile row's stored outputs.
template <int sub>
__attribute__((always_inline)) inline void output_row_vector(const Plan& p, const WinogradGeometry& g, const float* Mo,
                                                             int64_t mb, int64_t th, int64_t th0, const Stage& st,
                                                             int64_t M, float* y) {
  const int64_t es = p.ld * p.Mp;
  const int64_t c0 = mb * kB + sub * kLanes;
  const Vf bias = st.bias ? load_first(st.bias + c0, M - c0) : zero();
  const ClampStage cs = clamp_stage(st.act);
  const Vf lo = set1(cs.lo), hi = set1(cs.hi);
  const int64_t plane = g.out_h * g.out_w, rows = std::min<int64_t>(4, g.out_h - 4 * th);
  float* yb = y + mb * plane * kB;
  const float* zb = st.z ? st.z + mb * plane * kB : nullptr;
  for (int64_t tw = 0; tw < p.TW; ++tw) {
    const float* src = Mo + ((th - th0) * p.TW + tw) * p.Mp + c0;
    Vf s[4][6];  // s[j][k] = (Aᵀ M)[j][k]
#pragma GCC unroll 6
    for (int k = 0; k < 6; ++k) {
      Vf col[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) col[i] = loadu(src + (i * 6 + k) * es);
      Vf out[4];
      at6(col, out);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) s[j][k] = out[j];
    }
    const int64_t cols = std::min<int64_t>(4, g.out_w - 4 * tw);
    for (int64_t j = 0; j < rows; ++j) {
      Vf o[4];
      at6(s[j], o);
      const int64_t at = ((4 * th + j) * g.out_w + 4 * tw) * kB + sub * kLanes;
      for (int64_t l = 0; l < cols; ++l) {
        Vf v = add(o[l], bias);
        if (zb) v = add(v, loadu(zb + at + l * kB));
        if (cs.clamp) v = min(max(v, lo), hi);
        storeu(yb + at + l * kB, v);
      }
    }
  }
  if (sub == kSub - 1 && !cs.clamp && !st.act.none())
    apply_activation(st.act, yb + 4 * th * g.out_w * kB, rows * g.out_w * kB);
}

template <int... sub>
__attribute__((always_inline)) inline void output_row(const Plan& p, const WinogradGeometry& g, const float* Mo,
                                                      int64_t mb, int64_t th, int64_t th0, const Stage& st, int64_t M,
                                                      float* y, std::integer_sequence<int, sub...>) {
  (output_row_vector<sub>(p, g, Mo, mb, th, th0, st, M, y), ...);
}

void output_row(const Plan& p, const WinogradGeometry& g, const float* Mo, int64_t mb, int64_t th, int64_t th0,
                const Stage& st, int64_t M, float* y) {
  output_row(p, g, Mo, mb, th, th0, st, M, y, std::make_integer_sequence<int, kSub>{});
}

}  // namespace
}  // namespace winograd4_blocked

void conv_winograd4_blocked(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                            const float* bias, const float* z, const Activation& act, ThreadPool& pool) {
  using namespace winograd4_blocked;
  Plan p;
  p.CB = ceil_div(f.C, kB), p.MB = ceil_div(f.M, kB), p.Cp = p.CB * kB, p.Mp = p.MB * kB;
  p.TH = ceil_div(g.out_h, 4), p.TW = ceil_div(g.out_w, 4);
  // Tile rows per block: V and M of a block (36 x (Cp + Mp) floats per
  // tile) within about kWinograd4BlockBytes, the blocks of even size.
  const int64_t row_bytes = 36 * (p.Cp + p.Mp) * p.TW * int64_t{sizeof(float)};
  const int64_t blocks = std::min(p.TH, ceil_div(p.TH * row_bytes, kWinograd4BlockBytes));
  p.block_rows = ceil_div(p.TH, blocks);
  p.ld = p.block_rows * p.TW;
  thread_local AlignedScratch scratch;  // V, then Mo
  float* V = scratch.get<float>(static_cast<size_t>(36 * (p.Cp + p.Mp) * p.ld));
  float* Mo = V + 36 * p.Cp * p.ld;
  const Stage st{bias, z, act};
  for (int64_t th0 = 0; th0 < p.TH; th0 += p.block_rows) {
    const int64_t rows = std::min(p.block_rows, p.TH - th0), nb = rows * p.TW;
    pool.parallel_for(rows * p.CB, 1, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) input_row(p, g, x, u % p.CB, th0 + u / p.CB, th0, V);
    });
    // The filters are packed fp32 (never for AMX) against a plain A:
    // sgemm_ex cannot fail on these operands, so only debug builds check.
    pool.parallel_for(36, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        [[maybe_unused]] const Status s =
            sgemm_ex(nb, f.M, f.C, 1.0f, SgemmOperand{V + k * p.Cp * p.ld, p.Cp, false, nullptr, nullptr},
                     SgemmOperand{nullptr, 0, false, f.u[static_cast<size_t>(k)].get(), nullptr}, 0.0f,
                     Mo + k * p.Mp * p.ld, p.Mp, nullptr, nullptr);
        assert(s.ok());
      }
    });
    pool.parallel_for(rows * p.MB, 1, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) output_row(p, g, Mo, u % p.MB, th0 + u / p.MB, th0, st, f.M, y);
    });
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
