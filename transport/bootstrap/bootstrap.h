// NCCL-like bootstrap. The process that creates the unique id runs a root thread on the id's
// listening socket (bootstrap_root.cc). Every rank listens on an ephemeral port of its own, says hello
// to the root {secret, rank, nranks, listen address}, receives the table of all listen addresses, then
// opens `socketsPerPeer` TCP connections to every higher rank (from its own listen address) and
// accepts them from every lower one (only those of `BootstrapOptions::peers` when it is given:
// phynet leaves out the ranks of the node); each connection starts with a hello carrying the
// secret, the connecting rank and the socket index.
// Connections without the right secret are refused, never fatal, and never hold up the real ranks
// (hello_acceptor.h); each listener logs one summary of them. Every wait has a deadline, and a rank
// that never arrives is named in the error of those that did.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/socket.h"
#include "transport/bootstrap/unique_id.h"

namespace nshim {

struct BootstrapOptions {
  int socketsPerPeer = 2;
  double timeoutSeconds = 300;
  // Where this rank listens, and the source of the connections it opens (its own NIC).
  SocketInterface interface = SocketInterface::fromEnvironment();
  // The peers to connect, indexed by rank (empty: all). Every rank must pass the same relation
  // (peers[b] on rank a == peers[a] on rank b); a peer left out gets no sockets.
  std::vector<bool> peers;

  bool connects(int peer) const { return peers.empty() || (peer < static_cast<int>(peers.size()) && peers[peer]); }
};

// The connections of one rank: sockets[peer][index], empty for peer == rank and the peers left out. All non-blocking,
// close-on-exec, TCP_NODELAY.
struct PeerSockets {
  int rank = 0;
  int nranks = 0;
  std::vector<std::vector<Fd>> sockets;
};

// Runs the rank side of the bootstrap for the job named by `id`.
Result<PeerSockets> bootstrapConnect(const UniqueId& id, int rank, int nranks, const BootstrapOptions& options);

// Starts this process's root thread serving `listenFd` (bound to `address`) for one job. The thread
// ends when the job is connected, has failed, or the process exits; a forked child closes its copies
// of the root's sockets so that peers see connections end when the root closes them.
Status startBootstrapRoot(Fd listenFd, const SocketAddress& address, const Secret& secret);

// Opens a listening socket on defaultListenAddress(), starts the bootstrap root thread of this
// process for it and returns the id that the ranks pass to connectTcpTransport(). One id serves one
// communicator; the root thread ends once its ranks are connected or have failed.
Result<UniqueId> createUniqueId();
// The same, listening on the given interface.
Result<UniqueId> createUniqueId(const SocketInterface& interface);

// "2,3" or "0,1,2,... (40 more)": ranks for error messages.
std::string formatRankList(const std::vector<int>& ranks);

}  // namespace nshim
