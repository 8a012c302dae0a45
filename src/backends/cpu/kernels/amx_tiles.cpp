// The scalar model of the AMX tile instructions (amx_tiles.h).
#include "backends/cpu/kernels/amx_tiles.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dlrt::cpu::amx {

TileConfig full_tiles() {
  TileConfig c;
  for (int t = 0; t < kTiles; ++t) {
    c.colsb[t] = kMaxColsBytes;
    c.rows[t] = kMaxRows;
  }
  return c;
}

void TileModel::fault(const char* what, int t) {
  std::fprintf(stderr, "dlrt: AMX tile model: %s (tmm%d); the CPU would raise #UD or #GP here\n", what, t);
  std::abort();
}

void TileModel::configure(const TileConfig& c) {
  if (c.palette == 0) return release();
  if (c.palette != 1) fault("palette other than 0 or 1", -1);
  if (c.start_row != 0) fault("start_row not 0", -1);
  for (uint8_t r : c.reserved)
    if (r != 0) fault("reserved configuration bytes not 0", -1);
  for (int t = 0; t < 16; ++t) {
    const bool used = c.rows[t] != 0 || c.colsb[t] != 0;
    if (!used) continue;
    if (t >= kTiles) fault("configuration for a tile palette 1 lacks", t);
    if (c.rows[t] == 0 || c.colsb[t] == 0) fault("rows and colsb not both 0 or both set", t);
    if (c.rows[t] > kMaxRows || c.colsb[t] > kMaxColsBytes) fault("tile larger than 16 rows x 64 bytes", t);
  }
  cfg_ = c;
  configured_ = true;
  std::memset(tile_, 0, sizeof tile_);
}

void TileModel::release() {
  cfg_ = TileConfig{};
  configured_ = false;
  std::memset(tile_, 0, sizeof tile_);
}

void TileModel::check(int t) const {
  if (!configured_) fault("tile instruction before LDTILECFG", t);
  if (t < 0 || t >= kTiles) fault("no such tile", t);
  if (cfg_.rows[t] == 0) fault("tile configured unused", t);
}

void TileModel::load(int t, const void* base, int64_t stride) {
  check(t);
  const auto* p = static_cast<const uint8_t*>(base);
  std::memset(tile_[t], 0, sizeof tile_[t]);
  for (int r = 0; r < cfg_.rows[t]; ++r) std::memcpy(tile_[t][r], p + r * stride, cfg_.colsb[t]);
}

void TileModel::store(int t, void* base, int64_t stride) const {
  check(t);
  auto* p = static_cast<uint8_t*>(base);
  for (int r = 0; r < cfg_.rows[t]; ++r) std::memcpy(p + r * stride, tile_[t][r], cfg_.colsb[t]);
}

void TileModel::zero(int t) {
  check(t);
  std::memset(tile_[t], 0, sizeof tile_[t]);
}

void TileModel::check_dot_shapes(int c, int a, int b) const {
  check(c);
  check(a);
  check(b);
  if (c == a || c == b || a == b) fault("the same tile as two operands", c);
  if (cfg_.rows[c] != cfg_.rows[a] || cfg_.colsb[c] != cfg_.colsb[b] || cfg_.colsb[a] != 4 * cfg_.rows[b] ||
      cfg_.colsb[c] % 4 != 0 || cfg_.colsb[a] % 4 != 0)
    fault("tile shapes the dot product rejects", c);
}

void TileModel::dot(int c, int a, int b, bool a_signed) {
  check_dot_shapes(c, a, b);
  const int M = cfg_.rows[c], N = cfg_.colsb[c] / 4, K = cfg_.colsb[a] / 4;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      uint32_t acc;
      std::memcpy(&acc, &tile_[c][m][4 * n], 4);
      for (int k = 0; k < K; ++k) {
        uint32_t s = 0;
        for (int i = 0; i < 4; ++i) {
          const uint8_t x = tile_[a][m][4 * k + i];
          const int32_t av = a_signed ? int32_t{static_cast<int8_t>(x)} : int32_t{x};
          s += static_cast<uint32_t>(av * int32_t{static_cast<int8_t>(tile_[b][k][4 * n + i])});
        }
        acc += s;
      }
      std::memcpy(&tile_[c][m][4 * n], &acc, 4);
    }
  // What lies past the configured shape is zero (it already is: loads and
  // configure zero it, and nothing writes there).
}

void TileModel::dpbusd(int c, int a, int b) { dot(c, a, b, false); }
void TileModel::dpbssd(int c, int a, int b) { dot(c, a, b, true); }

namespace {

// DAZ on an input, FTZ on a result: a denormal reads or becomes a zero of its sign.
float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

float bf16_at(const uint8_t* row, int i) {
  uint16_t h;
  std::memcpy(&h, row + 2 * i, 2);
  return flush(std::bit_cast<float>(static_cast<uint32_t>(h) << 16));
}

}  // namespace

void TileModel::dpbf16ps(int c, int a, int b) {
  check_dot_shapes(c, a, b);
  const int M = cfg_.rows[c], N = cfg_.colsb[c] / 4, K = cfg_.colsb[a] / 4;
  float t[2 * kMaxColsBytes / 4];
  for (int m = 0; m < M; ++m) {
    std::fill(t, t + 2 * N, 0.0f);
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n)
        for (int e = 0; e < 2; ++e)
          t[2 * n + e] =
              flush(std::fma(bf16_at(tile_[a][m], 2 * k + e), bf16_at(tile_[b][k], 2 * n + e), t[2 * n + e]));
    for (int n = 0; n < N; ++n) {
      float acc;
      std::memcpy(&acc, &tile_[c][m][4 * n], 4);
      acc = flush(flush(acc) + flush(t[2 * n] + t[2 * n + 1]));
      std::memcpy(&tile_[c][m][4 * n], &acc, 4);
    }
  }
}

double tdpbf16ps_tolerance(int pairs, double magnitude) {
  const int n = 2 * pairs + 1;
  return 2.0 * n * std::ldexp(magnitude, -24) + n * std::ldexp(1.0, -126);
}

TileModel& thread_tiles() {
  thread_local TileModel model;
  return model;
}

}  // namespace dlrt::cpu::amx
