// The sentence-transformers module test folders (tests/models/st_modules,
// made by make_st_modules.py) and their torch references, for the tests that
// read them.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "embed/models/embedder.h"
#include "embed_test_util.h"

namespace dlrt::embed::testing {

inline std::filesystem::path st_dir() { return std::filesystem::path(DLRT_TEST_DIR) / "models" / "st_modules"; }

// stN_reference.json: every folder's reference outputs as that sentence-transformers version gives them.
inline nlohmann::json st_reference(int major) {
  return nlohmann::json::parse(slurp(st_dir() / ("st" + std::to_string(major) + "_reference.json")));
}

inline std::filesystem::path st_folder(int major, const std::string& name) {
  return st_dir() / ("st" + std::to_string(major) + "_" + name);
}

// Two CPU threads, as every test bounds its threads.
inline EmbedderOptions st_cpu_options() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  return o;
}

}  // namespace dlrt::embed::testing
