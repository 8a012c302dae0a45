#include "embed/http_server.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace dlrt::embed {
namespace {

int to_ms(time_t sec, time_t usec) {
  const long long ms = static_cast<long long>(sec) * 1000 + static_cast<long long>(usec) / 1000;
  return static_cast<int>(std::clamp<long long>(ms, 0, 24LL * 3600 * 1000));
}

// Waits up to `timeout_ms` for `events` on `sock`: > 0 ready, 0 timed out, < 0 error.
int wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && (p.revents & POLLNVAL)) return -1;
    return n;
  }
}

void ip_and_port(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host.data(), host.size(), serv.data(),
                    serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host.data();
  port = std::atoi(serv.data());
}

constexpr size_t kMaxHead = 64 * 1024;  // request line and header fields
constexpr int kHeadGraceMs = 100;       // a head slower than this counts as pending

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

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

// What is wrong with a request head (up to and without its blank line) per
// RFC 9112, or "" when nothing is. The request line is left to httplib.
std::string head_error(std::string_view head) {
  std::string length;  // the Content-Length value seen, leading zeros dropped
  bool chunked_or_coded = false;
  size_t at = head.find("\r\n");
  if (head.substr(0, at).find_first_of("\r\n") != std::string_view::npos) return "a bare CR or LF in the request line";
  while (at != std::string_view::npos) {
    const size_t begin = at + 2;
    at = head.find("\r\n", begin);
    const std::string_view line = head.substr(begin, at == std::string_view::npos ? std::string_view::npos : at - begin);
    if (line.empty()) continue;
    if (line.find_first_of("\r\n") != std::string_view::npos) return "a bare CR or LF in a header line";
    if (line.front() == ' ' || line.front() == '\t')
      return "a header line starting with whitespace (obsolete line folding)";
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return "a header line without a colon";
    const std::string_view name = line.substr(0, colon);
    if (name.empty() || !std::all_of(name.begin(), name.end(), is_tchar))
      return "a header name that is empty or has whitespace or a character outside a token";
    const std::string_view value = trim_ows(line.substr(colon + 1));
    if (iequals(name, "Transfer-Encoding")) chunked_or_coded = true;
    if (!iequals(name, "Content-Length")) continue;
    size_t from = 0;
    for (;;) {  // a list "17, 17" is one length repeated; anything else is refused
      const size_t comma = value.find(',', from);
      std::string_view item = trim_ows(value.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
      if (item.empty() || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return "a Content-Length that is not a number";
      while (item.size() > 1 && item.front() == '0') item.remove_prefix(1);
      if (length.empty()) length = std::string(item);
      else if (length != item) return "Content-Length headers with different values";
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
  }
  if (chunked_or_coded && !length.empty()) return "both Transfer-Encoding and Content-Length";
  return {};
}

// Writes a whole error answer and nothing else (the connection closes after).
void send_error(socket_t sock, int status, const char* reason, const std::string& message) {
  const std::string body = "{\"error\":{\"message\":\"" + message + "\",\"type\":\"invalid_request_error\",\"code\":" +
                           std::to_string(status) + "}}";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t sent = 0; sent < out.size();) {
    if (wait_for(sock, POLLOUT, 1000) <= 0) return;
    const ssize_t n = ::send(sock, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// One connection's socket with a read buffer that lives as long as the
// connection, so whatever was read past the end of one request is the start
// of the next.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(socket_t sock, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool buffered() const { return begin_ < end_; }
  std::string_view pending() const { return {buffer_.data() + begin_, end_ - begin_}; }

  // Reads what the socket has into the buffer (growing it up to kMaxHead):
  // > 0 bytes read, 0 the peer closed, < 0 an error.
  ssize_t fill() {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) buffer_.resize(std::min(buffer_.size() * 2, kMaxHead));
    if (end_ == buffer_.size()) return -1;
    const ssize_t n = receive(buffer_.data() + end_, buffer_.size() - end_);
    if (n > 0) end_ += static_cast<size_t>(n);
    return n;
  }

  bool is_readable() const override { return buffered() || wait_for(sock_, POLLIN, read_timeout_ms_) > 0; }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, write_timeout_ms_) > 0; }

  ssize_t read(char* ptr, size_t size) override {
    if (!buffered()) {
      if (!is_readable()) return -1;
      if (size >= buffer_.size()) return receive(ptr, size);  // large reads skip the buffer
      const ssize_t n = receive(buffer_.data(), buffer_.size());
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    for (;;) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip_and_port(addr, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip_and_port(addr, len, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t receive(char* ptr, size_t size) {
    for (;;) {
      const ssize_t n = ::recv(sock_, ptr, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  socket_t sock_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  std::vector<char> buffer_ = std::vector<char>(4096);
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace

bool PipeliningServer::process_and_close_socket(socket_t sock) {
  const int read_ms = to_ms(read_timeout_sec_, read_timeout_usec_);
  ConnectionStream strm(sock, read_ms, to_ms(write_timeout_sec_, write_timeout_usec_));
  const auto idle_limit = std::chrono::seconds(keep_alive_timeout_sec_);
  enum class Head { kComplete, kGone, kTimeout, kTooLarge, kBusy };
  // The head of the next request into strm's buffer, within read_ms in all;
  // past kHeadGraceMs it counts against max_pending_heads_.
  auto read_head = [&]() {
    const auto start = std::chrono::steady_clock::now();
    bool counted = false;
    Head h = Head::kGone;
    for (;;) {
      if (strm.pending().find("\r\n\r\n") != std::string_view::npos) {
        h = Head::kComplete;
        break;
      }
      if (strm.pending().size() >= kMaxHead) {
        h = Head::kTooLarge;
        break;
      }
      if (svr_sock_ == INVALID_SOCKET) break;
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      if (waited >= read_ms) {
        h = Head::kTimeout;
        break;
      }
      if (!counted && waited >= kHeadGraceMs) {
        if (pending_heads_.fetch_add(1) >= max_pending_heads_) {
          --pending_heads_;
          h = Head::kBusy;
          break;
        }
        counted = true;
      }
      const long long until = counted ? read_ms : std::min(read_ms, kHeadGraceMs);
      const int ready = wait_for(sock, POLLIN, static_cast<int>(std::clamp<long long>(until - waited, 1, 50)));
      if (ready < 0 || (ready > 0 && strm.fill() <= 0)) break;
    }
    if (counted) --pending_heads_;
    return h;
  };
  bool ok = false;
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    // After the first request: the next one already buffered (pipelined), or
    // wait for it in short slices so a stopping server is noticed.
    if (left != keep_alive_max_count_ && !strm.buffered()) {
      const auto idle_since = std::chrono::steady_clock::now();
      int ready = 0;
      while (ready == 0 && svr_sock_ != INVALID_SOCKET &&
             std::chrono::steady_clock::now() - idle_since <= idle_limit)
        ready = wait_for(sock, POLLIN, 50);
      if (ready <= 0 || svr_sock_ == INVALID_SOCKET) break;
    }
    const Head head = read_head();
    if (head != Head::kComplete) {
      if (head == Head::kBusy) send_error(sock, 503, "Service Unavailable", "too many connections are sending their request head; retry");
      if (head == Head::kTooLarge) send_error(sock, 431, "Request Header Fields Too Large", "the request head is over 64 KiB");
      if (head == Head::kTimeout && strm.buffered())
        send_error(sock, 408, "Request Timeout", "the request head did not arrive within the read timeout");
      break;
    }
    const std::string_view pending = strm.pending();
    const std::string error = head_error(pending.substr(0, pending.find("\r\n\r\n")));
    if (!error.empty()) {
      send_error(sock, 400, "Bad Request", "malformed request head: " + error);
      break;
    }
    bool connection_closed = false;
    ok = process_request(strm, /*close_connection=*/left == 1, connection_closed, nullptr);
    if (!ok || connection_closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace dlrt::embed
