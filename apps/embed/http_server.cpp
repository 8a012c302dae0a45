#include "embed/http_server.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

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

// One connection's socket with a read buffer that lives as long as the
// connection, so whatever was read past the end of one request is the start
// of the next.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(socket_t sock, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool buffered() const { return begin_ < end_; }

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
  std::array<char, 4096> buffer_{};
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace

bool PipeliningServer::process_and_close_socket(socket_t sock) {
  ConnectionStream strm(sock, to_ms(read_timeout_sec_, read_timeout_usec_),
                        to_ms(write_timeout_sec_, write_timeout_usec_));
  const auto idle_limit = std::chrono::seconds(keep_alive_timeout_sec_);
  bool ok = false;
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    // The next request: already buffered (pipelined), or wait for it in short
    // slices so a stopping server is noticed.
    if (!strm.buffered()) {
      const auto idle_since = std::chrono::steady_clock::now();
      int ready = 0;
      while (ready == 0 && svr_sock_ != INVALID_SOCKET &&
             std::chrono::steady_clock::now() - idle_since <= idle_limit)
        ready = wait_for(sock, POLLIN, 50);
      if (ready <= 0 || svr_sock_ == INVALID_SOCKET) break;
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
