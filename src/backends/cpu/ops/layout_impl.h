// Private helpers of the data-movement kernels (shape.cpp, layout.cpp,
// gather_scatter.cpp): copying elements of any dtype without caring what they
// mean, and one strided-copy engine that Transpose, Slice, Expand, Tile,
// DepthToSpace and SpaceToDepth all reduce to.
#pragma once

#include "backends/cpu/kernels/byte_transpose.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu::layout {

// Calls f(std::type_identity<T>{}) with an unsigned integer of the dtype's
// element size, or std::string for strings: enough for kernels that only move
// elements. Strings must be assigned element-wise, never memcpy'd.
template <typename F>
Status dispatch_copyable(DType t, F&& f) {
  if (t == DType::kString) return f(std::type_identity<std::string>{});
  switch (dtype_size(t)) {
    case 1: return f(std::type_identity<uint8_t>{});
    case 2: return f(std::type_identity<uint16_t>{});
    case 4: return f(std::type_identity<uint32_t>{});
    case 8: return f(std::type_identity<uint64_t>{});
    default: return Unsupported(std::string("dtype ") + dtype_name(t) + " cannot be copied by this kernel");
  }
}

// Elements per parallel chunk: below this, splitting costs more than it saves.
inline constexpr int64_t kCopyGrain = 1 << 15;

// Row-major strides (in elements) of `shape`.
inline Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// out[i0, ..., in] = in[offset + sum_k i_k * in_strides[k]] for every index of
// out_shape, writing `out` contiguously. Strides may be zero (broadcast) or
// negative (reversed slices); the caller guarantees every address is in range.
struct StridedCopy {
  Shape out_shape;
  Shape in_strides;  // Shape for its inline storage (no heap below rank 9)
  int64_t in_offset = 0;

  // Drops size-1 dims and merges dims that are contiguous in the input.
  void simplify() {
    Shape s, st;
    for (size_t i = 0; i < out_shape.size(); ++i) {
      if (out_shape[i] == 1) continue;
      if (!s.empty() && st.back() == in_strides[i] * out_shape[i]) {
        s.back() *= out_shape[i];
        st.back() = in_strides[i];
      } else {
        s.push_back(out_shape[i]);
        st.push_back(in_strides[i]);
      }
    }
    out_shape = std::move(s);
    in_strides = std::move(st);
  }
};

namespace detail {

// Copies rows [row_begin, row_end) of a copy whose last dim is the row.
template <typename T>
void copy_rows(const T* in, T* out, const StridedCopy& c, int64_t row_begin, int64_t row_end) {
  const size_t r = c.out_shape.size();
  const int64_t n = c.out_shape[r - 1];
  const int64_t s = c.in_strides[r - 1];
  // Multi-index of row_begin over the leading r-1 dims.
  Shape idx(r - 1, 0);
  int64_t off = c.in_offset;
  for (int64_t rem = row_begin, k = static_cast<int64_t>(r) - 2; k >= 0; --k) {
    idx[k] = rem % c.out_shape[k];
    rem /= c.out_shape[k];
    off += idx[k] * c.in_strides[k];
  }
  T* o = out + row_begin * n;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* src = in + off;
    if (s == 1) {
      std::copy_n(src, n, o);
    } else if (s == 0) {
      std::fill_n(o, n, *src);
    } else {
      for (int64_t j = 0; j < n; ++j) o[j] = src[j * s];
    }
    o += n;
    for (int64_t k = static_cast<int64_t>(r) - 2; k >= 0; --k) {
      off += c.in_strides[k];
      if (++idx[k] < c.out_shape[k]) break;
      off -= idx[k] * c.in_strides[k];
      idx[k] = 0;
    }
  }
}

// A copy whose input-contiguous dim `k` is not the output's last dim (a
// transpose): blocks of (dim k) x (last dim) are copied in square tiles so
// that both the reads and the writes stay in cache.
template <typename T>
void copy_tiled(const T* in, T* out, const StridedCopy& c, size_t k, int64_t block_begin, int64_t block_end) {
  constexpr int64_t kTile = 32;
  const size_t r = c.out_shape.size();
  const int64_t rows = c.out_shape[k], cols = c.out_shape[r - 1];
  const int64_t col_stride = c.in_strides[r - 1];  // input stride of the output's last dim
  const Shape out_strides = contiguous_strides(c.out_shape);
  const int64_t out_row_stride = out_strides[k];
  for (int64_t blk = block_begin; blk < block_end; ++blk) {
    // Decompose the block index over every dim except k and the last.
    int64_t in_off = c.in_offset, out_off = 0;
    for (int64_t rem = blk, d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
      if (static_cast<size_t>(d) == k) continue;
      const int64_t i = rem % c.out_shape[d];
      rem /= c.out_shape[d];
      in_off += i * c.in_strides[d];
      out_off += i * out_strides[d];
    }
    const T* src = in + in_off;
    T* dst = out + out_off;
    if constexpr (sizeof(T) == 1) {
      // Bytes (8-bit tensors changing layout): 16 x 16 tiles in registers.
      transpose_bytes(reinterpret_cast<const uint8_t*>(src), col_stride, cols, rows, reinterpret_cast<uint8_t*>(dst),
                      out_row_stride);
      continue;
    }
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) dst[i * out_row_stride + j] = src[i + j * col_stride];
      }
    }
  }
}

}  // namespace detail

// Runs the copy, split over the pool when it is large.
template <typename T>
void strided_copy(const T* in, T* out, StridedCopy c, ThreadPool& pool) {
  c.simplify();
  if (c.out_shape.empty()) {
    out[0] = in[c.in_offset];
    return;
  }
  const size_t r = c.out_shape.size();
  const int64_t total = element_count(c.out_shape);
  if (total == 0) return;
  // A transpose: some dim other than the last is contiguous in the input.
  size_t k = r;
  for (size_t d = 0; d + 1 < r; ++d)
    if (c.in_strides[d] == 1 && c.out_shape[d] >= 2) k = d;
  if (k < r && c.in_strides[r - 1] != 0 && c.in_strides[r - 1] != 1) {
    const int64_t block = c.out_shape[k] * c.out_shape[r - 1];
    const int64_t blocks = total / block;
    if constexpr (sizeof(T) == 1) {
      if (blocks == 1 && r == 2 && k == 0 && total >= kCopyGrain && pool.num_threads() > 1) {
        // One large byte matrix: its output rows in ranges over the threads.
        const int64_t rows = c.out_shape[0], cols = c.out_shape[1], col_stride = c.in_strides[1];
        pool.parallel_for(rows, pool.balanced_grain(rows, std::max<int64_t>(16, kCopyGrain / cols)),
                          [&](int64_t b, int64_t e) {
                            transpose_bytes(reinterpret_cast<const uint8_t*>(in + c.in_offset + b), col_stride, cols,
                                            e - b, reinterpret_cast<uint8_t*>(out + b * cols), cols);
                          });
        return;
      }
    }
    if (blocks == 1 || total < kCopyGrain) {
      detail::copy_tiled(in, out, c, k, 0, blocks);
    } else {
      pool.parallel_for(blocks, pool.balanced_grain(blocks, std::max<int64_t>(1, kCopyGrain / block)),
                        [&](int64_t b, int64_t e) { detail::copy_tiled(in, out, c, k, b, e); });
    }
    return;
  }
  const int64_t n = c.out_shape[r - 1];
  const int64_t rows = total / n;
  if (total < kCopyGrain || rows == 1) {
    detail::copy_rows(in, out, c, 0, rows);
  } else {
    pool.parallel_for(rows, pool.balanced_grain(rows, std::max<int64_t>(1, kCopyGrain / n)),
                      [&](int64_t b, int64_t e) { detail::copy_rows(in, out, c, b, e); });
  }
}

// Type-erased strided copy from `src` into `dst` (same dtype).
inline Status strided_copy(const Tensor& src, Tensor& dst, StridedCopy c, ThreadPool& pool) {
  return dispatch_copyable(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    strided_copy<T>(src.data<T>(), dst.data<T>(), std::move(c), pool);
    return Status::Ok();
  });
}

// Copies n elements from src[src_off..] to dst[dst_off..] (same dtype).
inline void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    std::copy_n(src.data<std::string>() + src_off, n, dst.data<std::string>() + dst_off);
  } else {
    const size_t es = dtype_size(src.dtype());
    std::memcpy(static_cast<char*>(dst.raw_data()) + dst_off * es,
                static_cast<const char*>(src.raw_data()) + src_off * es, static_cast<size_t>(n) * es);
  }
}

// A float converted to T (numeric types and bool; "" for strings).
template <typename T>
T value_from_double(double v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Numpy-style bidirectional broadcast of two shapes.
inline Result<Shape> broadcast_shapes(const Shape& a, const Shape& b, const KernelContext& ctx) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace dlrt::cpu::layout
