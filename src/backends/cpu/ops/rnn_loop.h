// The time loop of RNN, GRU and LSTM (ops/rnn.cpp): hidden units in chunks,
// R^T stored chunk by chunk, and each step split into those chunks.
//
// Chunks: ranges of W hidden units (rnn_chunk_width: the whole of H while
// every direction's R fits one core's L2, else as many units as make
// kRnnChunkColumns gate columns, in whole vectors). R^T layout: per
// direction, chunk after chunk, each a contiguous [H, G w] block whose
// columns are gate 0's w units, then gate 1's, ...; the gate pre-activations
// of a step use the same order ([B, G H], chunk-major). A step's product
// h R^T then reads each chunk front to back, one sequential stream, instead
// of short runs a whole R^T row apart, and with one chunk the layout is the
// plain R^T.
//
// A task is one direction's chunk: it computes every gate's columns for its
// units, applies the gate maths to them and writes those units of the next
// state. The tasks of one step are independent; a step on several threads is
// one parallel_for over the tasks (GRU without linear_before_reset: two, as
// its third product needs r * h of every unit). The pool deals a range in
// the same contiguous runs every step, so each thread reads the same slice of
// R every step, and the slice can stay in that core's cache.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/ops/rnn_attrs.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu::rnn {

// The columns of a chunk when R is streamed: the widest block the few-rows
// kernel keeps in registers for one row (16 zmm), so that a batch of one
// reads each chunk in a single pass.
inline constexpr int64_t kRnnChunkColumns = 256;

// The chunk width for a layer of D directions, G gates and hidden size H
// with `elem`-byte weights (see above).
inline int64_t rnn_chunk_width(int64_t D, int64_t G, int64_t H, size_t elem) {
  const int64_t r_bytes = D * G * H * H * static_cast<int64_t>(elem);
  const int64_t w = std::max<int64_t>(16, kRnnChunkColumns / G / 16 * 16);
  return std::max<int64_t>(1, r_bytes > device::cpu_caches().l2 ? std::min(w, H) : H);  // 1 for H = 0
}

// Packs one direction's R [G H, H] (row-major) in chunks of W units as above
// into `dst` (G H * H elements).
template <typename T, typename E, typename Conv>
void pack_r_panels(const E* src, int64_t G, int64_t H, int64_t W, T* dst, Conv conv) {
  for (int64_t j0 = 0; j0 < H; j0 += W) {
    const int64_t w = std::min(W, H - j0), ld = G * w;
    T* panel = dst + G * j0 * H;
    for (int64_t g = 0; g < G; ++g)
      for (int64_t c = 0; c < w; ++c) {
        const E* row = src + (g * H + j0 + c) * H;  // R's row = a column of the chunk
        for (int64_t k = 0; k < H; ++k) panel[k * ld + g * w + c] = conv(row[k]);
      }
  }
}

// What the loop reads and writes; all per-direction arrays are [D, ...].
template <typename T>
struct RnnLoop {
  const RnnAttrs* cfg = nullptr;
  Dims dm;
  const int64_t* lens = nullptr;
  const T* rtp = nullptr;   // [D, G H, H] in chunks
  int64_t W = 1;            // chunk width
  const T* bias = nullptr;  // [D, 2 G H]
  const T* peep = nullptr;  // [D, 3 H] or null
  const T* xw = nullptr;    // [D, S, B, G H]: X W^T plus biases
  T* gates = nullptr;       // [D, B, G H], chunk-major
  T* scratch = nullptr;     // [D, B, H]
  T* h = nullptr;           // [D, B, H]: initial, then final state
  T* h_alt = nullptr;       // [D, B, H]: the other state buffer
  T* c = nullptr;           // [D, B, H] (LSTM)
  T* ys = nullptr;          // [S, D, B, H] or null
  // LSTM with the default activations, no peepholes, clip or coupled input
  // and forget gates: the whole update of one row's units [j0, j0 + n) from
  // its gates (i, o, f, g at 0, n, 2 n, 3 n), writing c and h; or null.
  void (*lstm_cell)(int64_t n, const T* gates, T* c, T* h) = nullptr;
};

// The LSTM update of direction d's units [j0, j0 + n) at time t, from the
// gate pre-activations of their chunk (`gates`: row b at b * 4 H, gate g at
// g n); writes c in place and h into `hn`.
template <typename T, typename Act, typename Clip>
void lstm_units(const RnnLoop<T>& L, int64_t d, int64_t t, int64_t j0, int64_t n, const RnnActivation* a, T* gates,
                T* scratch, T* hn, Act act, Clip do_clip) {
  const RnnAttrs& cfg = *L.cfg;
  const int64_t B = L.dm.B, H = L.dm.H, GH = cfg.G * H;
  const T* p_i = L.peep ? L.peep + d * 3 * H : nullptr;
  for (int64_t b = 0; b < B; ++b) {
    if (t >= L.lens[b]) continue;
    if (L.lstm_cell) {
      L.lstm_cell(n, gates + b * GH, L.c + (d * B + b) * H + j0, hn + b * H + j0);
      continue;
    }
    T* gi = gates + b * GH;
    T* go = gi + n;
    T* gf = gi + 2 * n;
    T* gc = gi + 3 * n;
    T* cb = L.c + (d * B + b) * H + j0;
    if (p_i)
      for (int64_t j = 0; j < n; ++j) {
        gi[j] += p_i[j0 + j] * cb[j];
        gf[j] += p_i[2 * H + j0 + j] * cb[j];
      }
    do_clip(gi, n);
    act(a[0], gi, n);
    if (cfg.input_forget) {
      for (int64_t j = 0; j < n; ++j) gf[j] = T(1) - gi[j];
    } else {
      do_clip(gf, n);
      act(a[0], gf, n);
    }
    do_clip(gc, n);
    act(a[1], gc, n);
    for (int64_t j = 0; j < n; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
    if (p_i)
      for (int64_t j = 0; j < n; ++j) go[j] += p_i[H + j0 + j] * cb[j];
    do_clip(go, n);
    act(a[0], go, n);
    T* tmp = scratch + b * H + j0;
    std::copy(cb, cb + n, tmp);
    act(a[2], tmp, n);
    T* hb = hn + b * H + j0;
    for (int64_t j = 0; j < n; ++j) hb[j] = go[j] * tmp[j];
  }
}

// Runs the recurrence of directions [d0, d1); each step's tasks on `pool`
// (null: inline on this thread). `acc(M, N, K, A, lda, B, ldb, C, ldc,
// inner)` is the dense product C += A B, on `inner` (a pool or null);
// `act(kind, x, n)` an activation, `clip(x, n)` the clip.
template <typename T, typename Acc, typename Act, typename Clip>
void run_recurrence(const RnnLoop<T>& L, int64_t d0, int64_t d1, ThreadPool* pool, Acc acc, Act act, Clip do_clip) {
  const RnnAttrs& cfg = *L.cfg;
  const int64_t S = L.dm.S, B = L.dm.B, H = L.dm.H, D = cfg.D, G = cfg.G, GH = G * H, W = L.W;
  const int64_t chunks = (H + W - 1) / W;
  const int64_t ntasks = (d1 - d0) * chunks;
  // One task: the pool goes to its products instead (a batch past the few-rows kernel).
  ThreadPool* inner = ntasks == 1 ? pool : nullptr;
  const size_t apd = cfg.cell == Cell::kRnn ? 1 : (cfg.cell == Cell::kGru ? 2 : 3);
  T* hcur = L.h;
  T* hnext = L.h_alt;
  int64_t s = 0;

  auto time_of = [&](int64_t d) {
    const bool reverse = D == 2 ? d == 1 : cfg.reverse;
    return reverse ? S - 1 - s : s;
  };
  // Phase 0 (every cell): products of the gates that need only h_{t-1}, and
  // for RNN/LSTM (and GRU with linear_before_reset) the whole update.
  // Phase 1 (GRU without linear_before_reset): the candidate from r * h.
  auto task = [&](int64_t task_id, int phase) {
    const int64_t d = d0 + task_id / chunks;
    const int64_t j0 = (task_id % chunks) * W, j1 = std::min(H, j0 + W), n = j1 - j0, ld = G * n;
    const int64_t t = time_of(d);
    const RnnActivation* a = &cfg.acts[d * apd];
    const T* pan = L.rtp + d * GH * H + G * j0 * H;  // this chunk of R^T, [H, G n]
    const T* rb = L.bias + d * 2 * GH + GH;
    T* gates = L.gates + d * B * GH + G * j0;  // row b at b GH, gate g at g n
    T* scratch = L.scratch + d * B * H;
    const T* hp = hcur + d * B * H;
    T* hn = hnext + d * B * H;
    T* y_t = L.ys ? L.ys + (t * D + d) * B * H : nullptr;
    bool any = false;
    for (int64_t b = 0; b < B; ++b) any |= t < L.lens[b];
    if (!any) {
      if (phase == 0)
        for (int64_t b = 0; b < B; ++b) std::copy(hp + b * H + j0, hp + b * H + j1, hn + b * H + j0);
      return;
    }
    auto xw_gate = [&](int64_t b, int64_t g) { return L.xw + ((d * S + t) * B + b) * GH + g * H + j0; };
    const int64_t ng = cfg.cell == Cell::kGru ? 2 : G;  // gates of the first product
    if (phase == 0) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t g = 0; g < ng; ++g) std::copy(xw_gate(b, g), xw_gate(b, g) + n, gates + b * GH + g * n);
      acc(B, ng * n, H, hp, H, pan, ld, gates, GH, inner);
    }
    if (cfg.cell == Cell::kRnn) {
      for (int64_t b = 0; b < B; ++b) {
        if (t >= L.lens[b]) continue;
        T* g = gates + b * GH;
        do_clip(g, n);
        act(a[0], g, n);
        std::copy(g, g + n, hn + b * H + j0);
      }
    } else if (cfg.cell == Cell::kLstm) {
      lstm_units(L, d, t, j0, n, a, gates, scratch, hn, act, do_clip);
    } else if (phase == 0) {  // GRU: z and r
      for (int64_t b = 0; b < B; ++b) {
        do_clip(gates + b * GH, 2 * n);
        act(a[0], gates + b * GH, 2 * n);
      }
      if (!cfg.linear_before_reset) {
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < n; ++j) scratch[b * H + j0 + j] = gates[b * GH + n + j] * hp[b * H + j0 + j];
        return;  // the candidate in phase 1, once every unit's r * h is there
      }
      for (int64_t b = 0; b < B; ++b) std::fill(scratch + b * H + j0, scratch + b * H + j1, T(0));
      acc(B, n, H, hp, H, pan + 2 * n, ld, scratch + j0, H, inner);
      for (int64_t b = 0; b < B; ++b) {
        T* g = gates + b * GH;
        const T* xh = xw_gate(b, 2);
        const T* hr = scratch + b * H + j0;
        for (int64_t j = 0; j < n; ++j) g[2 * n + j] = xh[j] + g[n + j] * (hr[j] + rb[2 * H + j0 + j]);
      }
    } else {  // GRU phase 1: (r * h) Rh^T
      for (int64_t b = 0; b < B; ++b) std::copy(xw_gate(b, 2), xw_gate(b, 2) + n, gates + b * GH + 2 * n);
      acc(B, n, H, scratch, H, pan + 2 * n, ld, gates + 2 * n, GH, inner);
    }
    if (cfg.cell == Cell::kGru) {
      for (int64_t b = 0; b < B; ++b) {
        if (t >= L.lens[b]) continue;
        T* g = gates + b * GH;
        T* hh = g + 2 * n;
        do_clip(hh, n);
        act(a[1], hh, n);
        const T* hpb = hp + b * H + j0;
        T* hb = hn + b * H + j0;
        for (int64_t j = 0; j < n; ++j) hb[j] = (T(1) - g[j]) * hh[j] + g[j] * hpb[j];
      }
    }
    for (int64_t b = 0; b < B; ++b) {  // rows past their length keep their state
      if (t < L.lens[b]) {
        if (y_t) std::copy(hn + b * H + j0, hn + b * H + j1, y_t + b * H + j0);
      } else {
        std::copy(hp + b * H + j0, hp + b * H + j1, hn + b * H + j0);
      }
    }
  };
  const bool two_phase = cfg.cell == Cell::kGru && !cfg.linear_before_reset;
  for (s = 0; s < S; ++s) {
    for (int phase = 0; phase < (two_phase ? 2 : 1); ++phase) {
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) task(i, phase);
      };
      if (pool && ntasks > 1) pool->parallel_for(ntasks, 1, body);
      else body(0, ntasks);
    }
    std::swap(hcur, hnext);
  }
  if (hcur != L.h)
    for (int64_t d = d0; d < d1; ++d) std::copy(hcur + d * B * H, hcur + (d + 1) * B * H, L.h + d * B * H);
}

}  // namespace dlrt::cpu::rnn
