#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace dlrt {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status os_error(const std::string& what, const std::string& path) {
  return IoError(what + " '" + path + "': " + std::strerror(errno));
}

// Opens `path` for reading and checks that it is not a folder.
Status open_regular(const std::string& path, Fd& f, struct stat& st) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return os_error("cannot open", path);
  if (::fstat(f.fd, &st) != 0) return os_error("cannot stat", path);
  if (S_ISDIR(st.st_mode)) return IoError("'" + path + "' is a folder, not a file");
  return Status::Ok();
}

Status too_large(const std::string& path, size_t max_bytes, bool stream) {
  return InvalidArgument("'" + path + "' " + (stream ? "gives" : "holds") + " more than " + std::to_string(max_bytes) +
                         " bytes" + (stream ? " (an endless stream such as /dev/zero?); save it to a file" : "") +
                         ": refusing to read it whole");
}

// Reads to the end of the file; `hint` is the expected size (0 when unknown),
// at most `max_bytes`.
Result<std::string> read_fd(int fd, size_t hint, size_t max_bytes, const std::string& path) {
  std::string out;
  out.resize(std::min(hint > 0 ? hint : 64 * 1024, max_bytes + 1));
  size_t used = 0;
  for (;;) {
    if (used > max_bytes) return too_large(path, max_bytes, hint == 0);
    if (used == out.size()) out.resize(std::min(out.size() * 2, max_bytes + 1));
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_error("cannot read", path);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  out.resize(used);
  return out;
}

}  // namespace

Result<std::string> read_whole_file(const std::string& path, size_t max_bytes) {
  Fd f;
  struct stat st {};
  DLRT_RETURN_IF_ERROR(open_regular(path, f, st));
  if (!S_ISREG(st.st_mode)) return read_fd(f.fd, 0, std::min(max_bytes, kMaxStreamBytes), path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large(path, max_bytes, false);
  // One spare byte so that a file of exactly st_size bytes ends with one read
  // returning 0 instead of a doubling of the buffer.
  return read_fd(f.fd, static_cast<size_t>(st.st_size) + 1, max_bytes, path);
}

}  // namespace dlrt
