// Socket plumbing: addresses, interface selection, listen/accept/connect and deadline-bounded
// blocking I/O over non-blocking sockets (poll between attempts).
#include "transport/bootstrap/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "common/host_identity.h"
#include "common/log.h"
#include "common/settings.h"
#include "transport/bootstrap/nic_list.h"

namespace nshim {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool connectionEnded(int fd) {
  char byte;
  ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

std::string errnoText(int error) {
  char buf[128];
  return fmt::format("{} (errno {})", strerror_r(error, buf, sizeof(buf)), error);
}

// ---- addresses ----

Result<SocketAddress> SocketAddress::parse(const std::string& host, int port) {
  if (port < 0 || port > 65535) return NS_ERROR(Code::kInvalidArgument, "port {} out of range", port);
  SocketAddress out;
  sockaddr_in v4{};
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&out.storage_, &v4, sizeof(v4));
    out.length_ = sizeof(v4);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&out.storage_, &v6, sizeof(v6));
    out.length_ = sizeof(v6);
  } else {
    return NS_ERROR(Code::kInvalidArgument, "'{}' is not a numeric IPv4 or IPv6 address", host);
  }
  return out;
}

Result<SocketAddress> SocketAddress::fromSockaddr(const sockaddr* addr, socklen_t length) {
  SocketAddress out;
  if (addr->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    out.length_ = sizeof(sockaddr_in);
  } else if (addr->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    out.length_ = sizeof(sockaddr_in6);
  } else {
    return NS_ERROR(Code::kInvalidArgument, "unsupported socket address family {}", addr->sa_family);
  }
  std::memcpy(&out.storage_, addr, out.length_);
  return out;
}

Result<SocketAddress> SocketAddress::fromWire(const uint8_t* wire) {
  uint16_t family = static_cast<uint16_t>(wire[0] << 8 | wire[1]);
  uint16_t port = static_cast<uint16_t>(wire[2] << 8 | wire[3]);
  SocketAddress out;
  if (family == 4) {
    for (int i = 4; i < 16; ++i) {
      if (wire[4 + i] != 0) return NS_ERROR(Code::kInvalidArgument, "IPv4 address with stray bytes");
    }
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    std::memcpy(&v4.sin_addr, wire + 4, 4);
    std::memcpy(&out.storage_, &v4, sizeof(v4));
    out.length_ = sizeof(v4);
  } else if (family == 6) {
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    std::memcpy(&v6.sin6_addr, wire + 4, 16);
    std::memcpy(&out.storage_, &v6, sizeof(v6));
    out.length_ = sizeof(v6);
  } else {
    return NS_ERROR(Code::kInvalidArgument, "unknown address family code {} (expected 4 or 6)", family);
  }
  if (port == 0) return NS_ERROR(Code::kInvalidArgument, "address with port 0");
  return out;
}

void SocketAddress::toWire(uint8_t* wire) const {
  std::memset(wire, 0, kWireBytes);
  uint16_t p = static_cast<uint16_t>(port());
  wire[2] = static_cast<uint8_t>(p >> 8);
  wire[3] = static_cast<uint8_t>(p);
  if (family() == AF_INET) {
    wire[1] = 4;
    std::memcpy(wire + 4, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, 4);
  } else if (family() == AF_INET6) {
    wire[1] = 6;
    std::memcpy(wire + 4, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, 16);
  }
}

int SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return 0;
}

void SocketAddress::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr) >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  }
  return false;
}

std::string SocketAddress::host() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, host, sizeof(host));
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, host, sizeof(host));
  } else {
    return "<no address>";
  }
  return host;
}

std::string SocketAddress::toString() const {
  if (family() == AF_INET) return fmt::format("{}:{}", host(), port());
  if (family() == AF_INET6) return fmt::format("[{}]:{}", host(), port());
  return "<no address>";
}

// ---- interface selection ----

namespace {

// NCCL_SOCKET_IFNAME semantics: comma-separated prefixes; '^' excludes; '=' requires exact names.
bool interfaceMatches(const std::string& spec, const char* name) {
  std::string_view list = spec;
  bool exclude = false, exact = false;
  if (!list.empty() && list[0] == '^') exclude = true, list.remove_prefix(1);
  if (!list.empty() && list[0] == '=') exact = true, list.remove_prefix(1);
  bool hit = false;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    std::string_view candidate(name);
    if (exact ? candidate == item : candidate.substr(0, item.size()) == item) hit = true;
  }
  return exclude ? !hit : hit;
}

}  // namespace

Result<InterfaceAddress> findInterface(const SocketInterface& which) {
  if (which.spec.empty()) {
    NS_ASSIGN_OR_RETURN(SocketAddress loopback,
                        SocketAddress::parse(which.family == AF_INET6 ? "::1" : "127.0.0.1", 0));
    return InterfaceAddress{loopback, "lo"};
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return NS_ERROR(Code::kSystemError, "getifaddrs: {}", errnoText(errno));
  InterfaceAddress best, fallback;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || !(it->ifa_flags & IFF_UP) || !interfaceMatches(which.spec, it->ifa_name)) continue;
    int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(it->ifa_addr)->sin6_addr)) {
      continue;  // would need a scope id that other hosts cannot use
    }
    socklen_t length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    auto address = SocketAddress::fromSockaddr(it->ifa_addr, length);
    if (!address.ok()) continue;
    InterfaceAddress& slot = family == which.family ? best : fallback;
    if (!slot.address.valid()) slot = InterfaceAddress{*address, it->ifa_name};
  }
  freeifaddrs(list);
  InterfaceAddress chosen = best.address.valid() ? best : fallback;
  if (!chosen.address.valid()) {
    return NS_ERROR(Code::kInvalidArgument, "no up interface with a usable IPv4/IPv6 address matches '{}' on host {}",
                    which.spec, hostName());
  }
  chosen.address.setPort(0);
  return chosen;
}

Result<SocketAddress> interfaceAddress(const std::string& spec, int preferredFamily) {
  NS_ASSIGN_OR_RETURN(InterfaceAddress found, findInterface(SocketInterface{spec, preferredFamily}));
  return found.address;
}

SocketInterface SocketInterface::fromEnvironment() {
  int preferred = settingString(Setting::NCCLSHIM_SOCKET_FAMILY) == "AF_INET6" ? AF_INET6 : AF_INET;
  return SocketInterface{nicForLocalRank(settingString(Setting::NCCLSHIM_SOCKET_IFNAME), localRankFromEnvironment()),
                         preferred};
}

Result<SocketAddress> defaultListenAddress() {
  NS_ASSIGN_OR_RETURN(InterfaceAddress found, findInterface(SocketInterface::fromEnvironment()));
  return found.address;
}

// ---- connections ----

Result<Fd> listenOn(const SocketAddress& address, SocketAddress* bound) {
  Fd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return NS_ERROR(Code::kSystemError, "socket(): {}", errnoText(errno));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), address.sockaddrPtr(), address.length()) != 0) {
    return NS_ERROR(Code::kSystemError, "bind({}): {}", address.toString(), errnoText(errno));
  }
  if (::listen(fd.get(), 4096) != 0) {
    return NS_ERROR(Code::kSystemError, "listen({}): {}", address.toString(), errnoText(errno));
  }
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return NS_ERROR(Code::kSystemError, "getsockname: {}", errnoText(errno));
  }
  NS_ASSIGN_OR_RETURN(*bound, SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&storage), length));
  return fd;
}

Result<Fd> acceptPending(int listenFd, SocketAddress* peer, bool* outOfDescriptors) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  while (true) {
    int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&storage), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Fd owned(fd);
      auto address = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&storage), length);
      *peer = address.ok() ? *address : SocketAddress();
      return owned;
    }
    if (errno == EINTR) continue;
    // Transient conditions (a client that reset before accept, fd pressure) leave nothing to accept.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EPROTO) return Fd();
    if (outOfDescriptors != nullptr && (errno == EMFILE || errno == ENFILE)) {
      *outOfDescriptors = true;
      return Fd();
    }
    return NS_ERROR(Code::kSystemError, "accept: {}", errnoText(errno));
  }
}

Result<Fd> connectWithRetry(const SocketAddress& address, Deadline deadline, const std::function<bool()>& giveUp,
                            const SocketAddress& source) {
  int backoffMs = 5;
  int lastError = 0;
  while (true) {
    Fd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return NS_ERROR(Code::kSystemError, "socket(): {}", errnoText(errno));
    int noPort = 1;  // the port is chosen at connect(), per destination, as without bind
    if (source.valid() && !source.isLoopback() && source.family() == address.family() &&
        (setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &noPort, sizeof(noPort)),
         ::bind(fd.get(), source.sockaddrPtr(), source.length()) != 0)) {
      return NS_ERROR(Code::kSystemError, "bind({}) before connecting to {}: {}", source.toString(), address.toString(),
                      errnoText(errno));
    }
    int rc = ::connect(fd.get(), address.sockaddrPtr(), address.length());
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd pfd{fd.get(), POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&pfd, 1, deadline.remainingMs(1000));
      } while ((ready < 0 && errno == EINTR) || (ready == 0 && !deadline.expired()));
      if (ready > 0) {
        socklen_t length = sizeof(lastError);
        getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &lastError, &length);
        rc = lastError == 0 ? 0 : -1;
      } else {
        lastError = ETIMEDOUT;
        rc = -1;
      }
    } else if (rc != 0) {
      lastError = errno;
    }
    if (rc == 0) {
      NS_RETURN_IF_ERROR(setNoDelay(fd.get()));
      return fd;
    }
    bool retryable = lastError == ECONNREFUSED || lastError == ETIMEDOUT || lastError == ENETUNREACH ||
                     lastError == EHOSTUNREACH || lastError == ECONNRESET || lastError == EAGAIN || lastError == EINTR;
    if (!retryable || deadline.expired() || (giveUp && giveUp())) {
      return NS_ERROR(retryable ? Code::kTimeout : Code::kSystemError, "connect to {} failed: {}", address.toString(),
                      errnoText(lastError));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoffMs, deadline.remainingMs(1000) + 1)));
    backoffMs = std::min(backoffMs * 2, 200);
  }
}

Status setNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return NS_ERROR(Code::kSystemError, "setsockopt(TCP_NODELAY): {}", errnoText(errno));
  }
  return Status::Ok();
}

namespace {

long readSysctlLong(const char* path) {
  FILE* file = std::fopen(path, "r");
  if (!file) return -1;
  long value = -1;
  if (std::fscanf(file, "%ld", &value) != 1) value = -1;
  std::fclose(file);
  return value;
}

}  // namespace

long socketBufferLimit(SocketBuffer which) {
  // Read once: a transport sets the buffers of every connection to every peer at start-up.
  static const long sendLimit = readSysctlLong("/proc/sys/net/core/wmem_max");
  static const long receiveLimit = readSysctlLong("/proc/sys/net/core/rmem_max");
  return which == SocketBuffer::kSend ? sendLimit : receiveLimit;
}

Status setSocketBuffer(int fd, SocketBuffer which, int bytes) {
  const bool send = which == SocketBuffer::kSend;
  const char* option = send ? "SO_SNDBUF" : "SO_RCVBUF";
  long limit = socketBufferLimit(which);
  if (limit >= 0 && bytes > limit) {
    // A plain request would be capped at the limit and still end the autotuning: force it or leave
    // the socket as it is.
    int forced = send ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
    if (setsockopt(fd, SOL_SOCKET, forced, &bytes, sizeof(bytes)) == 0) return Status::Ok();
    return NS_ERROR(Code::kSystemError,
                    "{} of {} bytes is above net.core.{} ({}) and forcing it failed ({}); "
                    "the socket keeps the kernel's autotuning",
                    option, bytes, send ? "wmem_max" : "rmem_max", limit, errnoText(errno));
  }
  if (setsockopt(fd, SOL_SOCKET, send ? SO_SNDBUF : SO_RCVBUF, &bytes, sizeof(bytes)) != 0) {
    return NS_ERROR(Code::kSystemError, "setsockopt({}, {}): {}", option, bytes, errnoText(errno));
  }
  return Status::Ok();
}

bool connectsSameHost(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t localLength = sizeof(local), peerLength = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0 || local.ss_family != peer.ss_family) {
    return false;
  }
  if (peer.ss_family == AF_INET) {
    in_addr localIp = reinterpret_cast<const sockaddr_in&>(local).sin_addr;
    in_addr peerIp = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
    return (ntohl(peerIp.s_addr) >> 24) == 127 || peerIp.s_addr == localIp.s_addr;
  }
  if (peer.ss_family == AF_INET6) {
    const in6_addr& localIp = reinterpret_cast<const sockaddr_in6&>(local).sin6_addr;
    const in6_addr& peerIp = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&peerIp) || std::memcmp(&localIp, &peerIp, sizeof(in6_addr)) == 0;
  }
  return false;
}

namespace {

// Waits until `fd` is ready for `events`; false when the deadline passed.
bool waitReady(int fd, short events, Deadline deadline) {
  while (!deadline.expired()) {
    pollfd pfd{fd, events, 0};
    int ready = ::poll(&pfd, 1, deadline.remainingMs(1000));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // let the next I/O call report the error
  }
  return false;
}

}  // namespace

Status readAll(int fd, void* buf, size_t bytes, Deadline deadline, std::string_view what) {
  auto* out = static_cast<char*>(buf);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::recv(fd, out + done, bytes - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0) {
      return NS_ERROR(Code::kRemoteError, "{} closed the connection ({} of {} bytes read)", what, done, bytes);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waitReady(fd, POLLIN, deadline)) {
        return NS_ERROR(Code::kTimeout, "timed out reading from {} ({} of {} bytes read)", what, done, bytes);
      }
    } else if (errno != EINTR) {
      return NS_ERROR(Code::kRemoteError, "reading from {}: {}", what, errnoText(errno));
    }
  }
  return Status::Ok();
}

Status writeAll(int fd, const void* buf, size_t bytes, Deadline deadline, std::string_view what) {
  const auto* in = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::send(fd, in + done, bytes - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) {
      done += static_cast<size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waitReady(fd, POLLOUT, deadline)) {
        return NS_ERROR(Code::kTimeout, "timed out writing to {} ({} of {} bytes written)", what, done, bytes);
      }
    } else if (errno != EINTR) {
      return NS_ERROR(Code::kRemoteError, "writing to {}: {}", what, errnoText(errno));
    }
  }
  return Status::Ok();
}

}  // namespace nshim
