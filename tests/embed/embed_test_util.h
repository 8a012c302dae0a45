// Helpers shared by the embedding tests: where the shared data is, reading files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dlrt::embed::testing {

// A fresh copy of the folder `from` at `to` (removed first), for variants of a test folder.
inline std::filesystem::path copy_folder(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::remove_all(to);
  std::filesystem::create_directories(to.parent_path());
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  return to;
}

// Writes `text` to `p` (bytes as given), creating its folder.
inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// ../shared relative to the repo root; DLRT_SHARED_DIR overrides.
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("DLRT_SHARED_DIR"); env && *env) return env;
  return std::filesystem::path(DLRT_TEST_DIR).parent_path().parent_path() / "shared";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::vector<std::string> out;
  std::ifstream f(p, std::ios::binary);
  std::string line;
  while (std::getline(f, line)) out.push_back(line);
  return out;
}

// The shared vocab file stores word-initial pieces as "\u2581piece" and
// continuations bare; BERT's layout is "piece" and "##piece" (same ids).
// Same rule as tests/embed/model_folder.py bert_layout().
inline std::vector<std::string> bert_layout(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  out.reserve(raw.size());
  const std::string kWordStart = "\xE2\x96\x81";
  for (const std::string& t : raw) {
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') out.push_back(t);
    else if (t.rfind(kWordStart, 0) == 0) out.push_back(t.substr(kWordStart.size()));
    else out.push_back("##" + t);
  }
  return out;
}

}  // namespace dlrt::embed::testing
