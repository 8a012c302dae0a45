// Git LFS pointer files: what a Hugging Face repository cloned without git-lfs
// holds in place of each large file (model.onnx, its external data): a few
// lines starting "version https://git-lfs.github.com/spec/v1". Loading one as
// a model fails; these name the cause and the fix instead of a parse error.
#pragma once

#include <string>
#include <string_view>

namespace dlrt {

// True when `head` (a file's first bytes) starts like a Git LFS pointer file.
bool is_lfs_pointer(std::string_view head);

// True when the file at `path` starts like a Git LFS pointer file.
bool file_is_lfs_pointer(const std::string& path);

// "WHAT is a Git LFS pointer file, not the file itself: ... run `git lfs pull`".
std::string lfs_pointer_message(const std::string& what);

}  // namespace dlrt
