#include "core/lfs_pointer.h"

#include <fstream>

namespace dlrt {

namespace {
constexpr std::string_view kLfsPointerStart = "version https://git-lfs.github.com/spec/";
}  // namespace

bool is_lfs_pointer(std::string_view head) { return head.substr(0, kLfsPointerStart.size()) == kLfsPointerStart; }

bool file_is_lfs_pointer(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string head(kLfsPointerStart.size(), '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  return f.gcount() == static_cast<std::streamsize>(head.size()) && is_lfs_pointer(head);
}

std::string lfs_pointer_message(const std::string& what) {
  return what +
         " is a Git LFS pointer file, not the file itself: the repository was cloned without git-lfs; run "
         "`git lfs install && git lfs pull` in the clone (or download the file itself)";
}

}  // namespace dlrt
