// JSON on standard output for every command's --json.
#pragma once

#include <cstdio>

namespace dlrt::cli {

// Prints `j` and a newline. Bytes that are not UTF-8 (a file name, a string
// tensor, a vendor's message) are written as U+FFFD instead of aborting the
// dump, so that any input gives a valid document.
template <typename Json>
void print_json(const Json& j, int indent = 2) {
  std::printf("%s\n", j.dump(indent, ' ', false, Json::error_handler_t::replace).c_str());
}

}  // namespace dlrt::cli
