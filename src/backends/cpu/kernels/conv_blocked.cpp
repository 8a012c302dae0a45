// The blocked-layout kernels (conv_blocked.h): weight packing, the choice
// between the vector convs (conv_blocked_vec.cpp) and the portable loops,
// reorders and pools.
#include "backends/cpu/kernels/conv_blocked.h"

#include <algorithm>
#include <limits>

#include "backends/cpu/kernels/conv_blocked_impl.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu {

using blocked_detail::ConvJob;

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t grain_for(ThreadPool* pool, int64_t units, int64_t work_per_unit) {
  const int64_t g = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, work_per_unit));
  return pool ? pool->balanced_grain(units, g) : units;
}

void run(ThreadPool* pool, int64_t units, int64_t work_per_unit, FunctionRef<void(int64_t, int64_t)> fn) {
  if (units <= 0) return;
  if (pool) pool->parallel_for(units, grain_for(pool, units, work_per_unit), fn);
  else fn(0, units);
}

int64_t threads_of(ThreadPool* pool) { return pool ? pool->num_threads() : 1; }


// Row units per band of unit_at's order (unit_order.h): one per thread where
// the split goes by rows, else 0 (the units run group by group).
int64_t band_rows(ThreadPool* pool, int64_t row_units, bool by_rows) {
  return by_rows ? band_per_thread(pool, row_units) : 0;
}

// Portable loops for any block: one output row of one output block.
void conv_row_generic(const ConvJob& j, int64_t n, int64_t ob, int64_t oh) {
  const BlockedConvGeometry& g = j.g;
  const BlockedConvWeights& w = *j.w;
  const int64_t b = w.block, icbs = ceil_div(g.C, b), kk = g.kh * g.kw, obs = ceil_div(g.M, b);
  thread_local AlignedScratch acc_buf;  // no heap allocation once a block width was seen
  float* acc = acc_buf.get<float>(static_cast<size_t>(b));
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    for (int64_t o = 0; o < b; ++o) acc[o] = j.bias[ob * b + o];
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
      if (ih < 0 || ih >= g.H) continue;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
        if (iw < 0 || iw >= g.W) continue;
        if (w.depthwise) {
          const float* xp = j.x + n * j.xs_n + ob * j.xs_cb + ih * j.xs_h + iw * j.sx;
          const float* wp = w.w.data() + (ob * kk + kh * g.kw + kw) * b;
          for (int64_t o = 0; o < b; ++o) acc[o] += xp[o * j.sc] * wp[o];
          continue;
        }
        for (int64_t icb = 0; icb < icbs; ++icb) {
          const int64_t icn = std::min(b, g.C - icb * b);
          const float* xp = j.x + n * j.xs_n + icb * j.xs_cb + ih * j.xs_h + iw * j.sx;
          const float* wp = w.w.data() + ((ob * icbs + icb) * kk + kh * g.kw + kw) * b * b;
          for (int64_t ic = 0; ic < icn; ++ic)
            for (int64_t o = 0; o < b; ++o) acc[o] += xp[ic * j.sc] * wp[ic * b + o];
        }
      }
    }
    const int64_t off = (((n * obs + ob) * g.OH + oh) * g.OW + ow) * b;
    for (int64_t o = 0; o < b; ++o) {
      float v = acc[o];
      if (j.z) v += j.z[off + o];
      j.y[off + o] = activate(j.act, v);
    }
  }
}

// x (blocked [N, cbs, H, W, b]) copied into `dst` with the conv's column
// padding made explicit, and its row padding too where `rows`:
// [N, cbs, Hp, Wp, b] holding copied row r, column c = input row r - pad_top
// (r where !rows), column c - pad_left (zeros outside), Wp (and Hp where
// `rows`) covering every window of the output. Then *g describes the copy
// (no column padding; no row padding where `rows`).
void pad_blocked(const float* x, BlockedConvGeometry* g, int64_t b, bool rows, std::vector<float>& dst,
                 ThreadPool* pool) {
  const int64_t cbs = ceil_div(g->C, b);
  const int64_t Hp = rows ? (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1 : g->H;
  const int64_t Wp = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
  const int64_t row_shift = rows ? g->pad_top : 0;
  dst.resize(static_cast<size_t>(g->N * cbs * Hp * Wp * b));
  const BlockedConvGeometry src = *g;
  float* out = dst.data();
  // Rows in the conv's unit order: a thread copies the band of rows it then reads.
  const int64_t band = band_rows(pool, Hp, true);
  run(pool, g->N * cbs * Hp, Wp * b, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const UnitPos pos = unit_at(u, cbs, Hp, band);
      const int64_t plane = pos.n * cbs + pos.group, r = pos.row;
      float* row = out + (plane * Hp + r) * Wp * b;
      const int64_t ih = r - row_shift;
      const int64_t c0 = std::min(Wp, src.pad_left), c1 = std::clamp(src.pad_left + src.W, c0, Wp);
      if (ih < 0 || ih >= src.H) {
        std::fill(row, row + Wp * b, 0.0f);
        continue;
      }
      std::fill(row, row + c0 * b, 0.0f);
      std::copy(x + ((plane * src.H + ih) * src.W + (c0 - src.pad_left)) * b,
                x + ((plane * src.H + ih) * src.W + (c1 - src.pad_left)) * b, row + c0 * b);
      std::fill(row + c1 * b, row + Wp * b, 0.0f);
    }
  });
  g->H = Hp;
  g->W = Wp;
  g->pad_left = 0;
  if (rows) g->pad_top = 0;
}

// Blocked weights hold element (m, c, t) at [m / b][c / b][t][c % b][m % b]:
// the part of that offset input channel c adds, for each c, so that packing
// and unpacking divide per channel, not per element (a ResNet-50's 23M
// weights took 30 ms of its session create with two divisions per element).
std::vector<int64_t> blocked_input_offsets(int64_t C, int64_t b, int64_t kk) {
  std::vector<int64_t> offsets(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) offsets[static_cast<size_t>(c)] = (c / b) * kk * b * b + (c % b) * b;
  return offsets;
}

}  // namespace

namespace blocked_detail {

// The row units as rows_per_unit (conv_blocked_vec.cpp) makes them.
int64_t band_output_rows(int64_t OH, int64_t OW, int64_t k, int64_t threads) {
  const int64_t rows = OH / k, rpu = OW * k <= conv_tile_positions(simd_width()) / 2 && rows >= 2 ? 2 : 1;
  const int64_t units = ceil_div(rows, rpu), band = band_for_threads(threads, units);
  return std::min(rows, (band > 0 ? band : units) * rpu) * k;
}

bool depthwise_by_rows(const BlockedConvGeometry& g, int64_t block, int64_t threads) {
  const int64_t cbs = ceil_div(g.C, block), band = ceil_div(g.OH, std::max<int64_t>(1, threads));
  if (threads <= 1 || cbs < 2 * threads) return true;
  // Input rows a band of output rows reads, and the rows its own share of
  // the input holds: by blocks where the band's halo is half its share or more.
  const int64_t in_rows = (band - 1) * g.sh + (g.kh - 1) * g.dh + 1, share = band * g.sh;
  return 2 * (in_rows - share) < share;
}

int64_t pointwise_merge_rows(const BlockedConvGeometry& g, int64_t pairs, int64_t threads, bool by_rows, int64_t l2,
                             int64_t row_in_bytes) {
  // k divides OH and leaves every thread a few units; by rows on several
  // threads, at least two merged rows per thread. On one thread, a merged
  // row's input also stays within a quarter of the L2, so that a band of
  // them (conv_blocked) fits half of it.
  auto fits = [&](int64_t c) {
    return g.OH % c == 0 && g.N * pairs * (g.OH / c) >= 4 * threads &&
           !(by_rows && threads > 1 && g.OH / c < 2 * threads) &&
           !(threads == 1 && pairs > 1 && l2 > 0 && c * row_in_bytes > l2 / 4);
  };
  // The largest such k; by rows on several threads, the largest of those
  // whose bands give the busiest thread the fewest output rows, i.e. the
  // most equal bands (14 rows merged by 2 make 7, bands of 4 and 3 merged
  // rows: 8 and 6 rows; unmerged, 7 and 7). parallel_for deals each thread
  // an equal run of the units, so with unequal bands one thread's run
  // reaches into the other's band and reads rows of the input that the
  // other core wrote in the op before.
  const bool banded = by_rows && threads > 1;
  int64_t k = 1, best = std::numeric_limits<int64_t>::max();
  for (int64_t c = g.OH; c >= 1; --c) {
    if (c > 1 && !fits(c)) continue;
    if (!banded) return c;
    const int64_t cost = band_output_rows(g.OH, g.OW, c, threads);
    if (cost < best) best = cost, k = c;
  }
  return k;
}

}  // namespace blocked_detail

int blocked_width() { return 16; }

bool blocked_vector_path(int block) { return block == 16; }

BlockedConvWeights pack_blocked_conv(const float* w, int64_t M, int64_t C, int64_t kh, int64_t kw, bool depthwise,
                                     int block) {
  BlockedConvWeights p;
  p.block = block;
  p.depthwise = depthwise;
  p.M = M;
  p.C = C;
  p.kh = kh;
  p.kw = kw;
  const int64_t b = block, kk = kh * kw;
  if (depthwise) {
    const int64_t cbs = ceil_div(C, b);
    p.w.assign(static_cast<size_t>(cbs * kk * b), 0.0f);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < kk; ++t) p.w[static_cast<size_t>(((c / b) * kk + t) * b + c % b)] = w[c * kk + t];
    return p;
  }
  const int64_t obs = ceil_div(M, b), icbs = ceil_div(C, b);
  p.w.assign(static_cast<size_t>(obs * icbs * kk * b * b), 0.0f);
  const std::vector<int64_t> c_offset = blocked_input_offsets(C, b, kk);
  for (int64_t m = 0; m < M; ++m) {
    float* out = p.w.data() + (m / b) * icbs * kk * b * b + m % b;
    for (int64_t c = 0; c < C; ++c) {
      const float* src = w + (m * C + c) * kk;
      float* dst = out + c_offset[static_cast<size_t>(c)];
      for (int64_t t = 0; t < kk; ++t) dst[t * b * b] = src[t];
    }
  }
  return p;
}

void unpack_blocked_conv(const BlockedConvWeights& p, float* w) {
  const int64_t b = p.block, kk = p.kh * p.kw, M = p.M, C = p.C;
  if (p.depthwise) {
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < kk; ++t) w[c * kk + t] = p.w[static_cast<size_t>(((c / b) * kk + t) * b + c % b)];
    return;
  }
  const int64_t icbs = ceil_div(C, b);
  const std::vector<int64_t> c_offset = blocked_input_offsets(C, b, kk);
  for (int64_t m = 0; m < M; ++m) {
    const float* in = p.w.data() + (m / b) * icbs * kk * b * b + m % b;
    for (int64_t c = 0; c < C; ++c) {
      const float* src = in + c_offset[static_cast<size_t>(c)];
      float* dst = w + (m * C + c) * kk;
      for (int64_t t = 0; t < kk; ++t) dst[t] = src[t * b * b];
    }
  }
}

void conv_blocked(const BlockedConvWeights& w, const BlockedConvGeometry& g, const float* x, bool x_blocked,
                  const float* bias, const float* z, const Activation& act, float* y, ThreadPool* pool) {
  const int64_t b = w.block, obs = ceil_div(g.M, b);
  // A one-group conv on the vector path whose windows reach past the
  // input's columns reads a copy with the column padding made explicit:
  // every output position is then a whole-window tile (no edge cases). Its
  // tiles skip the kernel rows that fall outside the input, so the copy pads
  // the rows only for outputs at most half a tile wide, which run two rows
  // per tile and need every tap of both rows inside; elsewhere the taps in
  // the row padding cost nothing (a dilated conv whose padding holds most of
  // its taps' reach does only the products inside the input), and a conv
  // padded only along the rows reads its input in place. Where the output
  // is wider, the input is read in place too unless the copy stays in the
  // L2 beside the input and the output (whatever the thread count, so that
  // every thread count gives the same sums): a copy that does not streams
  // the input through memory twice more (a quarter of a stride-2 stem
  // conv's time, a tenth of a 12-channel 7x3 conv's), more than the
  // positions at the row ends cost in place, where they run one at a time
  // (conv_point) and skip the taps past the row. Depthwise convs do a tap's
  // 16 channels in one FMA and take the edges in place (the copy would cost
  // as much as the conv).
  const bool vector = blocked_vector_path(w.block) && (x_blocked || !w.depthwise);
  const bool two_row_tiles = g.OW <= blocked_detail::conv_tile_positions(simd_width()) / 2 && g.OH >= 2;
  const bool cols_padded = g.pad_left > 0 || (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1 > g.W + g.pad_left;
  const bool rows_padded = g.pad_top > 0 || (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1 > g.H + g.pad_top;
  const int64_t fb = int64_t{sizeof(float)};
  const int64_t in_bytes = g.N * ceil_div(g.C, b) * g.H * g.W * b * fb;
  const int64_t copy_bytes = g.N * ceil_div(g.C, b) * g.H * ((g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1) * b * fb;
  const int64_t out_bytes = g.N * obs * g.OH * g.OW * b * fb;
  const int64_t l2_bytes = device::cpu_caches().l2;
  const bool copy_pays = two_row_tiles || l2_bytes <= 0 || in_bytes + copy_bytes + out_bytes <= l2_bytes;
  const bool pad_rows = two_row_tiles && rows_padded;
  thread_local std::vector<float> scratch;
  BlockedConvGeometry gp = g;
  if (vector && x_blocked && (cols_padded || pad_rows) && !w.depthwise && copy_pays) {
    pad_blocked(x, &gp, b, pad_rows, scratch, pool);
    x = scratch.data();
  }
  const bool padded = cols_padded || rows_padded;
  // A 1x1, stride-1, unpadded conv on blocked input reads positions in
  // order: k rows run as one (pointwise_merge_rows), so its tiles are
  // full-width across row ends.
  //
  // On several threads the units go by bands of rows (a band per thread,
  // every output block of it; unit_at) where the activations outweigh the
  // weights: each thread then reads all the weights but only its band of the
  // input, most of it written by the same thread in the op before (a row of
  // the input the other core wrote crosses between the cores' caches), and
  // it writes the band the next op's same thread reads. Where the weights
  // are the larger part, by output blocks (each thread reads half of them).
  const int64_t threads = threads_of(pool), icbs = ceil_div(g.C, b);
  const int64_t weight_bytes = obs * icbs * g.kh * g.kw * b * b * int64_t{sizeof(float)};
  const int64_t act_bytes = g.N * (icbs * g.H * g.W + obs * g.OH * g.OW) * b * int64_t{sizeof(float)};
  const bool by_rows = w.depthwise ? blocked_detail::depthwise_by_rows(g, b, threads)
                                   : weight_bytes <= act_bytes;
  if (vector && !w.depthwise && x_blocked && !padded && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 &&
      g.OH == g.H && g.OW == g.W) {
    const int64_t pairs = (obs + 1) / 2;
    const int64_t row_in_bytes = icbs * g.W * b * int64_t{sizeof(float)};
    const int64_t k = blocked_detail::pointwise_merge_rows(g, pairs, threads, by_rows, device::cpu_caches().l2,
                                                           row_in_bytes);
    gp.OW = gp.W = g.OW * k;
    gp.OH = gp.H = g.OH / k;
  }
  thread_local AlignedScratch bias_buf;  // the bias padded to whole blocks, without a heap allocation per run
  float* padded_bias = bias_buf.get<float>(static_cast<size_t>(obs * b));
  std::fill(padded_bias, padded_bias + obs * b, 0.0f);
  if (bias) std::copy(bias, bias + g.M, padded_bias);
  ConvJob j;
  j.w = &w;
  j.g = gp;
  j.x = x;
  j.bias = padded_bias;
  j.z = z;
  j.act = act;
  j.y = y;
  if (x_blocked) {
    j.xs_n = ceil_div(g.C, b) * gp.H * gp.W * b;
    j.xs_cb = gp.H * gp.W * b;
    j.xs_h = gp.W * b;
    j.sx = b;
    j.sc = 1;
  } else {
    j.xs_n = g.C * g.H * g.W;
    j.xs_cb = b * g.H * g.W;
    j.xs_h = g.W;
    j.sx = 1;
    j.sc = g.H * g.W;
  }
  const int64_t row_work = g.OW * g.kh * g.kw * b * (w.depthwise ? 1 : g.C);
  if (vector) {
    if (w.depthwise) {
      j.band_rows = band_rows(pool, g.OH, by_rows);
      run(pool, g.N * obs * g.OH, row_work, [&](int64_t u0, int64_t u1) { blocked_detail::depthwise_units_vec(j, u0, u1); });
    } else {
      const int64_t row_units = blocked_detail::conv_row_units_vec(gp);
      j.band_rows = band_rows(pool, row_units, by_rows);
      // One thread, several output block pairs and an input larger than half
      // the L2: bands of row units whose input fits half of it, each band
      // run for every pair, so that the pairs after the first read it from L2.
      const int64_t l2 = device::cpu_caches().l2;
      const int64_t unit_in_bytes = icbs * gp.W * b * int64_t{sizeof(float)} * (gp.OH > 0 ? gp.H / gp.OH + 1 : 1) *
                                    (gp.OH > 0 ? (gp.OH + row_units - 1) / row_units : 1);
      if (threads == 1 && obs > 2 && l2 > 0 && row_units * unit_in_bytes > l2 / 2)
        j.band_rows = std::max<int64_t>(1, l2 / 2 / unit_in_bytes);
      run(pool, g.N * ((obs + 1) / 2) * row_units, 2 * row_work * b,
          [&](int64_t u0, int64_t u1) { blocked_detail::conv_units_vec(j, u0, u1); });
    }
    return;
  }
  const int64_t band = band_rows(pool, g.OH, by_rows);
  run(pool, g.N * obs * g.OH, row_work * b, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const UnitPos pos = unit_at(u, obs, g.OH, band);
      conv_row_generic(j, pos.n, pos.group, pos.row);
    }
  });
}

namespace {

// The reorders' units: (image, channel block, piece of the positions) in
// unit_at's order with a band of pieces per thread. Where the planes
// (images x channel blocks) are fewer than two per thread, the positions
// split into two pieces per thread (whole 16-position vectors), so that a
// tensor of one or two blocks (16 channels at 112x112) still spreads over
// the threads, each thread reordering about the band of rows the conv next
// to it computes on that thread (unit_order.h). Else whole planes: each
// thread writes whole NCHW planes (pieces of a plane not a multiple of 16
// positions long would share cache lines between the threads).
struct ReorderSplit {
  int64_t pieces = 1, len = 0, band = 0;
};

ReorderSplit reorder_split(ThreadPool* pool, int64_t planes, int64_t hw) {
  ReorderSplit r;
  const int64_t threads = threads_of(pool);
  if (threads > 1 && planes < 2 * threads && hw >= 2 * threads * 16) r.pieces = 2 * threads;
  r.len = ceil_div(ceil_div(hw, r.pieces), 16) * 16;
  r.pieces = ceil_div(hw, r.len);
  r.band = band_per_thread(pool, r.pieces);
  return r;
}

}  // namespace

void to_blocked(const float* x, int64_t N, int64_t C, int64_t hw, int block, float* y, ThreadPool* pool) {
  const int64_t b = block, cbs = ceil_div(C, b);
  const ReorderSplit sp = reorder_split(pool, N * cbs, hw);
  run(pool, N * cbs * sp.pieces, sp.len * b, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const UnitPos pos = unit_at(u, cbs, sp.pieces, sp.band);
      const int64_t n = pos.n, cb = pos.group, cn = std::min(b, C - cb * b);
      const int64_t p0 = pos.row * sp.len, p1 = std::min(hw, p0 + sp.len);
      const float* xs = x + (n * C + cb * b) * hw + p0;
      float* yd = y + ((n * cbs + cb) * hw + p0) * b;
      if (blocked_vector_path(block)) {
        blocked_detail::to_block16_vec(xs, cn, p1 - p0, hw, yd);
        continue;
      }
      for (int64_t p = 0; p < p1 - p0; ++p) {
        for (int64_t c = 0; c < cn; ++c) yd[p * b + c] = xs[c * hw + p];
        for (int64_t c = cn; c < b; ++c) yd[p * b + c] = 0.0f;
      }
    }
  });
}

void from_blocked(const float* x, int64_t N, int64_t C, int64_t hw, int block, float* y, ThreadPool* pool) {
  const int64_t b = block, cbs = ceil_div(C, b);
  const ReorderSplit sp = reorder_split(pool, N * cbs, hw);
  run(pool, N * cbs * sp.pieces, sp.len * b, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const UnitPos pos = unit_at(u, cbs, sp.pieces, sp.band);
      const int64_t n = pos.n, cb = pos.group, cn = std::min(b, C - cb * b);
      const int64_t p0 = pos.row * sp.len, p1 = std::min(hw, p0 + sp.len);
      const float* xs = x + ((n * cbs + cb) * hw + p0) * b;
      float* yd = y + (n * C + cb * b) * hw + p0;
      if (blocked_vector_path(block)) {
        blocked_detail::from_block16_vec(xs, cn, p1 - p0, hw, yd);
        continue;
      }
      for (int64_t c = 0; c < cn; ++c)
        for (int64_t p = 0; p < p1 - p0; ++p) yd[c * hw + p] = xs[p * b + c];
    }
  });
}

// Planes [u0, u1) of global_pool_blocked, B lanes (a constant: the lane loops vectorise).
template <int B>
void global_pool_planes(const float* x, int64_t hw, bool max, float* y, int64_t u0, int64_t u1) {
  for (int64_t u = u0; u < u1; ++u) {
    const float* xs = x + u * hw * B;
    float acc[B];
    for (int c = 0; c < B; ++c) acc[c] = max ? -std::numeric_limits<float>::infinity() : 0.0f;
    if (max) {
      for (int64_t p = 0; p < hw; ++p)
        for (int c = 0; c < B; ++c) acc[c] = std::max(acc[c], xs[p * B + c]);
    } else {
      for (int64_t p = 0; p < hw; ++p)
        for (int c = 0; c < B; ++c) acc[c] += xs[p * B + c];
      for (int c = 0; c < B; ++c) acc[c] /= static_cast<float>(hw);
    }
    std::copy(acc, acc + B, y + u * B);
  }
}

void global_pool_blocked(const float* x, int64_t N, int64_t cb, int64_t hw, int block, bool max, float* y,
                         ThreadPool* pool) {
  run(pool, N * cb, hw * block, [&](int64_t u0, int64_t u1) {
    if (block == 16) global_pool_planes<16>(x, hw, max, y, u0, u1);
    else global_pool_planes<8>(x, hw, max, y, u0, u1);
  });
}

template <int B>
void scale_planes(const float* x, const float* s, int64_t cb, int64_t hw, bool per_image, float* y, int64_t u0,
                  int64_t u1) {
  for (int64_t u = u0; u < u1; ++u) {
    const float* sv = s + (per_image ? u : u % cb) * B;
    const float* xs = x + u * hw * B;
    float* yd = y + u * hw * B;
    for (int64_t p = 0; p < hw; ++p)
      for (int c = 0; c < B; ++c) yd[p * B + c] = xs[p * B + c] * sv[c];
  }
}

void channel_scale_blocked(const float* x, const float* s, int64_t N, int64_t cb, int64_t hw, int block,
                           bool per_image, float* y, ThreadPool* pool) {
  run(pool, N * cb, hw * block, [&](int64_t u0, int64_t u1) {
    if (block == 16) scale_planes<16>(x, s, cb, hw, per_image, y, u0, u1);
    else scale_planes<8>(x, s, cb, hw, per_image, y, u0, u1);
  });
}

// Output rows [u0, u1) of max_pool_blocked, B lanes (a constant: the lane loops vectorise).
template <int B>
void max_pool_rows(const float* x, const BlockedConvGeometry& g, float* y, int64_t u0, int64_t u1) {
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t oh = u % g.OH, plane = u / g.OH;
    const float* xs = x + plane * g.H * g.W * B;
    float* yd = y + u * g.OW * B;
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      float out[B];
      for (int c = 0; c < B; ++c) out[c] = -std::numeric_limits<float>::infinity();
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (int64_t kw = 0; kw < g.kw; ++kw) {
          const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          const float* in = xs + (ih * g.W + iw) * B;
          for (int c = 0; c < B; ++c) out[c] = std::max(out[c], in[c]);
        }
      }
      std::copy(out, out + B, yd + ow * B);
    }
  }
}

void max_pool_blocked(const float* x, const BlockedConvGeometry& g, int64_t cb, int block, float* y,
                      ThreadPool* pool) {
  run(pool, g.N * cb * g.OH, g.OW * g.kh * g.kw * block, [&](int64_t u0, int64_t u1) {
    if (blocked_vector_path(block)) return blocked_detail::max_pool16_vec(x, g, y, u0, u1);
    if (block == 16) max_pool_rows<16>(x, g, y, u0, u1);
    else max_pool_rows<8>(x, g, y, u0, u1);
  });
}

}  // namespace dlrt::cpu
