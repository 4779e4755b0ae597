// Socket plumbing shared by the bootstrap and the TCP transport: an RAII file descriptor, IPv4/IPv6
// addresses (with a fixed 20-byte wire form), choosing the interface to listen on
// (NCCLSHIM_SOCKET_IFNAME, like NCCL_SOCKET_IFNAME; loopback by default), connect with retry, and
// poll-based read/write-all with a deadline. Every socket made here is non-blocking and close-on-exec.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace nshim {

// Owns one file descriptor; closes it on destruction. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// An IPv4 or IPv6 endpoint.
class SocketAddress {
 public:
  static constexpr size_t kWireBytes = 20;  // family u16, port u16, address 16 bytes

  SocketAddress() = default;
  // Parses a numeric host ("127.0.0.1", "::1") and a port.
  static Result<SocketAddress> parse(const std::string& host, int port);
  static Result<SocketAddress> fromSockaddr(const sockaddr* addr, socklen_t length);
  // Decodes the wire form; rejects unknown families and v4 addresses with stray bytes.
  static Result<SocketAddress> fromWire(const uint8_t* wire);
  void toWire(uint8_t* wire) const;

  bool valid() const { return length_ > 0; }
  int family() const { return storage_.ss_family; }
  int port() const;
  void setPort(int port);
  bool isLoopback() const;
  const sockaddr* sockaddrPtr() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }
  // "127.0.0.1:5000" or "[::1]:5000".
  std::string toString() const;
  // The address without the port: "127.0.0.1", "::1".
  std::string host() const;

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// The interface a rank's sockets use: a specification as in NCCL_SOCKET_IFNAME ("eth", "=eth0",
// "^docker,lo"; prefixes unless '='; "" = loopback) and the preferred address family.
struct SocketInterface {
  std::string spec;
  int family = AF_INET;
  // NCCLSHIM_SOCKET_IFNAME (a list gives each local rank its own entry: nic_list.h) and
  // NCCLSHIM_SOCKET_FAMILY (AF_INET6 / 6 / ipv6 for IPv6).
  static SocketInterface fromEnvironment();
};

// An interface's address and name.
struct InterfaceAddress {
  SocketAddress address;  // port 0
  std::string name;       // "lo" for the loopback default
};

// The first address of the interface selected by `which`, IPv4 unless the family asks for IPv6 or
// the interface has none; 127.0.0.1 (::1) when the specification is empty.
Result<InterfaceAddress> findInterface(const SocketInterface& which);
// The address this process listens on, from the environment (SocketInterface::fromEnvironment()).
Result<SocketAddress> defaultListenAddress();
// Same selection from an explicit interface specification ("" means loopback).
Result<SocketAddress> interfaceAddress(const std::string& spec, int preferredFamily);

// Binds to `address` (port 0 = ephemeral) and listens. `bound` receives the real address.
Result<Fd> listenOn(const SocketAddress& address, SocketAddress* bound);
// Accepts one pending connection, or returns an invalid Fd when none is pending. With
// `outOfDescriptors`, running out of file descriptors (EMFILE, ENFILE) is not an error either: an
// invalid Fd is returned and *outOfDescriptors set.
Result<Fd> acceptPending(int listenFd, SocketAddress* peer, bool* outOfDescriptors = nullptr);
// Connects to `address`, retrying refused/unreachable attempts with back-off until the deadline,
// or until `giveUp` (checked between attempts) returns true. With a valid `source`, the socket is
// bound to that address first (port 0), so that the connection leaves through this rank's own NIC.
Result<Fd> connectWithRetry(const SocketAddress& address, Deadline deadline,
                            const std::function<bool()>& giveUp = nullptr, const SocketAddress& source = {});

Status setNoDelay(int fd);
enum class SocketBuffer { kSend, kReceive };
// net.core.wmem_max / rmem_max: the most a plain SO_SNDBUF / SO_RCVBUF may ask for; -1 if unreadable.
// Read once per process.
long socketBufferLimit(SocketBuffer which);
// Fixes the socket's send or receive buffer at `bytes` (the kernel doubles it for its own
// bookkeeping); this turns off the kernel's autotuning of that buffer for that socket. A size above
// net.core.wmem_max / rmem_max is forced (needs CAP_NET_ADMIN) or refused with the socket untouched,
// never silently capped.
Status setSocketBuffer(int fd, SocketBuffer which, int bytes);
// True when both ends of the connected socket `fd` are this host: the peer's address is loopback
// or the same as the local end's.
bool connectsSameHost(int fd);
// Reads/writes exactly `bytes` bytes, waiting in poll() until the deadline. Errors name `what`
// ("the bootstrap root at 10.0.0.1:4000"). End of stream before all bytes is an error.
Status readAll(int fd, void* buf, size_t bytes, Deadline deadline, std::string_view what);
Status writeAll(int fd, const void* buf, size_t bytes, Deadline deadline, std::string_view what);

// True when the connection on `fd` has ended: end of stream, or an error other than "no data yet".
// A non-blocking peek, so nothing is consumed and nothing waits.
bool connectionEnded(int fd);

// A readable description of errno for messages.
std::string errnoText(int error);

}  // namespace nshim
