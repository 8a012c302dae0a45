// Vectors as JSON text (see vector_json.h).
#include "embed/serve/vector_json.h"

#include <cstring>

#include "embed/serve/server_util.h"

namespace dlrt::embed {

void append_vector(std::string& out, const std::vector<float>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    server_util::append_json_float(out, v[i]);
  }
  out += ']';
}

void append_base64_bytes(std::string& out, std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out += '"';
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (size_t rest = bytes.size() - i) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2) n |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  out += '"';
}

void append_base64(std::string& out, const std::vector<float>& v) {
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());  // little-endian float32 (x86, arm)
  append_base64_bytes(out, bytes);
}

void append_quantized(std::string& out, const uint8_t* bytes, size_t n, OutputType type, bool base64) {
  if (base64) return append_base64_bytes(out, std::string_view(reinterpret_cast<const char*>(bytes), n));
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += std::to_string(quantized_value(type, bytes[i]));
  }
  out += ']';
}

}  // namespace dlrt::embed
