// Kernel body (simd/simd.h), compiled once per vector width by
// pool_planes.cpp: the rows and columns passes of the separable pools, the
// 3x3/2 MaxPool and the global max and average (pool_planes.h). At 256 bits
// the operations of the former AVX2 passes, at 512 those of the former
// AVX-512 3x3/2 MaxPool.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace pool_body {
namespace {

template <bool kMax>
__attribute__((always_inline)) inline Vf vop(Vf a, Vf b) {
  if constexpr (kMax) return max(a, b);
  else return add(a, b);
}

// The even floats of w[0, 2 kLanes).
__attribute__((always_inline)) inline Vf load_even(const float* w) { return even_lanes(loadu(w), loadu(w + kLanes)); }

// t[j] = reduction over the nr >= 1 rows of rows[r][j], j < n: two vectors a step, then one, then single floats.
template <bool kMax>
void rows(const float* const* rows, int64_t nr, float* t, int64_t n) {
  int64_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    Vf a0 = loadu(rows[0] + j), a1 = loadu(rows[0] + j + kLanes);
    for (int64_t r = 1; r < nr; ++r) {
      a0 = vop<kMax>(a0, loadu(rows[r] + j));
      a1 = vop<kMax>(a1, loadu(rows[r] + j + kLanes));
    }
    storeu(t + j, a0);
    storeu(t + j + kLanes, a1);
  }
  for (; j + kLanes <= n; j += kLanes) {
    Vf a = loadu(rows[0] + j);
    for (int64_t r = 1; r < nr; ++r) a = vop<kMax>(a, loadu(rows[r] + j));
    storeu(t + j, a);
  }
  for (; j < n; ++j) {
    float a = rows[0][j];
    for (int64_t r = 1; r < nr; ++r) {
      if constexpr (kMax) a = rows[r][j] > a ? rows[r][j] : a;
      else a += rows[r][j];
    }
    t[j] = a;
  }
}

// Stores kLanes outputs at y, the average's divided by vrow * cnt[0, kLanes).
template <bool kMax>
__attribute__((always_inline)) inline void finish(Vf a, float* y, Vf vrow, const float* cnt) {
  if constexpr (!kMax) a = div(a, mul(vrow, loadu(cnt)));
  storeu(y, a);
}

// y[o] = reduction of t[o*s .. o*s+k), o < out, kLanes outputs a step (the
// rest by the scalar loop); the average divides by rowcnt * colcnt[o]. Needs
// t readable up to index (out-1)*s + k (one past the last tap).
template <bool kMax>
void cols(const float* t, float* y, int64_t out, int64_t s, int64_t k, const float* colcnt, float rowcnt) {
  int64_t o = 0;
  const Vf vrow = set1(rowcnt);
  if (s == 1) {
    for (; o + kLanes <= out; o += kLanes) {
      const float* w = t + o;
      Vf a = loadu(w);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, loadu(w + i));
      finish<kMax>(a, y + o, vrow, colcnt + o);
    }
  } else if (s == 2) {
    for (; o + kLanes <= out; o += kLanes) {
      const float* w = t + 2 * o;
      Vf a = load_even(w);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, load_even(w + i));
      finish<kMax>(a, y + o, vrow, colcnt + o);
    }
  } else {
    const int32_t s32 = static_cast<int32_t>(s);  // fast_window_ok bounds the buffer's offsets below 2^30
    for (; o + kLanes <= out; o += kLanes) {
      const float* w = t + s * o;
      Vf a = load_strided(w, s32);
      for (int64_t i = 1; i < k; ++i) a = vop<kMax>(a, load_strided(w + i, s32));
      finish<kMax>(a, y + o, vrow, colcnt + o);
    }
  }
  pool_impl::cols_scalar_from<kMax>(t, y, o, out, s, k, colcnt, rowcnt);
}

}  // namespace
}  // namespace pool_body

// pool_impl::pool_planes_f32 at this width.
void pool_planes_run(bool is_max, bool count_include_pad, const pool_impl::Window3& g, const float* X, float* Y,
                     int64_t p0, int64_t p1) {
  using namespace pool_body;
  if (is_max) pool_impl::pool_planes_with<true, rows<true>, cols<true>>(false, g, X, Y, p0, p1);
  else pool_impl::pool_planes_with<false, rows<false>, cols<false>>(count_include_pad, g, X, Y, p0, p1);
}

// Max (is_max) or average (the sum in double, as the reference walk) of planes [p0, p1) of plane_size > 0 floats.
void global_pool_planes(bool is_max, const float* X, float* Y, int64_t plane_size, int64_t p0, int64_t p1) {
  const int64_t n = plane_size;
  for (int64_t p = p0; p < p1; ++p) {
    const float* x = X + p * n;
    if (is_max) {
      if (n < kLanes) {
        Y[p] = pool_impl::global_max_scalar(x, n);
        continue;
      }
      Vf a = loadu(x);
      int64_t i = kLanes;
      for (; i + kLanes <= n; i += kLanes) a = max(a, loadu(x + i));
      if (i < n) a = max(a, loadu(x + n - kLanes));  // overlapping tail: max is idempotent
      Y[p] = hmax(a);
      continue;
    }
    Vd a0 = zero_d(), a1 = zero_d();
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      Vd lo, hi;
      load_wide(x + i, lo, hi);
      a0 = add_d(a0, lo);
      a1 = add_d(a1, hi);
    }
    double sum = hsum_d(add_d(a0, a1));
    for (; i < n; ++i) sum += static_cast<double>(x[i]);
    Y[p] = static_cast<float>(sum / static_cast<double>(n));
  }
}

// MaxPool 3x3, stride 2, begin pads of at most 1 on 2-D planes
// (pool_impl::maxpool3s2_ok): per output row, the maximum of its (up to)
// three input rows into a row buffer framed by -inf, then kLanes outputs per
// step from that buffer's even floats, odd floats and even floats one further.
void maxpool3s2(const pool_impl::Window3& g, const float* X, float* Y, int64_t p0, int64_t p1) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t b = 1 - g.pb[2];  // vb[b + 2 ow + i] is tap i of output column ow
  // vb[1 + x]: the rows' maximum at input column x; -inf at 0 and from 1 + W
  // on, past every tap (ceil_mode windows included) and the last step's reads.
  const int64_t vlen = std::max(W + 1, 2 * OW + 2) + 3 * kLanes;
  // On the stack for planes up to 2000 columns wide (no heap on the run path).
  float stack_buf[2048];
  std::vector<float> heap_buf;
  float* vb = stack_buf;
  if (vlen > 2048) {
    heap_buf.resize(static_cast<size_t>(vlen));
    vb = heap_buf.data();
  }
  std::fill(vb, vb + vlen, -std::numeric_limits<float>::infinity());
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * H * W;
    float* yp = Y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const float* rows[3];
      int nr = 0;
      for (int64_t i = 2 * oh - g.pb[1]; i < 2 * oh - g.pb[1] + 3; ++i)
        if (i >= 0 && i < H) rows[nr++] = xp + i * W;
      for (int64_t x = 0; x < W; x += kLanes) {
        Vf v = load_first(rows[0] + x, W - x);
        for (int r = 1; r < nr; ++r) v = max(v, load_first(rows[r] + x, W - x));
        store_first(vb + 1 + x, v, W - x);
      }
      float* y = yp + oh * OW;
      for (int64_t ow = 0; ow < OW; ow += kLanes) {
        const float* t = vb + b + 2 * ow;
        const Vf a = loadu(t), c = loadu(t + kLanes);
        const Vf a2 = loadu(t + 2), c2 = loadu(t + 2 + kLanes);
        const Vf v = max(max(even_lanes(a, c), odd_lanes(a, c)), even_lanes(a2, c2));
        store_first(y + ow, v, OW - ow);
      }
    }
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
