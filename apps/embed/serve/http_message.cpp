#include "embed/serve/http_message.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

namespace dlrt::embed::http {
namespace {

constexpr size_t kMaxChunkLine = 4096;       // chunk-size and its extensions
constexpr size_t kMaxTrailers = 64 * 1024;   // the trailer section, as a head
constexpr size_t kReadSlice = 64 * 1024;     // body bytes read (and grown) at a time

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}
bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// A control character a field value may not hold (RFC 9110 section 5.5: only
// HTAB, visible characters, SP and obs-text).
bool is_value_ctl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && u != '\t') || u == 0x7f;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view trim_ows(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Calls f(item) for each non-empty item of a comma-separated field value,
// without surrounding whitespace.
template <typename F>
void for_each_item(std::string_view value, F f) {
  for (size_t from = 0; from <= value.size();) {
    size_t comma = value.find(',', from);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view item = trim_ows(value.substr(from, comma - from));
    if (!item.empty()) f(item);
    from = comma + 1;
  }
}

Refusal bad_head(const std::string& what) { return {400, "malformed request head: " + what}; }
Refusal too_large(uint64_t max_body) {
  return {413, "the request body is larger than " + std::to_string(max_body) + " bytes (max_body_bytes)"};
}
Refusal unreadable_body() {
  return {400, "the request body could not be read: the connection closed, or was silent for the read timeout"};
}

// uri-host [ ":" port ] (RFC 9112 section 3.2, RFC 3986 section 3.2.2); an empty host is allowed.
bool valid_host(std::string_view h) {
  auto unreserved_or_sub_delim = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-._~!$&'()*+,;=", c) != nullptr;
  };
  size_t i = 0;
  if (!h.empty() && h.front() == '[') {  // IP-literal
    const size_t close = h.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : h.substr(1, close - 1))
      if (c != ':' && !unreserved_or_sub_delim(c)) return false;
    i = close + 1;
  } else {  // IPv4address or reg-name
    while (i < h.size() && h[i] != ':') {
      if (h[i] == '%') {
        if (i + 2 >= h.size() || !is_hex(h[i + 1]) || !is_hex(h[i + 2])) return false;
        i += 3;
        continue;
      }
      if (!unreserved_or_sub_delim(h[i])) return false;
      ++i;
    }
  }
  if (i == h.size()) return true;
  if (h[i] != ':') return false;
  const std::string_view port = h.substr(i + 1);
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// method SP request-target SP HTTP-version, each part strict (RFC 9112 section 3).
Refusal parse_request_line(std::string_view line, RequestHead& out) {
  if (line.find_first_of("\r\n") != std::string_view::npos) return bad_head("a bare CR or LF in the request line");
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return bad_head("the request line is not method, request-target and HTTP version separated by single spaces");
  const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                         version = line.substr(sp2 + 1);
  if (!is_token(method)) return bad_head("the method is not a token");
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) == 0x7f;
      }))
    return bad_head("the request-target is empty or has whitespace or a control character");
  const bool well_formed = version.size() == 8 && version.compare(0, 5, "HTTP/") == 0 &&
                           std::isdigit(static_cast<unsigned char>(version[5])) && version[6] == '.' &&
                           std::isdigit(static_cast<unsigned char>(version[7]));
  if (!well_formed) return bad_head("the HTTP version is not HTTP/<digit>.<digit>");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return {505, std::string(version) + " is not supported: use HTTP/1.1 (or HTTP/1.0)"};
  out.method = method;
  out.target = target;
  out.version = version;
  return {};
}

// name ":" OWS value OWS, per RFC 9112 section 5 (no obs-fold) and RFC 9110 section 5.5.
Refusal parse_field_line(std::string_view line, std::string_view& name, std::string_view& value) {
  if (line.find_first_of("\r\n") != std::string_view::npos) return bad_head("a bare CR or LF in a header line");
  if (line.front() == ' ' || line.front() == '\t')
    return bad_head("a header line starting with whitespace (obsolete line folding)");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bad_head("a header line without a colon");
  name = line.substr(0, colon);
  if (!is_token(name)) return bad_head("a header name that is empty or has whitespace or a character outside a token");
  value = trim_ows(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), is_value_ctl))
    return bad_head("a control character (NUL, CR, LF or another) in the value of " + std::string(name));
  return {};
}

enum class Line { kOk, kGone, kBare, kTooLong };

// A line ended by CRLF (without it), of at most `max` bytes.
Line read_line(httplib::Stream& in, size_t max, std::string& line) {
  line.clear();
  for (char c;;) {
    if (in.read(&c, 1) != 1) return Line::kGone;
    if (c == '\n') return Line::kBare;
    if (c == '\r') {
      if (in.read(&c, 1) != 1) return Line::kGone;
      return c == '\n' ? Line::kOk : Line::kBare;
    }
    if (line.size() >= max) return Line::kTooLong;
    line += c;
  }
}

Refusal line_refusal(Line l, const char* what) {
  switch (l) {
    case Line::kOk: return {};
    case Line::kGone: return unreadable_body();
    case Line::kBare: return {400, std::string("malformed chunked body: ") + what + " not ended by CRLF"};
    case Line::kTooLong: return {400, std::string("malformed chunked body: ") + what + " is too long"};
  }
  return {};
}

// Appends exactly n bytes from `in` to `body`.
bool read_exactly(httplib::Stream& in, uint64_t n, std::string& body) {
  while (n > 0) {
    const size_t slice = static_cast<size_t>(std::min<uint64_t>(n, kReadSlice));
    const size_t at = body.size();
    body.resize(at + slice);
    size_t got = 0;
    while (got < slice) {
      const ssize_t r = in.read(body.data() + at + got, slice - got);
      if (r <= 0) {
        body.resize(at + got);
        return false;
      }
      got += static_cast<size_t>(r);
    }
    n -= slice;
  }
  return true;
}

Refusal read_chunked(httplib::Stream& in, uint64_t max_body, std::string& body) {
  std::string line;
  for (;;) {
    if (Refusal r = line_refusal(read_line(in, kMaxChunkLine, line), "a chunk-size line")) return r;
    // chunk-size = 1*HEXDIG, then chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ).
    size_t digits = 0;
    uint64_t size = 0;
    for (; digits < line.size() && is_hex(line[digits]); ++digits) {
      if (size > (std::numeric_limits<uint64_t>::max() >> 4)) return too_large(max_body);
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[digits])));
      size = size * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (digits == 0) return {400, "malformed chunked body: a chunk size that is not hexadecimal digits"};
    const std::string_view ext = trim_ows(std::string_view(line).substr(digits));
    if (!ext.empty() && (ext.front() != ';' || std::any_of(ext.begin(), ext.end(), is_value_ctl)))
      return {400, "malformed chunked body: something other than a chunk extension after the chunk size"};
    if (size == 0) break;
    if (size > max_body - body.size()) return too_large(max_body);
    if (!read_exactly(in, size, body)) return unreadable_body();
    char crlf[2];
    for (char& c : crlf)
      if (in.read(&c, 1) != 1) return unreadable_body();
    if (crlf[0] != '\r' || crlf[1] != '\n') return {400, "malformed chunked body: chunk data not followed by CRLF"};
  }
  // The trailer section: field lines (checked, then dropped), then an empty line.
  size_t trailer_bytes = 0;
  for (;;) {
    const Line l = read_line(in, kMaxTrailers - std::min(trailer_bytes, kMaxTrailers), line);
    if (l == Line::kTooLong) return {431, "the trailer section of the chunked body is over 64 KiB"};
    if (Refusal r = line_refusal(l, "a trailer line")) return r;
    if (line.empty()) return {};
    trailer_bytes += line.size() + 2;
    std::string_view name, value;
    if (Refusal r = parse_field_line(line, name, value)) {
      r.message.replace(0, std::strlen("malformed request head"), "malformed trailer field");
      return r;
    }
  }
}

}  // namespace

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

Refusal parse_head(std::string_view head, uint64_t max_body, RequestHead& out) {
  out = RequestHead{};
  size_t at = head.find("\r\n");
  if (Refusal r = parse_request_line(head.substr(0, at), out)) return r;
  std::string length;  // the Content-Length value seen, leading zeros dropped
  bool has_te = false, close = false, keep_alive = false, expect_continue = false;
  std::vector<std::string_view> codings, content_codings;
  size_t content_encoding_fields = 0;
  std::vector<std::string_view> hosts;
  while (at != std::string_view::npos) {
    const size_t begin = at + 2;
    at = head.find("\r\n", begin);
    const std::string_view line = head.substr(begin, at == std::string_view::npos ? std::string_view::npos : at - begin);
    if (line.empty()) continue;
    std::string_view name, value;
    if (Refusal r = parse_field_line(line, name, value)) return r;
    out.fields.emplace_back(name, value);
    if (iequals(name, "Host")) {
      hosts.push_back(value);
    } else if (iequals(name, "Transfer-Encoding")) {
      has_te = true;
      for_each_item(value, [&](std::string_view item) { codings.push_back(trim_ows(item.substr(0, item.find(';')))); });
    } else if (iequals(name, "Connection")) {
      for_each_item(value, [&](std::string_view token) {
        close = close || iequals(token, "close");
        keep_alive = keep_alive || iequals(token, "keep-alive");
      });
    } else if (iequals(name, "Content-Encoding")) {
      ++content_encoding_fields;
      for_each_item(value, [&](std::string_view item) { content_codings.push_back(item); });
    } else if (iequals(name, "Expect")) {
      expect_continue = expect_continue || iequals(value, "100-continue");
    } else if (iequals(name, "Content-Length")) {
      size_t from = 0;
      for (;;) {  // a list "17, 17" is one length repeated; anything else is refused
        const size_t comma = value.find(',', from);
        std::string_view item =
            trim_ows(value.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
        if (item.empty() || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return bad_head("a Content-Length that is not a number");
        while (item.size() > 1 && item.front() == '0') item.remove_prefix(1);
        if (length.empty()) length = std::string(item);
        else if (length != item) return bad_head("Content-Length headers with different values");
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
    }
  }
  if (has_te && !length.empty()) return bad_head("both Transfer-Encoding and Content-Length");
  if (hosts.size() > 1) return bad_head("more than one Host header");
  if (hosts.empty() && out.version == "HTTP/1.1") return bad_head("no Host header (HTTP/1.1 requires one)");
  if (!hosts.empty() && !valid_host(hosts.front())) return bad_head("a Host header that is not host[:port]");
  if (has_te) {
    // RFC 9112 section 6.1 and 6.3: chunked must be the final coding, else the length is unknown.
    if (out.version == "HTTP/1.0") return bad_head("Transfer-Encoding on an HTTP/1.0 request");
    if (codings.empty() || !iequals(codings.back(), "chunked"))
      return bad_head("a Transfer-Encoding whose final coding is not chunked");
    if (codings.size() > 1) return {501, "transfer codings other than chunked are not supported"};
    if (out.method == "GET" || out.method == "HEAD") return bad_head("Transfer-Encoding on a " + out.method + " request");
    out.framing = RequestHead::Framing::kChunked;
  } else if (!length.empty()) {
    if (length.size() > 19 || std::stoull(length) > max_body) return too_large(max_body);
    out.content_length = std::stoull(length);
    if (out.content_length > 0) out.framing = RequestHead::Framing::kLength;
  }
  out.keep_alive = !close && (out.version == "HTTP/1.1" || keep_alive);
  // httplib decodes one coding, named exactly: anything else would be read as identity (RFC 9110 section 15.5.16: 415).
  if (content_encoding_fields > 0 && out.framing != RequestHead::Framing::kNone) {
    const bool one = content_encoding_fields == 1 && content_codings.size() == 1;
    const std::string_view c = one ? content_codings.front() : std::string_view();
    if (!one || !(iequals(c, "gzip") || iequals(c, "deflate") || iequals(c, "identity")))
      return {415, "the Content-Encoding is not supported: send the body as is, or with one of gzip or deflate"};
    for (auto& [name, value] : out.fields)
      if (iequals(name, "Content-Encoding"))
        std::transform(value.begin(), value.end(), value.begin(),
                       [](char ch) { return static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); });
  }
  out.expect_continue = expect_continue && out.version == "HTTP/1.1" && out.framing != RequestHead::Framing::kNone;
  return {};
}

Refusal read_body(httplib::Stream& in, const RequestHead& head, uint64_t max_body, std::string& body) {
  body.clear();
  switch (head.framing) {
    case RequestHead::Framing::kNone: return {};
    case RequestHead::Framing::kLength:
      return read_exactly(in, head.content_length, body) ? Refusal{} : unreadable_body();
    case RequestHead::Framing::kChunked: return read_chunked(in, max_body, body);
  }
  return {};
}

std::string canonical_request(const RequestHead& head, const std::string& body) {
  std::string out;
  out.reserve(256 + body.size());
  out.append(head.method).append(" ").append(head.target).append(" ").append(head.version).append("\r\n");
  for (const auto& [name, value] : head.fields) {
    if (iequals(name, "Transfer-Encoding") || iequals(name, "Content-Length") || iequals(name, "Connection") ||
        iequals(name, "Expect"))
      continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
  if (!head.keep_alive) out += "Connection: close\r\n";
  else if (head.version == "HTTP/1.0") out += "Connection: Keep-Alive\r\n";
  out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n").append(body);
  return out;
}

}  // namespace dlrt::embed::http
