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

// The whole file in one allocation and one read. Errors: kIoError (names the
// path and the OS error) when it cannot be opened or read, or is a folder.
Result<std::string> read_whole_file(const std::string& path);

}  // namespace dlrt
