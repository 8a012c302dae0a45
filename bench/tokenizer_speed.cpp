// Tokenizer speed (issue 38): encodes every line of a JSON array of texts with
// a tokenizer.json, single thread, several rounds, and prints tokens/s (with
// and without offsets). bench/tokenizer_speed.py runs it next to Hugging
// Face's tokenizers on the same lines. Not part of the test suite.
//   dlrt_tokenizer_speed TOKENIZER.json LINES.json [ROUNDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER.json LINES.json [ROUNDS]\n", argv[0]);
    return 2;
  }
  auto tok = dlrt::embed::Tokenizer::from_json_file(argv[1]);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().to_string().c_str());
    return 1;
  }
  auto text = dlrt::embed::read_folder_file(argv[2]);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().to_string().c_str());
    return 1;
  }
  auto lines = nlohmann::json::parse(*text).get<std::vector<std::string>>();
  int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  size_t bytes = 0;
  for (const auto& l : lines) bytes += l.size();
  for (int with_offsets = 0; with_offsets < 2; ++with_offsets) {
    double best = 1e30;
    size_t tokens = 0;
    dlrt::embed::Tokenizer::Offsets offsets;
    for (int r = 0; r < rounds; ++r) {
      tokens = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (const auto& l : lines) tokens += tok->encode(l, 0, with_offsets ? &offsets : nullptr).ids.size();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    std::printf("dlrt %s: %zu lines, %zu tokens, %.1f ms, %.0f tokens/s, %.1f MB/s%s\n", tok->family().c_str(),
                lines.size(), tokens, best * 1e3, tokens / best, bytes / best / 1e6, with_offsets ? " (with offsets)" : "");
  }
  return 0;
}
