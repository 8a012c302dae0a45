// Reading a model folder's small files (tokenizer.json, vocab.txt, the JSON
// configs, the service's TOML) whole, with a size limit: a file named in a
// folder may be a symbolic link to /dev/zero or a FIFO, which would otherwise
// be read until memory runs out.
//
// Thread-safety: free of shared state.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

#include "dlrt/status.h"

namespace dlrt::embed {

// The largest of those files dlrt reads (tokenizer.json of the largest
// vocabularies is tens of MiB).
inline constexpr size_t kMaxFolderFileBytes = size_t{512} << 20;

// The contents of `path`, a regular file (after symbolic links) of at most
// `max_bytes`. kIoError when it cannot be read or is not a regular file,
// kInvalidArgument when it is too large.
inline Result<std::string> read_folder_file(const std::string& path, size_t max_bytes = kMaxFolderFileBytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) return IoError("cannot read " + path + ": " + ec.message());
  if (!fs::is_regular_file(status))
    return IoError("cannot read " + path + ": not a regular file (a folder, a FIFO or a device)");
  const auto size = fs::file_size(path, ec);
  if (ec) return IoError("cannot read " + path + ": " + ec.message());
  if (size > max_bytes)
    return InvalidArgument(path + " holds " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(max_bytes) + " dlrt reads");
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot read " + path);
  std::string out(static_cast<size_t>(size), '\0');
  f.read(out.data(), static_cast<std::streamsize>(out.size()));
  if (f.bad() || static_cast<size_t>(f.gcount()) != out.size()) return IoError("cannot read " + path);
  // A Hugging Face clone made without git-lfs holds pointer files in place of large files.
  if (out.rfind("version https://git-lfs.github.com/spec/", 0) == 0)
    return InvalidModel(path + " is a Git LFS pointer file, not the file itself: the repository was cloned without "
                                  "git-lfs; run `git lfs install && git lfs pull` in the clone");
  return out;
}

}  // namespace dlrt::embed
