// One committed test folder per model kind, keyed by the kind's name (as
// model_kind_name gives it), for the server tests that serve every kind at
// once (route_kinds_test.cpp, tei_root_route_test.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace dlrt::embed::testing {

inline std::filesystem::path retrieval_models_dir() {
  return std::filesystem::path(DLRT_TEST_DIR) / "models" / "retrieval";
}

inline const std::map<std::string, std::filesystem::path>& kind_folders() {
  static const std::filesystem::path embed_data(DLRT_EMBED_TEST_DATA);
  static const std::map<std::string, std::filesystem::path> m = {
      {"dense", embed_data / "tiny_bert"},
      {"sparse", retrieval_models_dir() / "splade_tiny"},
      {"multi_vector", retrieval_models_dir() / "colbert_tiny"},
      {"cross_encoder", embed_data / "cross_encoder_tiny"},
      {"llm_reranker", retrieval_models_dir() / "qwen3_rerank"},
      {"clip", std::filesystem::path(DLRT_TEST_DIR) / "models" / "image" / "clip_tiny"},
  };
  return m;
}

}  // namespace dlrt::embed::testing
