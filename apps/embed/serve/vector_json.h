// Vectors as JSON text, as the embedding routes write them (server_routes.cpp,
// server_cohere_embed.cpp): float32 numbers at their shortest round-trip text,
// base64 of their bytes, or a quantized vector's integers (output_type.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "embed/models/output_type.h"

namespace dlrt::embed {

// `[v0,v1,...]`, each value as server_util::append_json_float.
void append_vector(std::string& out, const std::vector<float>& v);
// `"..."`: standard base64 (padded) of `bytes`.
void append_base64_bytes(std::string& out, std::string_view bytes);
// `"..."`: base64 of the vector's little-endian float32 bytes (OpenAI's "base64").
void append_base64(std::string& out, const std::vector<float>& v);
// A quantized vector's `n` bytes: its numbers (quantized_value), or base64 of the bytes.
void append_quantized(std::string& out, const uint8_t* bytes, size_t n, OutputType type, bool base64);

}  // namespace dlrt::embed
