// libFuzzer harness: bytes -> dlrt serve's request parsing (the JSON body, body_json.h, of
// /v1/embeddings, /embed and /tokenize, apps/embed/serve/handlers.h) and the
// finishing of a vector with what it asked for.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "embed/models/output_type.h"
#include "embed/serve/body_json.h"
#include "embed/serve/handlers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  if (!dlrt::embed::parse_body_json(body, j).empty()) return 0;
  for (auto kind : {dlrt::embed::RequestKind::kOpenAIEmbeddings, dlrt::embed::RequestKind::kTeiEmbed,
                    dlrt::embed::RequestKind::kTeiEmbedSparse, dlrt::embed::RequestKind::kTeiTokenize}) {
    dlrt::embed::EmbedRequest req;
    if (dlrt::embed::parse_embed_request(j, kind, 256, &req)) continue;
    std::vector<float> v(8, 0.5f);
    dlrt::embed::finish_vector(v, req.dimensions, req.normalize.value_or(true));
  }
  return 0;
}
