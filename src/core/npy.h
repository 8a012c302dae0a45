// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Supported: little-endian (or byte-order-free) C-order arrays of float16,
// float32, float64, int8..int64, uint8..uint64, bool and text ('<U' of up to
// 2^20 characters: string tensors, UTF-8 inside dlrt), including 0-d arrays.
// Everything else (Fortran order, big-endian data, other dtypes such as
// bytes or objects) is rejected with a Status that names the file and the
// problem; malformed input never crashes.
//
// Thread-safety: all functions are free of shared state.
#pragma once

#include <string>
#include <string_view>

#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt {

// Parses the bytes of a .npy file. `what` names the source in messages
// (usually the path). Errors: kInvalidArgument for a malformed or unsupported
// file.
Result<Tensor> parse_npy(std::string_view bytes, const std::string& what = "npy data");

// Reads a .npy file. Errors: kIoError when it cannot be read, otherwise as parse_npy.
Result<Tensor> read_npy_file(const std::string& path);

// Serialises `t` as a version 1.0 .npy file (version 2.0 when the header
// needs it); strings as '<U' text as wide as the longest. Errors:
// kUnsupported for dtypes .npy cannot hold here (bfloat16, the narrow types),
// kInvalidArgument for an invalid tensor or a string that is not UTF-8.
Result<std::string> serialize_npy(const Tensor& t);

// Writes `t` to `path` (replacing it). Errors: as serialize_npy, kIoError on write failure.
Status write_npy_file(const std::string& path, const Tensor& t);

// NumPy's dtype descriptor for `t` ("<f4", "|b1", ...); empty when none exists.
std::string npy_descr(DType t);

}  // namespace dlrt
