// libFuzzer harness: raw bytes as they arrive on one connection of dlrt serve
// -> its request framing (apps/embed/serve/http_message.h): each request's head
// parsed and checked, its body read by its framing (Content-Length or strict
// chunked, trailers), the canonical copy httplib is handed made, then the next
// pipelined request from the bytes left, as the connection loop does. Checks
// what must hold of every request that is accepted: its canonical copy parses
// again to the same method, target and body, framed by Content-Length, and
// reading never consumes more bytes than the buffer holds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "embed/serve/http_message.h"

namespace {

constexpr uint64_t kMaxBody = 4096;

// The rest of the connection's bytes, read like a socket that then closes.
class BufferStream final : public httplib::Stream {
 public:
  explicit BufferStream(std::string_view bytes) : bytes_(bytes) {}
  size_t consumed() const { return at_; }

  bool is_readable() const override { return at_ < bytes_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, bytes_.size() - at_);
    std::memcpy(ptr, bytes_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, size_t size) override { return static_cast<ssize_t>(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 1; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 2; }
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int request = 0; request < 8 && !rest.empty(); ++request) {
    // A leading empty line before a request is ignored (RFC 9112 section 2.2), as the loop does.
    if (rest.substr(0, 2) == "\r\n") rest.remove_prefix(2);
    const size_t end = rest.find("\r\n\r\n");
    if (end == std::string_view::npos) return 0;
    dlrt::embed::http::RequestHead head;
    if (dlrt::embed::http::parse_head(rest.substr(0, end), kMaxBody, head)) return 0;
    BufferStream body_in(rest.substr(end + 4));
    std::string body;
    if (dlrt::embed::http::read_body(body_in, head, kMaxBody, body)) return 0;
    if (body.size() > kMaxBody) std::abort();
    const std::string copy = dlrt::embed::http::canonical_request(head, body);
    // The copy is a request this parser accepts, with the same meaning.
    const size_t copy_end = copy.find("\r\n\r\n");
    if (copy_end == std::string::npos) std::abort();
    dlrt::embed::http::RequestHead again;
    if (dlrt::embed::http::parse_head(std::string_view(copy).substr(0, copy_end), kMaxBody, again)) std::abort();
    if (again.method != head.method || again.target != head.target) std::abort();
    if (again.framing == dlrt::embed::http::RequestHead::Framing::kChunked) std::abort();
    BufferStream copy_in(std::string_view(copy).substr(copy_end + 4));
    std::string body_again;
    if (dlrt::embed::http::read_body(copy_in, again, kMaxBody, body_again) || body_again != body) std::abort();
    if (copy_in.consumed() != copy.size() - copy_end - 4) std::abort();  // nothing left over in the copy
    if (!head.keep_alive) return 0;
    rest.remove_prefix(end + 4 + body_in.consumed());
  }
  return 0;
}
