// Reading a model folder's small files (tokenizer.json, vocab.txt, the JSON
// configs, the service's TOML) whole, with a size limit: a file named in a
// folder may be a symbolic link to /dev/zero or a FIFO, which would otherwise
// be read until memory runs out, or block the reader (opening a FIFO waits for
// a writer).
//
// Thread-safety: free of shared state.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "dlrt/status.h"

namespace dlrt::embed {

// The largest of those files dlrt reads (tokenizer.json of the largest
// vocabularies is tens of MiB).
inline constexpr size_t kMaxFolderFileBytes = size_t{512} << 20;

// The contents of `path`, a regular file (after symbolic links) of at most
// `max_bytes`. kIoError when it cannot be read or is not a regular file (a
// FIFO, device or socket is refused before it is opened, and the file is
// opened non-blocking and checked again, so nothing here waits on one),
// kInvalidArgument when it is too large.
inline Result<std::string> read_folder_file(const std::string& path, size_t max_bytes = kMaxFolderFileBytes) {
  const auto not_regular = [&] {
    return IoError("cannot read " + path + ": not a regular file (a folder, a FIFO, a socket or a device)");
  };
  const auto os_error = [&] { return IoError("cannot read " + path + ": " + std::strerror(errno)); };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return os_error();
  if (!S_ISREG(st.st_mode)) return not_regular();
  // The path may have been replaced since the stat: O_NONBLOCK keeps the open
  // of a FIFO from waiting, and fstat checks what was opened.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return os_error();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return os_error();
  if (!S_ISREG(st.st_mode)) return not_regular();
  const auto size = static_cast<size_t>(st.st_size);
  if (size > max_bytes)
    return InvalidArgument(path + " holds " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(max_bytes) + " dlrt reads");
  std::string out(size, '\0');
  size_t used = 0;
  while (used < size) {
    const ssize_t n = ::read(fd, out.data() + used, size - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error();
    if (n == 0) return IoError("cannot read " + path + ": the file shrank while it was read");
    used += static_cast<size_t>(n);
  }
  // A Hugging Face clone made without git-lfs holds pointer files in place of large files.
  if (out.rfind("version https://git-lfs.github.com/spec/", 0) == 0)
    return InvalidModel(path + " is a Git LFS pointer file, not the file itself: the repository was cloned without "
                                  "git-lfs; run `git lfs install && git lfs pull` in the clone");
  return out;
}

}  // namespace dlrt::embed
