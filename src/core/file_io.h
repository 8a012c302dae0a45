// Reading whole files without the copies of a stringstream.
//
// A model file can be hundreds of megabytes: `ss << in.rdbuf()` grows its
// buffer by doubling and copies it again on .str(), which was most of a
// session create for a 90 MB model. These helpers size the buffer once.
//
// Thread-safety: free of shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "dlrt/status.h"

namespace dlrt {

// The whole file in one allocation and one read. Errors: kIoError (names the
// path and the OS error) when it cannot be opened or read, or is a folder.
Result<std::string> read_whole_file(const std::string& path);

// A read-only view of a whole file, mapped into memory (the page cache's pages,
// no copy); falls back to reading the file where mapping is not possible (a
// pipe, a special file). Move-only; unmaps on destruction.
class FileView {
 public:
  static Result<FileView> open(const std::string& path);
  FileView(FileView&& o) noexcept;
  FileView& operator=(FileView&& o) noexcept;
  FileView(const FileView&) = delete;
  FileView& operator=(const FileView&) = delete;
  ~FileView();

  std::string_view bytes() const { return {data_, size_}; }

 private:
  FileView() = default;
  void release();

  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;   // non-null when mapped
  std::string fallback_;  // the contents when not mapped
};

}  // namespace dlrt
