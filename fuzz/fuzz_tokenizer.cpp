// libFuzzer harness: bytes -> a tokenizer.json, and, when it loads, a few
// texts (including the input's own bytes as text) encoded with it, alone and
// as pairs, with offsets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "embed/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  auto tok = dlrt::embed::Tokenizer::from_json_string(json);
  if (!tok.ok()) return 0;
  dlrt::embed::Tokenizer::Offsets offsets;
  for (std::string_view text : {std::string_view("Hello, world! naïve café 東京 🙂"), std::string_view(json).substr(0, 256)}) {
    (void)tok->encode(text, 64, &offsets);
    (void)tok->encode_pair(text, "a second text", 16, &offsets);
  }
  return 0;
}
