// The TCP transport (the embedded default): a full mesh of `socketsPerPeer` NCCL connections between
// the ranks, set up by the bootstrap, each a control socket and NCCL's data sockets (`socket`:
// NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, none on loopback or an ordinary NIC). Message k from
// rank A to rank B travels on connection (its channel, else k) % socketsPerPeer of that pair as a
// 24-byte header {magic, tag, length} followed by the payload (cut into NCCL's tasks over the data
// sockets when there are some: tcp_transport.cc), written straight
// from the user's buffer and read straight into the posted receive's buffer; a socket's next message
// stays in the kernel until its receive is posted. Progress is driven by the waiting thread: a short
// busy-poll (NCCLSHIM_SPIN_US, re-armed after every wake-up) that yields the CPU on each turn, then
// poll() on the sockets with pending work. Connections to ranks on the same host get a small send
// buffer and a large receive buffer (TcpOptions). abort() (thread-safe) shuts every connection down so
// that peers see the end of stream at once; the destructor closes them.
#pragma once

#include <memory>

#include "common/status.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/core/transport.h"
#include "transport/tcp/nccl_socket_settings.h"

namespace nshim {

struct TcpOptions {
  int socketsPerPeer = 2;  // NCCLSHIM_NSOCKS_PERPEER: NCCL connections (channels) per peer
  // NCCL's Socket-transport settings: data sockets per connection, task size, buffers. Read by
  // connectTcpTransport through `ncclVariables` (the environment, else a replayed capture's
  // recorded value; tests give their own lookup) for the NIC in use.
  NcclSocketSettings socket;
  NcclVariableLookup ncclVariables = ncclSettingsLookup();
  double timeoutSeconds = 300;  // NCCLSHIM_TIMEOUT: bootstrap waits
  int spinMicroseconds = 100;   // NCCLSHIM_SPIN_US: busy-poll before blocking in poll()
  bool spinYield = true;        // NCCLSHIM_SPIN_YIELD: sched_yield() while busy-polling
  // NCCLSHIM_SOCKET_SNDBUF: each socket's send buffer. -1 (default): NCCL_SOCKET_SNDBUF when that is
  // set, else kLocalSendBufferBytes for a peer on this host and the kernel's autotuning (NCCL's
  // default) for others; 0: autotuning for all; N: N bytes for all.
  // Between ranks of one host a small buffer keeps the bytes in cache from the sender's copy into
  // the kernel to the receiver's copy out (autotuning grows it to megabytes, which the copies then
  // read back from memory); across hosts the buffer must cover the link's bandwidth-delay product.
  int sendBufferBytes = -1;
  // NCCLSHIM_SOCKET_RCVBUF: each socket's receive buffer, with the same -1 / 0 / N choices (and
  // NCCL_SOCKET_RCVBUF). The
  // local default is large enough that the 512K messages of a 1 MiB collective never wait for the
  // receive window: with autotuning the window grows on its own schedule, and a 1 MiB allgather
  // between two ranks took either about 108 or about 175 µs depending on how that went early in
  // the run (docs/bench_loopback.md).
  int recvBufferBytes = -1;
  // NCCLSHIM_SOCKET_IFNAME / NCCLSHIM_SOCKET_FAMILY: the interface this rank listens on and connects
  // from (one entry of a per-local-rank list, nic_list.h).
  SocketInterface interface = SocketInterface::fromEnvironment();

  static constexpr int kLocalSendBufferBytes = 256 << 10;
  static constexpr int kLocalRecvBufferBytes = 1 << 20;

  static TcpOptions fromEnvironment();
};

// Bootstraps rank `rank` of `nranks` through the root named by `id` and returns its transport.
// Every rank of the job must use the same socketsPerPeer and NCCL data sockets (the bootstrap checks
// their product). `options.socket` is read here (readNcclSocketSettings). `peers` (indexed by rank, empty: all)
// names the ranks to connect (BootstrapOptions::peers); a message to another is refused.
Result<std::unique_ptr<Transport>> connectTcpTransport(const UniqueId& id, int rank, int nranks,
                                                       const TcpOptions& options, std::vector<bool> peers = {});

// Wraps connections that are already set up (sockets[peer][index]; none for a peer left out):
// socketsPerPeer x options.socket.socketsPerConnection() per peer.
std::unique_ptr<Transport> createTcpTransport(PeerSockets sockets, const TcpOptions& options);

}  // namespace nshim
