#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

// Reads to the end of the file; `hint` is the expected size (0 when unknown).
Result<std::string> read_fd(int fd, size_t hint, const std::string& path) {
  std::string out;
  out.resize(hint > 0 ? hint : 64 * 1024);
  size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
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

Result<std::string> read_whole_file(const std::string& path) {
  Fd f;
  struct stat st {};
  DLRT_RETURN_IF_ERROR(open_regular(path, f, st));
  // One spare byte so that a file of exactly st_size bytes ends with one read
  // returning 0 instead of a doubling of the buffer.
  return read_fd(f.fd, S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : 0, path);
}

}  // namespace dlrt
