// libFuzzer harness: bytes -> one config file of a model folder
// (apps/embed/models/folder_check.h): the first byte picks the file (modules.json,
// config.json, sentence_bert_config.json, tokenizer_config.json,
// 1_Pooling/config.json), the rest is its text, parsed and checked as
// Embedder::create checks it; for the pooling config also against a width.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "embed/models/folder_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string file = dlrt::embed::kFolderConfigFiles[data[0] % dlrt::embed::kFolderConfigFileCount];
  const nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(data) + 1,
                                                 reinterpret_cast<const char*>(data) + size, nullptr, false);
  if (j.is_discarded()) return 0;
  const dlrt::Status s = dlrt::embed::check_config_json(file, file, j);
  if (s.ok() && j.is_object() && file == "1_Pooling/config.json")
    (void)dlrt::embed::check_pooling_dimension(file, j, 384);
  return 0;
}
