// The order in which a kernel over (image, channel group, row) deals its
// units to the thread pool, so that on several threads each thread works on
// a band of rows of every group: ThreadPool::parallel_for hands each thread
// one contiguous run of the units, and a thread that reads the rows it wrote
// in the op before finds them in its own core's caches (rows the other core
// wrote cross between the cores). With one band the order is (image, group,
// row), each thread a run of groups.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/thread_pool.h"

namespace dlrt::cpu {

// Where unit u lies: the units run image by image, then band by band of
// `band` rows (the last band may be shorter; band <= 0 or >= row_units: one
// band), then group by group, then row by row. `end`: one past the last unit
// of u's (image, band, group) run, whose rows follow u's one by one.
struct UnitPos {
  int64_t n = 0, group = 0, row = 0, end = 0;
};

inline UnitPos unit_at(int64_t u, int64_t groups, int64_t row_units, int64_t band) {
  band = band <= 0 ? row_units : std::min(band, row_units);
  const int64_t per_image = groups * row_units, n = u / per_image, off = u % per_image;
  const int64_t b = off / (groups * band), base = b * groups * band;
  const int64_t rows = std::min(band, row_units - b * band), within = off - base, group = within / rows;
  UnitPos p;
  p.n = n;
  p.group = group;
  p.row = b * band + within % rows;
  p.end = n * per_image + base + (group + 1) * rows;
  return p;
}

// The band for unit_at: a band per thread (of `threads`, or of `pool`) where there are several
// threads and there are at least two rows for each, else 0 (one band).
inline int64_t band_for_threads(int64_t threads, int64_t row_units) {
  return threads > 1 && row_units >= 2 * threads ? (row_units + threads - 1) / threads : 0;
}
inline int64_t band_per_thread(const ThreadPool* pool, int64_t row_units) {
  return band_for_threads(pool ? pool->num_threads() : 1, row_units);
}

}  // namespace dlrt::cpu
