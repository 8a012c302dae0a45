// Reading whole files without the copies of a stringstream.
//
// `ss << in.rdbuf()` grows its buffer by doubling and copies it again on
// .str(): for a 90 MB model that was most of a session create. This sizes the
// buffer once. (Model files themselves are parsed through a read buffer, see
// ir/onnx_import.cpp.)
//
// Thread-safety: free of shared state.
#pragma once

#include <cstddef>
#include <string>

#include "dlrt/status.h"

namespace dlrt {

// What read_whole_file reads at most: a regular file up to `max_bytes`
// (default: protobuf's 2 GiB limit), and a stream (a pipe, a FIFO, a device
// such as /dev/zero) up to kMaxStreamBytes, so that an endless one fails
// instead of exhausting memory.
inline constexpr size_t kMaxWholeFileBytes = 0x7fffffff;
inline constexpr size_t kMaxStreamBytes = size_t{256} << 20;

// The whole file in one allocation and one read. Errors: kIoError (names the
// path and the OS error) when it cannot be opened or read, or is a folder;
// kInvalidArgument when it holds (or a stream gives) more than the limit.
Result<std::string> read_whole_file(const std::string& path, size_t max_bytes = kMaxWholeFileBytes);

}  // namespace dlrt
