// Nearest-neighbour Resize of two adjacent axes in one pass: the gather
// that resize.cpp's per-axis passes do in two, with the column map's
// replication by an integer factor k (input column i -> outputs i*k .. i*k+k-1)
// written as vector stores, and output rows that repeat the previous row's
// input row copied.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"

namespace dlrt::cpu {

// y[o, j, i] = x[o, row_index[j], col_index[i]] for x [outer, in_h, in_w] and
// y [outer, out_h, out_w] of elements of `elem_size` bytes (indexes within
// range; an element may be several of a dtype's, e.g. the 16 channels of a
// blocked layout's pixel). Returns false, writing nothing, for an element
// size other than 1, 2, 4, 8, 16, 32 or 64.
bool nearest_gather_2d(ThreadPool& pool, const void* x, void* y, size_t elem_size, int64_t outer, int64_t in_h,
                       int64_t in_w, const int64_t* row_index, int64_t out_h, const int64_t* col_index, int64_t out_w);

// k when col_index (of out_w entries, over in_w inputs) is i -> floor(i / k)
// with out_w == in_w * k, else 0.
int64_t replication_factor(const int64_t* col_index, int64_t in_w, int64_t out_w);

}  // namespace dlrt::cpu
