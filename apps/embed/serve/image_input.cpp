// Image inputs of the embedding routes (see image_input.h).
#include "embed/serve/image_input.h"

#include <cctype>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace dlrt::embed {

using json = nlohmann::json;

namespace {

// The string an image input carries ("" when it has none).
const json* image_string(const json& v) {
  if (!v.is_object()) return nullptr;
  if (auto f = v.find("image"); f != v.end()) return &*f;
  auto t = v.find("type");
  auto u = v.find("image_url");
  if (t == v.end() || *t != "image_url" || u == v.end()) return nullptr;
  if (u->is_object()) {
    auto url = u->find("url");
    return url == u->end() ? nullptr : &*url;
  }
  return &*u;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool is_image_input(const json& v) { return image_string(v) != nullptr; }

bool decode_base64(std::string_view text, std::string* out) {
  out->clear();
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return false;
  out->reserve(text.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

std::optional<RequestError> read_image_input(const json& v, const std::string& where, size_t max_bytes,
                                             std::string* bytes) {
  const json* s = image_string(v);
  if (!s || !s->is_string())
    return RequestError{422, where + ": an image input's \"image\" (or \"image_url\".\"url\") must be a string: a data "
                                     "URL or base64"};
  return read_image_data(s->get_ref<const std::string&>(), where, max_bytes, bytes);
}

std::optional<RequestError> read_image_data(std::string_view text, const std::string& where, size_t max_bytes,
                                            std::string* bytes) {
  if (starts_with_ci(text, "http://") || starts_with_ci(text, "https://"))
    return RequestError{422, where + ": remote image URLs are not fetched (the server makes no outbound requests); "
                                     "send the image's bytes as base64 or a data URL (data:image/png;base64,...)"};
  if (starts_with_ci(text, "data:")) {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos || text.substr(0, comma).find(";base64") == std::string_view::npos)
      return RequestError{422, where + ": a data URL must be base64 (data:image/...;base64,...)"};
    text.remove_prefix(comma + 1);
  } else if (text.find("://") != std::string_view::npos) {
    return RequestError{422, where + ": only data URLs and base64 are accepted, not \"" +
                                 std::string(text.substr(0, text.find("://"))) + "://\" URLs"};
  }
  if (text.size() / 4 * 3 > max_bytes + 2)
    return RequestError{413, where + ": the image is over " + std::to_string(max_bytes >> 20) + " MiB"};
  if (!decode_base64(text, bytes)) return RequestError{422, where + ": the image is not valid base64"};
  if (bytes->empty()) return RequestError{422, where + ": the image is empty"};
  return std::nullopt;
}

}  // namespace dlrt::embed
