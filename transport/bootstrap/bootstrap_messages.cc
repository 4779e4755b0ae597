// Parsing of the root's reply beyond its fixed header (bootstrap_messages.h): kept apart from the
// sockets so that the rank side (bootstrap.cc) and the fuzzer (fuzz/bootstrap_fuzz.cc) share it. The
// error texts are phrases ("a malformed table (...)") that the caller completes with who sent them.
#include "transport/bootstrap/bootstrap_messages.h"

namespace nshim::bootstrap {

Result<size_t> checkRootReply(const RootReplyHeader& header, uint32_t nranks) {
  if (header.kind == kRootError) {
    if (header.length > kMaxErrorText) {
      return Status(Code::kRemoteError,
                    fmt::format("an oversized error ({} bytes, at most {})", header.length, kMaxErrorText));
    }
    return static_cast<size_t>(header.length);
  }
  if (header.kind != kRootTable || header.nranks != nranks ||
      header.length != static_cast<uint64_t>(header.nranks) * SocketAddress::kWireBytes) {
    return Status(Code::kRemoteError, fmt::format("a malformed table (kind {}, {} ranks, {} bytes)", header.kind,
                                                  header.nranks, header.length));
  }
  return static_cast<size_t>(header.length);
}

Result<std::vector<SocketAddress>> decodeRootTable(const uint8_t* payload, size_t bytes, uint32_t nranks) {
  if (bytes != static_cast<uint64_t>(nranks) * SocketAddress::kWireBytes) {
    return Status(Code::kRemoteError, fmt::format("a table of {} bytes for {} ranks", bytes, nranks));
  }
  std::vector<SocketAddress> addresses;
  addresses.reserve(nranks);
  for (uint32_t peer = 0; peer < nranks; ++peer) {
    auto address = SocketAddress::fromWire(payload + static_cast<size_t>(peer) * SocketAddress::kWireBytes);
    if (!address.ok()) return Status(Code::kRemoteError, fmt::format("a bad address for rank {}", peer));
    addresses.push_back(*address);
  }
  return addresses;
}

}  // namespace nshim::bootstrap
