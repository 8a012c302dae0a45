// concat_blocked (concat_blocked.h): each output block is a list of lane
// runs, each run a stretch of one input block's lanes at a lane shift. A
// block that is one input block unchanged is copied whole; the others are
// assembled position by position (one masked lane permute per run and
// vector: concat_blocked_simd.h).
#include "backends/cpu/kernels/concat_blocked.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/concat_blocked_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

using Run = BlockedConcatRun;

// A block that is one input block as it is (its pad lanes, if any, come along).
bool whole_copy(const std::vector<Run>& r) { return r.size() == 1 && r[0].in_lane == 0 && r[0].out_lane == 0; }

// Positions [p0, p1) of one assembled output block; src[k]: run k's input block at position 0.
void assemble_generic(const std::vector<Run>& runs, const float* const* src, int64_t b, int64_t p0, int64_t p1,
                      float* y) {
  for (int64_t p = p0; p < p1; ++p) {
    float* yd = y + p * b;
    std::fill(yd, yd + b, 0.0f);
    for (size_t k = 0; k < runs.size(); ++k) {
      const float* xs = src[k] + p * b + runs[k].in_lane;
      std::copy(xs, xs + runs[k].len, yd + runs[k].out_lane);
    }
  }
}

}  // namespace

BlockedConcatPlan plan_blocked_concat(const std::vector<int64_t>& channels, int block) {
  const int64_t b = block;
  BlockedConcatPlan plan;
  plan.block = block;
  plan.channels = channels;
  int64_t total = 0;
  for (int64_t c : channels) {
    plan.blocks.push_back(ceil_div(c, b));
    total += c;
  }
  plan.runs.resize(static_cast<size_t>(ceil_div(total, b)));
  int64_t offset = 0;
  for (size_t j = 0; j < channels.size(); ++j) {
    for (int64_t c = 0; c < channels[j];) {
      const int64_t oc = offset + c, il = c % b, ol = oc % b;
      const int64_t len = std::min({b - il, b - ol, channels[j] - c});
      plan.runs[static_cast<size_t>(oc / b)].push_back(
          {j, c / b, static_cast<int>(il), static_cast<int>(ol), static_cast<int>(len)});
      c += len;
    }
    offset += channels[j];
  }
  return plan;
}

void concat_blocked(const BlockedConcatPlan& plan, const float* const* x, int64_t N, int64_t hw, float* y,
                    ThreadPool* pool) {
  const int block = plan.block;
  const int64_t b = block;
  const std::vector<std::vector<Run>>& runs = plan.runs;
  const std::vector<int64_t>& blocks = plan.blocks;
  const int64_t obs = static_cast<int64_t>(runs.size());
  if (N <= 0 || hw <= 0 || obs == 0) return;
  // Units: (image, chunk of positions, output block), chunks of about 64 KiB
  // per block: the output blocks of a chunk, which share input blocks, run
  // one after another (the shared chunk stays in cache).
  const int64_t chunk = std::min(hw, std::max<int64_t>(1, 16384 / b));
  const int64_t chunks = ceil_div(hw, chunk), units = N * obs * chunks;
  // The lane permutes of the vector layer; x86 CPUs without AVX2 take the portable loops.
  const bool vector = block == 16 && cpu_has_simd_kernels();
  const SimdWidth width = simd_width();
  auto body = [&](int64_t u0, int64_t u1) {
    const float* src[16];  // at most one run per lane
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / (obs * chunks), ob = u % obs, p0 = u / obs % chunks * chunk;
      const int64_t p1 = std::min(hw, p0 + chunk);
      const std::vector<Run>& r = runs[static_cast<size_t>(ob)];
      for (size_t k = 0; k < r.size(); ++k)
        src[k] = x[r[k].input] + (n * blocks[r[k].input] + r[k].in_block) * hw * b;
      float* yd = y + (n * obs + ob) * hw * b;
      if (whole_copy(r)) {
        std::memcpy(yd + p0 * b, src[0] + p0 * b, static_cast<size_t>((p1 - p0) * b) * sizeof(float));
        continue;
      }
      if (vector && DLRT_SIMD_CALL(width, concat_assemble16, r.data(), r.size(), src, p0, p1, yd)) continue;
      assemble_generic(r, src, b, p0, p1, yd);
    }
  };
  if (pool && units > 1) pool->parallel_for(units, pool->balanced_grain(units, std::max<int64_t>(1, 65536 / (chunk * b))), body);
  else body(0, units);
}

}  // namespace dlrt::cpu
