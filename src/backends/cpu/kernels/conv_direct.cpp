// Geometry, offset table and on/off switch of the direct convolution (conv_direct.h).
#include "backends/cpu/kernels/conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/unit_order.h"
#include "backends/cpu/scratch.h"
#include "core/env.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu {

bool conv_direct_worth(const ConvDirectPlan& plan, CpuIsa isa, int threads, int64_t out_channels, int64_t l2_bytes) {
  if (isa >= CpuIsa::kAvx512) {
    const bool one_by_one = plan.g.kh * plan.g.kw == 1;
    const bool one_thread_direct = conv_direct_worth(plan) || conv_direct_avx512_extra_column(plan);
    if (threads <= 1) return one_thread_direct;
    if (one_by_one && (plan.g.sh > 1 || plan.g.sw > 1)) return false;
    if (one_thread_direct) return true;
    if (l2_bytes < 0) l2_bytes = device::cpu_caches().l2;
    const bool weights_large = l2_bytes > 0 && out_channels * plan.k * int64_t{sizeof(float)} > l2_bytes / 2;
    return !(one_by_one || weights_large);
  }
  return !(plan.nphase > 1 && plan.g.channels >= 64 && plan.grid >= kConvDirectMinGrid);
}

bool conv_direct_plan(const ConvDirectGeometry& g, ConvDirectPlan* plan, bool shared_pad, bool tap_columns) {
  const int S = ConvDirectPlan::kMaxStride;
  if (g.channels < 1 || g.in_h < 1 || g.in_w < 1 || g.out_h < 1 || g.out_w < 1 || g.kh < 1 || g.kw < 1) return false;
  if (g.sh < 1 || g.sw < 1 || g.sh > S || g.sw > S || g.dh < 1 || g.dw < 1 || g.pad_top < 0 || g.pad_left < 0)
    return false;
  ConvDirectPlan p;
  p.g = g;
  p.k = g.channels * g.kh * g.kw;
  for (int8_t& s : p.phase_slot) s = -1;
  p.copy = !(g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0 &&
             g.out_h == g.in_h && g.out_w == g.in_w);
  if (!p.copy) {
    p.hq = g.in_h;
    p.wq = g.in_w;
    p.nphase = 1;
    p.phase_slot[0] = 0;
    p.grid = g.out_h * g.out_w;
    p.src_floats = 0;
    *plan = p;
    return true;
  }
  // Phase rows/columns the taps reach: output row oh with tap row r = i*dh
  // reads phase row oh + r / sh, so hq = out_h + max(r) / sh (same for columns).
  p.hq = g.out_h + (g.kh - 1) * g.dh / g.sh;
  p.wq = g.out_w + (g.kw - 1) * g.dw / g.sw;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      int8_t& s = p.phase_slot[(i * g.dh % g.sh) * g.sw + (j * g.dw % g.sw)];
      if (s < 0) s = static_cast<int8_t>(p.nphase++);
    }
  const int64_t wq_full = p.wq;
  if (shared_pad) {
    // Phase (a, b) column j holds input column b + sw*j - pad_left: data for
    // j in [j0, j1), zeros elsewhere (fill_channel). Output column ow reads
    // phase columns up to wq_full - 1; at pitch wq, column c >= wq is column
    // c - wq of the next row, which must be one of its leading zeros
    // (c - wq < j0), and the previous row's data must end before the pitch
    // (j1 <= wq). The grid needs wq >= out_w.
    int64_t wq = g.out_w;
    for (int64_t b = 0; b < g.sw; ++b) {
      bool used = false;
      for (int64_t a = 0; a < g.sh; ++a) used = used || p.phase_slot[a * g.sw + b] >= 0;
      if (!used) continue;
      const int64_t lead = g.pad_left - b;
      int64_t j0 = lead > 0 ? (lead + g.sw - 1) / g.sw : 0;
      int64_t j1 = g.in_w + lead > 0 ? (g.in_w + lead + g.sw - 1) / g.sw : 0;
      j1 = std::min(j1, wq_full);
      j0 = std::min(j0, j1);
      wq = std::max({wq, wq_full - j0, j1});
    }
    p.wq = std::min(wq, wq_full);
    p.shared_pad = p.wq < wq_full;
  }
  if (tap_columns && (g.kw > 1 || g.sw > 1 || g.sh > 1)) {
    p.tap_columns = true;
    p.shared_pad = false;
    p.nphase = static_cast<int>(g.sh * g.kw);
    p.wq = g.out_w;
  }
  p.grid = g.out_h * p.wq;
  // Slack past the last plane: garbage columns of the last grid row read up
  // to wq - out_w + (kw-1)*dw/sw floats past it (up to wq_full - out_w +
  // (kw-1)*dw/sw with shared_pad), a tile's last columns up to 15 more.
  const int64_t planes = g.channels * p.nphase;
  if (planes > (int64_t{1} << 20) || p.hq * p.wq > (int64_t{1} << 28) / planes) return false;
  p.src_floats = planes * p.hq * p.wq + wq_full + 64;
  *plan = p;
  return true;
}

bool conv_direct_tap_columns(const ConvDirectGeometry& g) {
  const bool strided = g.sh > 1 || g.sw > 1;
  if (strided) return g.kh > 1 && g.channels * g.kh * g.kw <= kConvDirectTapColumnsMaxStridedK;
  return g.out_w >= kConvDirectTapColumnsMinW && g.out_w <= kConvDirectTapColumnsMaxW;
}

bool conv_direct_tap_columns(const ConvDirectGeometry& g, CpuIsa isa) {
  if (isa == CpuIsa::kAvx2 || isa == CpuIsa::kNeon) return conv_direct_tap_columns(g);
  return isa == CpuIsa::kAvx512 && g.kw > 1 && g.out_w <= kConvDirectTapColumnsAvx512MaxW;
}

const int64_t* conv_direct_pointwise_plan(int64_t channels, int64_t n, int64_t x_plane, ConvDirectPlan* plan) {
  ConvDirectGeometry g;
  g.channels = channels;
  g.in_w = g.out_w = n;
  conv_direct_plan(g, plan);  // every 1 x n pointwise geometry plans
  thread_local std::vector<int64_t> off;  // grows only
  if (off.size() < static_cast<size_t>(plan->k)) off.resize(static_cast<size_t>(plan->k));
  for (int64_t p = 0; p < plan->k; ++p) off[static_cast<size_t>(p)] = p * x_plane;
  return off.data();
}

void conv_direct_offsets(const ConvDirectPlan& plan, int64_t* off) {
  const ConvDirectGeometry& g = plan.g;
  const int64_t plane = plan.hq * plan.wq;
  int64_t p = 0;
  if (plan.tap_columns) {
    for (int64_t c = 0; c < g.channels; ++c)
      for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j, ++p) {
          const int64_t r = i * g.dh;
          off[p] = ((c * g.sh + r % g.sh) * g.kw + j) * plane + (r / g.sh) * plan.wq;
        }
    return;
  }
  for (int64_t c = 0; c < g.channels; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j, ++p) {
        const int64_t r = i * g.dh, q = j * g.dw;
        const int64_t slot = plan.phase_slot[(r % g.sh) * g.sw + (q % g.sw)];
        off[p] = (c * plan.nphase + slot) * plane + (r / g.sh) * plan.wq + q / g.sw;
      }
}

const float* conv_direct_copy_input(const ConvDirectPlan& plan, const float* x, ThreadPool* pool, ChannelFill fill,
                                    PhaseRowZero zero, int64_t split_floats, int64_t chunk_floats, bool split_rows) {
  const ConvDirectGeometry& g = plan.g;
  float* s = conv_direct_scratch(static_cast<size_t>(plan.src_floats));
  const int64_t per_channel = plan.nphase * plan.hq * plan.wq, row_floats = plan.nphase * plan.wq;
  auto fill_range = [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) fill(plan, x + c * g.in_h * g.in_w, s + c * per_channel, 0, plan.hq);
  };
  const bool split = pool && pool->num_threads() > 1 && g.channels * per_channel >= split_floats;
  const int64_t band = split && split_rows ? band_per_thread(pool, plan.hq) : 0;
  if (band > 0) {
    // Units (band, channel, row): each thread copies a band of rows of every channel.
    pool->parallel_for(g.channels * plan.hq, std::max<int64_t>(1, chunk_floats / row_floats), [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e;) {
        const UnitPos pos = unit_at(u, g.channels, plan.hq, band);
        const int64_t ue = std::min(e, pos.end);
        fill(plan, x + pos.group * g.in_h * g.in_w, s + pos.group * per_channel, pos.row, pos.row + (ue - u));
        u = ue;
      }
    });
  } else if (split) {
    pool->parallel_for(g.channels, std::max<int64_t>(1, chunk_floats / per_channel), fill_range);
  } else {
    fill_range(0, g.channels);
  }
  zero(s + g.channels * per_channel, plan.src_floats - g.channels * per_channel);
  return s;
}

float* conv_direct_scratch(size_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(n, AlignedScratch::Growth::kByHalf);
}

namespace {
// -1: follow the environment; 0: off; 1: on.
std::atomic<int> g_override{-1};
std::atomic<uint64_t> g_runs{0};

ConvDirectMode env_mode() {
  static const ConvDirectMode mode = [] {
    const char* v = env::get("DLRT_CONV_DIRECT");
    if (v && std::strcmp(v, "0") == 0) return ConvDirectMode::kOff;
    if (v && std::strcmp(v, "1") == 0) return ConvDirectMode::kForce;
    return ConvDirectMode::kAuto;
  }();
  return mode;
}
}  // namespace

ConvDirectMode conv_direct_mode() {
  if (!cpu_has_simd_kernels()) return ConvDirectMode::kOff;
  const int o = g_override.load(std::memory_order_relaxed);
  if (o < 0) return env_mode();
  return o == 0 ? ConvDirectMode::kOff : ConvDirectMode::kForce;
}

uint64_t conv_direct_runs() { return g_runs.load(std::memory_order_relaxed); }
void conv_direct_note_run() { g_runs.fetch_add(1, std::memory_order_relaxed); }

ScopedConvDirect::ScopedConvDirect(bool enabled) : previous_(g_override.load()) { g_override.store(enabled ? 1 : 0); }
ScopedConvDirect::~ScopedConvDirect() { g_override.store(previous_); }

}  // namespace dlrt::cpu
