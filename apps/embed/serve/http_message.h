// One HTTP/1.1 request read and checked per RFC 9112 before cpp-httplib sees
// it (apps/embed/http_server.cpp): the head is parsed here, the body is read
// whole by its framing (Content-Length, or chunked decoded strictly), bounded
// by max_body_bytes, and httplib is handed a canonical copy of exactly that
// request, framed by Content-Length. Whatever httplib leaves unread of that
// copy is dropped with it, so no body byte can be taken for the next request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <httplib.h>

namespace dlrt::embed::http {

// An answer the server gives itself before routing, closing the connection;
// status 0 when there is none.
struct Refusal {
  int status = 0;
  std::string message;
  explicit operator bool() const { return status != 0; }
};

// The reason phrase for the statuses a Refusal uses.
const char* reason_phrase(int status);

struct RequestHead {
  enum class Framing { kNone, kLength, kChunked };
  std::string method, target, version;
  // Field lines in order: the name as sent, the value without surrounding whitespace.
  std::vector<std::pair<std::string, std::string>> fields;
  Framing framing = Framing::kNone;
  uint64_t content_length = 0;  // kLength only
  bool keep_alive = true;       // the connection may carry another request after this one
  bool expect_continue = false;  // "Expect: 100-continue" on an HTTP/1.1 request with a body
};

// Parses the head of a request (request line and field lines, without the
// blank line that ends them) into `out`. Refused: a malformed request line or
// field line, a control character in a field value, a Host missing (HTTP/1.1),
// repeated or invalid, a Content-Length that is not one number or is over
// `max_body` (413), Transfer-Encoding with Content-Length, on HTTP/1.0, on
// GET or HEAD, or whose final coding is not chunked (400; codings before
// chunked: 501), or a body whose Content-Encoding is not one of gzip,
// deflate or identity (415; the field lower-cased in `out`, as httplib
// matches it).
Refusal parse_head(std::string_view head, uint64_t max_body, RequestHead& out);

// Reads the body `head` announces from `in` into `body`: Content-Length
// bytes, or chunked per RFC 9112 section 7.1 (chunk-size 1*HEXDIG, chunk
// extensions and trailer fields accepted and dropped, CRLF after every line
// and chunk, at most `max_body` bytes of data: 413 past it).
Refusal read_body(httplib::Stream& in, const RequestHead& head, uint64_t max_body, std::string& body);

// The request again, framed by Content-Length (none of Transfer-Encoding,
// Expect or the client's Connection; "Connection: close" when the
// connection ends after it, "Connection: Keep-Alive" for HTTP/1.0 that keeps it).
std::string canonical_request(const RequestHead& head, const std::string& body);

}  // namespace dlrt::embed::http
