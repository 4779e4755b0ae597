// The rank side of the bootstrap: hello to the root, receive the address table, then the full mesh
// of peer connections in three deadlock-free steps (connect to higher ranks and send hellos; accept
// from lower ranks; exchange acknowledgements).
#include "transport/bootstrap/bootstrap.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "common/log.h"
#include "transport/bootstrap/bootstrap_messages.h"
#include "transport/bootstrap/hello_acceptor.h"

namespace nshim {
namespace {

using namespace bootstrap;

// Ranks wait this much longer than the root, so the root's "never arrived" error reaches them first.
constexpr double kRootGraceSeconds = 5;
static_assert(kPeerHelloBytes <= HelloAcceptor::kMaxHelloBytes);

Result<std::vector<SocketAddress>> exchangeWithRoot(const UniqueIdInfo& info, int rank, int nranks,
                                                    const SocketAddress& listen, const BootstrapOptions& options) {
  std::string root = "the bootstrap root at " + info.root.toString();
  auto connected = connectWithRetry(info.root, Deadline::after(options.timeoutSeconds));
  if (!connected.ok()) {
    return NS_ERROR(connected.status().code(), "rank {} could not reach {}: {}", rank, root,
                    connected.status().message());
  }
  Fd fd = std::move(connected).value();
  RootHello hello;
  hello.secret = info.secret;
  hello.rank = static_cast<uint32_t>(rank);
  hello.nranks = static_cast<uint32_t>(nranks);
  hello.timeoutMs = static_cast<uint32_t>(std::min(options.timeoutSeconds * 1e3, 4e9));
  listen.toWire(hello.listen);
  uint8_t buf[kRootHelloBytes];
  encode(hello, buf);
  NS_RETURN_IF_ERROR(writeAll(fd.get(), buf, sizeof(buf), Deadline::after(options.timeoutSeconds), root));

  Deadline replyDeadline = Deadline::after(options.timeoutSeconds + kRootGraceSeconds);
  uint8_t headerBytes[kRootReplyBytes];
  Status status = readAll(fd.get(), headerBytes, sizeof(headerBytes), replyDeadline, root);
  if (!status.ok() && status.code() == Code::kRemoteError) {
    return NS_ERROR(Code::kRemoteError,
                    "{} closed the connection without answering rank {}: the root process exited, or its "
                    "bootstrap ended (failed, or done without this rank) before this rank's hello reached it",
                    root, rank);
  }
  NS_RETURN_IF_ERROR(status);
  RootReplyHeader header;
  if (!decode(headerBytes, &header)) return NS_ERROR(Code::kRemoteError, "{} sent a malformed reply", root);
  Result<size_t> payloadBytes = checkRootReply(header, static_cast<uint32_t>(nranks));
  if (!payloadBytes.ok()) {
    return NS_ERROR(Code::kRemoteError, "{} sent {} to rank {} of {}", root, payloadBytes.status().message(), rank,
                    nranks);
  }
  std::vector<uint8_t> payload(*payloadBytes);
  NS_RETURN_IF_ERROR(readAll(fd.get(), payload.data(), payload.size(), replyDeadline, root));
  if (header.kind == kRootError) {
    Code code = header.code == static_cast<uint16_t>(Code::kTimeout) ? Code::kTimeout : Code::kRemoteError;
    return NS_ERROR(code, "bootstrap of rank {} failed: {}", rank, std::string(payload.begin(), payload.end()));
  }
  Result<std::vector<SocketAddress>> addresses =
      decodeRootTable(payload.data(), payload.size(), static_cast<uint32_t>(nranks));
  if (!addresses.ok()) return NS_ERROR(Code::kRemoteError, "{} sent {}", root, addresses.status().message());
  return addresses;
}

// Accepts socketsPerPeer connections from every lower rank to connect (those with sockets in
// `out`), refusing strangers.
Status acceptFromLowerRanks(int listenFd, const Secret& secret, PeerSockets* out, int socketsPerPeer, Deadline deadline,
                            double timeoutSeconds) {
  int rank = out->rank;
  int expected = 0;
  for (int peer = 0; peer < rank; ++peer) expected += static_cast<int>(out->sockets[peer].size());
  int accepted = 0;
  Status fatal;
  std::string label = fmt::format("rank {} bootstrap", rank);
  HelloAcceptor acceptor(listenFd, kPeerHelloBytes, std::min(timeoutSeconds, bootstrapHelloTimeoutSeconds()), label);
  auto onHello = [&](Fd fd, const uint8_t* bytes, const SocketAddress& from) {
    PeerHello hello;
    std::string why;
    if (!decode(bytes, &hello, &why)) return acceptor.noteStranger(from, StrangerReason::kNotBootstrap, why);
    if (!secretsEqual(hello.secret.data(), secret.data())) {
      return acceptor.noteStranger(from, StrangerReason::kWrongSecret, fmt::format("claiming rank {}", hello.fromRank));
    }
    PeerAck nack;
    if (hello.socketsPerPeer != static_cast<uint32_t>(socketsPerPeer)) {
      nack = PeerAck{kAckSocketsMismatch, static_cast<uint32_t>(socketsPerPeer)};
      fatal = NS_ERROR(Code::kInvalidUsage,
                       "rank {} opens {} sockets per peer but rank {} expects {}: set NCCLSHIM_NSOCKS_PERPEER "
                       "(connections) and NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (data sockets of each) to the "
                       "same value on every rank",
                       hello.fromRank, hello.socketsPerPeer, rank, socketsPerPeer);
    } else if (hello.nranks != static_cast<uint32_t>(out->nranks)) {
      nack = PeerAck{kAckNranksMismatch, static_cast<uint32_t>(out->nranks)};
      fatal = NS_ERROR(Code::kInvalidUsage, "rank {} thinks the job has {} ranks but rank {} thinks {}", hello.fromRank,
                       hello.nranks, rank, out->nranks);
    }
    if (nack.code != kAckOk) {
      uint8_t buf[kPeerAckBytes];
      encode(nack, buf);
      (void)writeAll(fd.get(), buf, sizeof(buf), Deadline::after(1), "a peer");
      return;
    }
    if (hello.fromRank >= static_cast<uint32_t>(rank) || hello.toRank != static_cast<uint32_t>(rank) ||
        hello.socketIndex >= out->sockets[hello.fromRank].size() ||
        out->sockets[hello.fromRank][hello.socketIndex].valid()) {
      NS_WARN("{}: refused a connection from {}: unexpected rank {} -> {} socket {}", label, from.toString(),
              hello.fromRank, hello.toRank, hello.socketIndex);
      return;
    }
    if (!setNoDelay(fd.get()).ok()) NS_WARN("{}: could not set TCP_NODELAY", label);
    out->sockets[hello.fromRank][hello.socketIndex] = std::move(fd);
    ++accepted;
  };
  std::vector<pollfd> fds;
  while (accepted < expected) {
    if (deadline.expired()) {
      std::vector<int> missing;
      for (int peer = 0; peer < rank; ++peer) {
        for (const Fd& fd : out->sockets[peer]) {
          if (!fd.valid()) {
            missing.push_back(peer);
            break;
          }
        }
      }
      size_t strangers = acceptor.strangers() + acceptor.waiting();
      return NS_ERROR(Code::kTimeout,
                      "rank {} timed out after {:g} s waiting for connections from {} {} (they may have failed "
                      "during bootstrap){}",
                      rank, timeoutSeconds, missing.size() == 1 ? "rank" : "ranks", formatRankList(missing),
                      strangers ? fmt::format("; meanwhile {} connections without the job's secret came and were "
                                              "ignored",
                                              strangers)
                                : "");
    }
    fds.clear();
    acceptor.appendPollFds(&fds);
    ::poll(fds.data(), fds.size(), deadline.remainingMs(1000));
    NS_RETURN_IF_ERROR(acceptor.service(fds.data(), fds.size(), onHello));
    NS_RETURN_IF_ERROR(fatal);
  }
  return Status::Ok();
}

Status checkAck(const uint8_t* bytes, const std::string& what, int peer, int rank, int nranks, int sockets) {
  PeerAck ack;
  std::string why;
  if (!decode(bytes, &ack, &why)) return NS_ERROR(Code::kRemoteError, "{}: {}", what, why);
  if (ack.code == kAckSocketsMismatch) {
    return NS_ERROR(Code::kInvalidUsage,
                    "rank {} expects {} sockets per peer but rank {} opens {}: set "
                    "NCCLSHIM_NSOCKS_PERPEER (connections) and NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (data "
                    "sockets of each) to the same value on every rank",
                    peer, ack.value, rank, sockets);
  }
  if (ack.code != kAckOk) {
    return NS_ERROR(Code::kInvalidUsage, "rank {} thinks the job has {} ranks but rank {} thinks {}", peer, ack.value,
                    rank, nranks);
  }
  return Status::Ok();
}

// While connecting to `peer`: a refusal or an end of stream already waiting on the connections
// opened so far means the peer gave up; returns that as an error (Ok when nothing is there).
Status explainEarlyAnswer(const PeerSockets& out, int peer, int rank, int sockets) {
  for (const Fd& fd : out.sockets[peer]) {
    if (!fd.valid()) break;
    uint8_t bytes[kPeerAckBytes];
    ssize_t n = ::recv(fd.get(), bytes, sizeof(bytes), MSG_DONTWAIT | MSG_PEEK);
    std::string what = fmt::format("rank {} (during bootstrap)", peer);
    if (n == static_cast<ssize_t>(sizeof(bytes))) {
      NS_RETURN_IF_ERROR(checkAck(bytes, what, peer, rank, out.nranks, sockets));
    } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return NS_ERROR(Code::kRemoteError, "{} closed its connections: it failed (see its own error)", what);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string formatRankList(const std::vector<int>& ranks) {
  constexpr size_t kShown = 32;
  std::string text;
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) text += fmt::format("{}{}", i ? "," : "", ranks[i]);
  if (ranks.size() > kShown) text += fmt::format(",... ({} more)", ranks.size() - kShown);
  return text;
}

Result<PeerSockets> bootstrapConnect(const UniqueId& id, int rank, int nranks, const BootstrapOptions& options) {
  if (nranks < 1 || static_cast<uint32_t>(nranks) > kMaxRanks || rank < 0 || rank >= nranks) {
    return NS_ERROR(Code::kInvalidArgument, "rank {} of {} ranks is invalid", rank, nranks);
  }
  if (options.socketsPerPeer < 1 || options.socketsPerPeer > kMaxSocketsPerPeer) {
    return NS_ERROR(Code::kInvalidArgument, "socketsPerPeer {} out of range [1, {}]", options.socketsPerPeer,
                    kMaxSocketsPerPeer);
  }
  if (!(options.timeoutSeconds > 0)) {
    return NS_ERROR(Code::kInvalidArgument, "bootstrap timeout {} s must be positive", options.timeoutSeconds);
  }
  if (!options.peers.empty() && options.peers.size() != static_cast<size_t>(nranks)) {
    return NS_ERROR(Code::kInvalidArgument, "rank {}: the set of peers to connect has {} entries for {} ranks", rank,
                    options.peers.size(), nranks);
  }
  NS_ASSIGN_OR_RETURN(UniqueIdInfo info, decodeUniqueId(id));
  NS_ASSIGN_OR_RETURN(InterfaceAddress local, findInterface(options.interface));
  SocketAddress listenAddress;
  NS_ASSIGN_OR_RETURN(Fd listenFd, listenOn(local.address, &listenAddress));
  NS_ASSIGN_OR_RETURN(std::vector<SocketAddress> table, exchangeWithRoot(info, rank, nranks, listenAddress, options));

  PeerSockets out;
  out.rank = rank;
  out.nranks = nranks;
  out.sockets.resize(nranks);
  const int sockets = options.socketsPerPeer;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer != rank && options.connects(peer)) out.sockets[peer].resize(sockets);
  }
  Deadline deadline = Deadline::after(options.timeoutSeconds);

  // 1. Connect to every higher rank; the kernel completes these even before the peer accepts.
  for (int peer = rank + 1; peer < nranks; ++peer) {
    for (int index = 0; index < static_cast<int>(out.sockets[peer].size()); ++index) {
      // The peer answers only after all our connections are in, so anything readable on the ones
      // already open (a refusal, or the end of stream of a peer that failed) is a reason to stop.
      auto peerFailed = [&] { return explainEarlyAnswer(out, peer, rank, sockets); };
      auto fd = connectWithRetry(
          table[peer], deadline, [&] { return !peerFailed().ok(); }, local.address);
      if (!fd.ok()) {
        NS_RETURN_IF_ERROR(peerFailed());
        return NS_ERROR(fd.status().code(), "rank {} could not connect to rank {} at {}: {}", rank, peer,
                        table[peer].toString(), fd.status().message());
      }
      PeerHello hello{info.secret,
                      static_cast<uint32_t>(rank),
                      static_cast<uint32_t>(peer),
                      static_cast<uint32_t>(index),
                      static_cast<uint32_t>(sockets),
                      static_cast<uint32_t>(nranks)};
      uint8_t buf[kPeerHelloBytes];
      encode(hello, buf);
      NS_RETURN_IF_ERROR(writeAll(fd->get(), buf, sizeof(buf), deadline, fmt::format("rank {}", peer)));
      out.sockets[peer][index] = std::move(fd).value();
    }
  }
  // 2. Accept from every lower rank to connect.
  NS_RETURN_IF_ERROR(
      acceptFromLowerRanks(listenFd.get(), info.secret, &out, sockets, deadline, options.timeoutSeconds));
  // 3. Acknowledge what we accepted, then collect the acknowledgements of the higher ranks.
  uint8_t ackBytes[kPeerAckBytes];
  encode(PeerAck{}, ackBytes);
  for (int peer = 0; peer < rank; ++peer) {
    for (Fd& fd : out.sockets[peer]) {
      NS_RETURN_IF_ERROR(writeAll(fd.get(), ackBytes, sizeof(ackBytes), deadline, fmt::format("rank {}", peer)));
    }
  }
  for (int peer = rank + 1; peer < nranks; ++peer) {
    for (Fd& fd : out.sockets[peer]) {
      std::string what = fmt::format("rank {} (during bootstrap)", peer);
      NS_RETURN_IF_ERROR(readAll(fd.get(), ackBytes, sizeof(ackBytes), deadline, what));
      NS_RETURN_IF_ERROR(checkAck(ackBytes, what, peer, rank, nranks, sockets));
    }
  }
  NS_INFO("rank {} of {}: bootstrap done, {} sockets per peer", rank, nranks, sockets);
  return out;
}

}  // namespace nshim
