// Texts one per line, from a file or standard input: `dlrt embed --file` and
// `dlrt rerank --file`.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::cli {

// Appends the lines of `in` (without "\n" or "\r\n") to `out`; `name` names
// the source in errors. A line over 16 MiB, or over 1 GiB in all (an endless
// stream such as /dev/zero), is kInvalidArgument rather than a read until
// memory runs out.
Status read_lines(std::istream& in, const std::string& name, std::vector<std::string>& out);

// read_lines of PATH ('-': standard input). Returns kExitOk, or prints
// "dlrt COMMAND: error: ..." and returns kExitUsage (a folder, a file that
// cannot be read, a limit passed).
int read_text_file(const std::string& command, const std::string& path, std::vector<std::string>& out);

}  // namespace dlrt::cli
