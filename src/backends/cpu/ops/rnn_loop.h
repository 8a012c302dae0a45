// The time loop of RNN, GRU and LSTM (ops/rnn.cpp): R^T stored as column
// panels, and each step split into ranges of hidden units.
//
// R^T layout: per direction and gate g, the gate's H columns in panels of
// kRnnPanel (the last one narrower); a panel is a contiguous [H, width]
// block. A step's product h R^T then reads each panel front to back, one
// sequential stream, instead of short runs a whole R^T row apart.
//
// A task is one direction's range of units [j0, j1) (whole panels): it
// computes the columns of every gate for those units, applies the gate maths
// to them and writes those units of the next state. The tasks of one step are
// independent; a step on several threads is one parallel_for over the tasks
// (GRU without linear_before_reset: two, as its third product needs r * h of
// every unit). The pool deals a range in the same contiguous runs every step,
// so each thread reads the same slice of R every step, and the slice can stay
// in that core's cache.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/ops/rnn_attrs.h"

namespace dlrt::cpu::rnn {

inline constexpr int64_t kRnnPanel = 128;

// Offset of gate g's panel p in one direction's packed R^T of hidden size H.
inline int64_t panel_offset(int64_t H, int64_t g, int64_t p) { return (g * H + p * kRnnPanel) * H; }

// Packs one direction's R [G H, H] (row-major) as the panels above into `dst`
// (G H * H elements).
template <typename T, typename E, typename Conv>
void pack_r_panels(const E* src, int64_t G, int64_t H, T* dst, Conv conv) {
  for (int64_t g = 0; g < G; ++g)
    for (int64_t p0 = 0; p0 < H; p0 += kRnnPanel) {
      const int64_t w = std::min(kRnnPanel, H - p0);
      T* panel = dst + panel_offset(H, g, p0 / kRnnPanel);
      for (int64_t c = 0; c < w; ++c) {
        const E* row = src + (g * H + p0 + c) * H;  // R row = column c of the panel
        for (int64_t k = 0; k < H; ++k) panel[k * w + c] = conv(row[k]);
      }
    }
}

// C[M, j0..j1) += A[M, H] * (gate g's columns j0..j1 of R^T), C pointing at
// the gate's column 0. `acc` is the dense product C[M, N] += A[M, K] B[K, N].
template <typename T, typename Acc>
void panel_product(int64_t M, const T* A, int64_t lda, const T* rtp, int64_t H, int64_t g, int64_t j0, int64_t j1,
                   T* C, int64_t ldc, Acc acc) {
  for (int64_t p0 = j0; p0 < j1; p0 += kRnnPanel) {
    const int64_t w = std::min(kRnnPanel, H - p0);
    acc(M, w, H, A, lda, rtp + panel_offset(H, g, p0 / kRnnPanel), w, C + p0, ldc);
  }
}

// What the loop reads and writes; all per-direction arrays are [D, ...].
template <typename T>
struct RnnLoop {
  const RnnAttrs* cfg = nullptr;
  Dims dm;
  const int64_t* lens = nullptr;
  const T* rtp = nullptr;   // [D, G H, H] panels
  const T* bias = nullptr;  // [D, 2 G H]
  const T* peep = nullptr;  // [D, 3 H] or null
  const T* xw = nullptr;    // [D, S, B, G H]: X W^T plus biases
  T* gates = nullptr;       // [D, B, G H]
  T* scratch = nullptr;     // [D, B, H]
  T* h = nullptr;           // [D, B, H]: initial, then final state
  T* h_alt = nullptr;       // [D, B, H]: the other state buffer
  T* c = nullptr;           // [D, B, H] (LSTM)
  T* ys = nullptr;          // [S, D, B, H] or null
};

// The LSTM update of direction d's units [j0, j0 + n) at time t, from the
// gate pre-activations in `gates` ([B, 4 H]); writes c in place and h into
// `hn`.
template <typename T, typename Act, typename Clip>
void lstm_units(const RnnLoop<T>& L, int64_t d, int64_t t, int64_t j0, int64_t n, const RnnActivation* a, T* gates,
                T* scratch, T* hn, Act act, Clip do_clip) {
  const RnnAttrs& cfg = *L.cfg;
  const int64_t B = L.dm.B, H = L.dm.H, GH = cfg.G * H;
  const T* p_i = L.peep ? L.peep + d * 3 * H : nullptr;
  for (int64_t b = 0; b < B; ++b) {
    if (t >= L.lens[b]) continue;
    T* gi = gates + b * GH + j0;
    T* go = gi + H;
    T* gf = gi + 2 * H;
    T* gc = gi + 3 * H;
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
// (null: inline on this thread). `acc` is the dense per-panel product,
// `act(kind, x, n)` an activation, `clip(x, n)` the clip.
template <typename T, typename Acc, typename Act, typename Clip>
void run_recurrence(const RnnLoop<T>& L, int64_t d0, int64_t d1, ThreadPool* pool, Acc acc, Act act, Clip do_clip) {
  const RnnAttrs& cfg = *L.cfg;
  const int64_t S = L.dm.S, B = L.dm.B, H = L.dm.H, D = cfg.D, GH = cfg.G * H;
  const int64_t chunks = (H + kRnnPanel - 1) / kRnnPanel;
  const int64_t ntasks = (d1 - d0) * chunks;
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
    const int64_t j0 = (task_id % chunks) * kRnnPanel, j1 = std::min(H, j0 + kRnnPanel), n = j1 - j0;
    const int64_t t = time_of(d);
    const RnnActivation* a = &cfg.acts[d * apd];
    const T* rtp = L.rtp + d * GH * H;
    const T* rb = L.bias + d * 2 * GH + GH;
    T* gates = L.gates + d * B * GH;
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
    auto finish = [&]() {  // rows past their length keep their state
      for (int64_t b = 0; b < B; ++b) {
        if (t < L.lens[b]) {
          if (y_t) std::copy(hn + b * H + j0, hn + b * H + j1, y_t + b * H + j0);
        } else {
          std::copy(hp + b * H + j0, hp + b * H + j1, hn + b * H + j0);
        }
      }
    };
    const int64_t ng = cfg.cell == Cell::kGru ? 2 : cfg.G;  // gates of the first product
    if (phase == 0) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t g = 0; g < ng; ++g) {
          const T* src = L.xw + ((d * S + t) * B + b) * GH + g * H;
          std::copy(src + j0, src + j1, gates + b * GH + g * H + j0);
        }
      for (int64_t g = 0; g < ng; ++g) panel_product(B, hp, H, rtp, H, g, j0, j1, gates + g * H, GH, acc);
    }
    if (cfg.cell == Cell::kRnn) {
      for (int64_t b = 0; b < B; ++b) {
        if (t >= L.lens[b]) continue;
        T* g = gates + b * GH + j0;
        do_clip(g, n);
        act(a[0], g, n);
        std::copy(g, g + n, hn + b * H + j0);
      }
    } else if (cfg.cell == Cell::kLstm) {
      lstm_units(L, d, t, j0, n, a, gates, scratch, hn, act, do_clip);
    } else if (phase == 0) {  // GRU: z and r
      for (int64_t b = 0; b < B; ++b) {
        T* g = gates + b * GH;
        do_clip(g + j0, n);
        act(a[0], g + j0, n);
        do_clip(g + H + j0, n);
        act(a[0], g + H + j0, n);
      }
      if (!cfg.linear_before_reset) {
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = j0; j < j1; ++j) scratch[b * H + j] = gates[b * GH + H + j] * hp[b * H + j];
        return;  // the candidate in phase 1, once every unit's r * h is there
      }
      for (int64_t b = 0; b < B; ++b) std::fill(scratch + b * H + j0, scratch + b * H + j1, T(0));
      panel_product(B, hp, H, rtp, H, 2, j0, j1, scratch, H, acc);
      for (int64_t b = 0; b < B; ++b) {
        T* g = gates + b * GH;
        const T* xh = L.xw + ((d * S + t) * B + b) * GH + 2 * H;
        for (int64_t j = j0; j < j1; ++j) g[2 * H + j] = xh[j] + g[H + j] * (scratch[b * H + j] + rb[2 * H + j]);
      }
    } else {  // GRU phase 1: (r * h) Rh^T
      for (int64_t b = 0; b < B; ++b) {
        const T* xh = L.xw + ((d * S + t) * B + b) * GH + 2 * H;
        std::copy(xh + j0, xh + j1, gates + b * GH + 2 * H + j0);
      }
      panel_product(B, scratch, H, rtp, H, 2, j0, j1, gates + 2 * H, GH, acc);
    }
    if (cfg.cell == Cell::kGru) {
      for (int64_t b = 0; b < B; ++b) {
        if (t >= L.lens[b]) continue;
        T* g = gates + b * GH;
        T* hh = g + 2 * H + j0;
        do_clip(hh, n);
        act(a[1], hh, n);
        const T* hpb = hp + b * H;
        T* hb = hn + b * H;
        for (int64_t j = j0; j < j1; ++j) hb[j] = (T(1) - g[j]) * g[2 * H + j] + g[j] * hpb[j];
      }
    }
    finish();
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
