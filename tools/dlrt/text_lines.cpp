// Texts one per line (text_lines.h).
#include "text_lines.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_args.h"

namespace dlrt::cli {
namespace {

constexpr size_t kMaxLineBytes = size_t{16} << 20;
constexpr size_t kMaxFileBytes = size_t{1} << 30;

}  // namespace

Status read_lines(std::istream& in, const std::string& name, std::vector<std::string>& out) {
  std::string line;
  size_t total = 0;
  char buf[1 << 16];
  auto finish_line = [&] {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    line.clear();
  };
  while (in) {
    in.read(buf, sizeof buf);
    const size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    total += got;
    if (total > kMaxFileBytes)
      return InvalidArgument(name + " gives more than " + std::to_string(kMaxFileBytes) +
                             " bytes (an endless stream such as /dev/zero?); split it into smaller files");
    for (size_t i = 0; i < got; ++i) {
      if (buf[i] == '\n') {
        finish_line();
        continue;
      }
      line.push_back(buf[i]);
      if (line.size() > kMaxLineBytes)
        return InvalidArgument(name + ": line " + std::to_string(out.size() + 1) + " is longer than " +
                               std::to_string(kMaxLineBytes) + " bytes");
    }
  }
  if (in.bad()) return IoError("cannot read " + name);
  if (!line.empty()) finish_line();
  return Status::Ok();
}

int read_text_file(const std::string& command, const std::string& path, std::vector<std::string>& out) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return usage_error(command, "--file " + path + " is a folder");
    errno = 0;
    file.open(path, std::ios::binary);
    if (!file) {
      const int err = errno;
      std::fprintf(stderr, "dlrt %s: error: cannot read --file %s: %s\n", command.c_str(), path.c_str(),
                   err ? std::strerror(err) : "cannot open it");
      return kExitUsage;
    }
    in = &file;
  }
  Status read = read_lines(*in, path == "-" ? "standard input" : path, out);
  if (!read.ok()) {
    std::fprintf(stderr, "dlrt %s: error: %s\n", command.c_str(), read.message().c_str());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace dlrt::cli
