// Image inputs of the embedding routes (/v1/embeddings, /embed): an input
// given as {"image": S} (Jina's form) or {"type": "image_url", "image_url":
// {"url": S}} (OpenAI's content part, as vLLM takes it), where S is a data
// URL ("data:image/png;base64,...") or bare base64. A remote URL is refused,
// never fetched: the server makes no outbound requests.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "embed/serve/request.h"

namespace dlrt::embed {

// Whether `v` is an image input (an object of one of the two forms above).
bool is_image_input(const nlohmann::json& v);

// The image's encoded bytes from input `v` (`where` names it in messages):
// a 422 for a remote or other URL, bad base64 or an empty image; a 413 when
// the decoded bytes would pass `max_bytes`.
std::optional<RequestError> read_image_input(const nlohmann::json& v, const std::string& where, size_t max_bytes,
                                             std::string* bytes);

// The same for the string an input carries (a data URL or bare base64; Cohere's "images").
std::optional<RequestError> read_image_data(std::string_view text, const std::string& where, size_t max_bytes,
                                            std::string* bytes);

// Standard base64 (RFC 4648 section 4; padding optional, no other characters);
// false for anything else.
bool decode_base64(std::string_view text, std::string* out);

}  // namespace dlrt::embed
