// Kernel body (simd/simd.h), compiled once per vector width by
// conv_winograd.cpp: the input and output transforms of Winograd F(2x2, 3x3)
// on runs of kLanes tiles along a tile row, one tile per lane.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// Phase 1 for channel c: x plane -> padded copy -> V[e][c][t] for the 16 e.
// The patch columns of a run are the even and odd floats of two padded-row
// loads (reads 2 kLanes + 2 floats from the run's first column).
void winograd2_input_transform(const WinogradGeometry& g, const Winograd2Dims& d, const float* xc, float* pad,
                               float* V, int64_t c) {
  winograd_pad_plane(g, xc, d.Hp, d.Wp, pad);
  const int64_t CT = d.C * d.T;
  for (int64_t th = 0; th < d.TH; ++th)
    for (int64_t tw0 = 0; tw0 < d.TW; tw0 += kLanes) {
      // dr[r][k] for kLanes tiles (lane j: tile tw0 + j, patch column k).
      Vf t[4][4];  // Bᵀ d: rows t0 = d0 - d2, t1 = d1 + d2, t2 = d2 - d1, t3 = d1 - d3
      Vf dr[4][4];
      for (int r = 0; r < 4; ++r) {
        const float* p = pad + (2 * th + r) * d.Wp + 2 * tw0;
        const Vf a = loadu(p), b = loadu(p + kLanes), a2 = loadu(p + 2), b2 = loadu(p + 2 + kLanes);
        dr[r][0] = even_lanes(a, b);
        dr[r][1] = odd_lanes(a, b);
        dr[r][2] = even_lanes(a2, b2);
        dr[r][3] = odd_lanes(a2, b2);
      }
      for (int k = 0; k < 4; ++k) {
        t[0][k] = sub(dr[0][k], dr[2][k]);
        t[1][k] = add(dr[1][k], dr[2][k]);
        t[2][k] = sub(dr[2][k], dr[1][k]);
        t[3][k] = sub(dr[1][k], dr[3][k]);
      }
      // A short last run stores all lanes too where the extra ones land on
      // later tiles of this channel (the next tile rows', written after
      // this one), not past them into the next channel, which another
      // thread may be writing. (The partial store cost layer3's 7-tile rows
      // half of their transform time.)
      const int64_t t0 = th * d.TW + tw0;
      const int64_t n = t0 + kLanes <= d.T ? kLanes : std::min<int64_t>(kLanes, d.TW - tw0);
      float* v = V + c * d.T + t0;
      for (int i = 0; i < 4; ++i) {
        store_first(v + (i * 4 + 0) * CT, sub(t[i][0], t[i][2]), n);
        store_first(v + (i * 4 + 1) * CT, add(t[i][1], t[i][2]), n);
        store_first(v + (i * 4 + 2) * CT, sub(t[i][2], t[i][1]), n);
        store_first(v + (i * 4 + 3) * CT, sub(t[i][1], t[i][3]), n);
      }
    }
}

// Phase 3 for output channel m: Mo[e][m][t] -> y plane (raw sums; the
// caller applies the epilogue). Mo has kLanes floats of slack past its end.
void winograd2_output_transform(const WinogradGeometry& g, const Winograd2Dims& d, const float* Mo, float* ym,
                                int64_t m) {
  const int64_t MT = d.M * d.T;
  for (int64_t th = 0; th < d.TH; ++th)
    for (int64_t tw0 = 0; tw0 < d.TW; tw0 += kLanes) {
      const float* src = Mo + m * d.T + th * d.TW + tw0;
      Vf s[2][4];  // Aᵀ m: s0 = m0 + m1 + m2, s1 = m1 - m2 - m3 (per column ν)
      for (int v = 0; v < 4; ++v) {
        const Vf m0 = loadu(src + (0 * 4 + v) * MT), m1 = loadu(src + (1 * 4 + v) * MT);
        const Vf m2 = loadu(src + (2 * 4 + v) * MT), m3 = loadu(src + (3 * 4 + v) * MT);
        s[0][v] = add(add(m0, m1), m2);
        s[1][v] = sub(sub(m1, m2), m3);
      }
      const int64_t cols = std::min<int64_t>(2 * kLanes, g.out_w - 2 * tw0);
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = 2 * th + i;
        if (oh >= g.out_h) break;
        const Vf y0 = add(add(s[i][0], s[i][1]), s[i][2]);  // column 2j
        const Vf y1 = sub(sub(s[i][1], s[i][2]), s[i][3]);  // column 2j + 1
        Vf lo, hi;
        interleave2(y0, y1, lo, hi);
        float* row = ym + oh * g.out_w + 2 * tw0;
        store_first(row, lo, cols);
        if (cols > kLanes) store_first(row + kLanes, hi, cols - kLanes);
      }
    }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
