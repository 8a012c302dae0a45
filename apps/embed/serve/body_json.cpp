#include "embed/serve/body_json.h"

#include <cctype>

namespace dlrt::embed {

namespace {

using json = nlohmann::json;

bool is_hex4(std::string_view s, size_t at) {
  if (at + 4 > s.size()) return false;
  for (size_t k = at; k < at + 4; ++k)
    if (!std::isxdigit(static_cast<unsigned char>(s[k]))) return false;
  return true;
}

unsigned hex4(std::string_view s, size_t at) { return static_cast<unsigned>(std::stoul(std::string(s.substr(at, 4)), nullptr, 16)); }

// `body` with each \u escape of a lone surrogate (inside strings) replaced by
// \uFFFD; `changed` says whether there was one.
std::string replace_lone_surrogates(std::string_view body, bool& changed) {
  std::string out;
  out.reserve(body.size());
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (!in_string) {
      in_string = c == '"';
      out.push_back(c);
      continue;
    }
    if (c == '"') in_string = false;
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    if (body[i + 1] != 'u' || !is_hex4(body, i + 2)) {  // another escape: copied whole
      out.append(body.substr(i, 2));
      ++i;
      continue;
    }
    const unsigned u = hex4(body, i + 2);
    const bool high = u >= 0xD800 && u <= 0xDBFF, low = u >= 0xDC00 && u <= 0xDFFF;
    const bool paired = high && i + 12 <= body.size() && body.compare(i + 6, 2, "\\u") == 0 && is_hex4(body, i + 8) &&
                        hex4(body, i + 8) >= 0xDC00 && hex4(body, i + 8) <= 0xDFFF;
    if (paired) {
      out.append(body.substr(i, 12));
      i += 11;
    } else if (high || low) {
      out.append("\\uFFFD");
      changed = true;
      i += 5;
    } else {
      out.append(body.substr(i, 6));
      i += 5;
    }
  }
  return out;
}

// Keeps the parser's message of the first error; builds nothing.
struct ErrorOnly final : json::json_sax_t {
  std::string message;
  bool overflow = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) override {
    overflow = ex.id == 406;  // out_of_range.406: number overflow
    message = overflow ? "the body has a number out of range (" + token + " is beyond a double; numbers must be finite)"
                       : "the body is not valid JSON (UTF-8): stopped at byte " + std::to_string(position);
    return false;
  }
};

}  // namespace

std::string parse_body_json(std::string_view body, json& out) {
  out = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!out.is_discarded()) return {};
  bool changed = false;
  const std::string fixed = replace_lone_surrogates(body, changed);
  if (changed) {
    out = json::parse(fixed, nullptr, /*allow_exceptions=*/false);
    if (!out.is_discarded()) return {};
  }
  ErrorOnly sax;
  json::sax_parse(changed ? std::string_view(fixed) : body, &sax, json::input_format_t::json, /*strict=*/true);
  return sax.message.empty() ? "the body is not valid JSON (UTF-8)" : sax.message;
}

}  // namespace dlrt::embed
