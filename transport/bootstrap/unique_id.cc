// The unique id: its secret, and its strict encoding and decoding (the root that serves it: bootstrap.h).
#include "transport/bootstrap/unique_id.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstring>

#include "common/fnv1a.h"
#include "transport/bootstrap/wire.h"

namespace nshim {
namespace {

constexpr size_t kChecksummedBytes = 4 + 2 + 2 + SocketAddress::kWireBytes + 16;  // 44

}  // namespace

Result<Secret> randomSecret() {
  Secret secret{};
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = getrandom(secret.data() + got, secret.size() - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (got == secret.size()) return secret;
  Fd urandom(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!urandom.valid() || ::read(urandom.get(), secret.data(), secret.size()) != ssize_t(secret.size())) {
    return NS_ERROR(Code::kSystemError, "no source of random bytes for the unique id secret: {}", errnoText(errno));
  }
  return secret;
}

bool secretsEqual(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;
  for (size_t i = 0; i < sizeof(Secret); ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

UniqueId encodeUniqueId(const UniqueIdInfo& info) {
  UniqueId id{};
  auto* data = reinterpret_cast<uint8_t*>(id.bytes);
  WireWriter writer(data, sizeof(id.bytes));
  writer.u32(kUniqueIdMagic);
  writer.u16(kUniqueIdVersion);
  writer.u16(0);
  uint8_t address[SocketAddress::kWireBytes];
  info.root.toWire(address);
  writer.bytes(address, sizeof(address));
  writer.bytes(info.secret.data(), info.secret.size());
  writer.u32(fnv1a32(data, kChecksummedBytes));
  return id;
}

Result<UniqueIdInfo> decodeUniqueId(const UniqueId& id) {
  const auto* data = reinterpret_cast<const uint8_t*>(id.bytes);
  WireReader reader(data, sizeof(id.bytes));
  uint32_t magic = reader.u32();
  uint16_t version = reader.u16();
  reader.u16();
  const uint8_t* address = reader.view(SocketAddress::kWireBytes);
  UniqueIdInfo info;
  reader.bytes(info.secret.data(), info.secret.size());
  uint32_t checksum = reader.u32();
  if (!reader.ok() || address == nullptr) return NS_ERROR(Code::kInternal, "unique id layout overflow");
  if (magic != kUniqueIdMagic) {
    return NS_ERROR(Code::kInvalidArgument,
                    "not an ncclshim unique id (magic {:#010x}, expected {:#010x}); was it created by "
                    "ncclGetUniqueId of the same library and passed unchanged?",
                    magic, kUniqueIdMagic);
  }
  if (version != kUniqueIdVersion) {
    return NS_ERROR(Code::kInvalidArgument, "unique id version {} is not supported (this build speaks {})", version,
                    kUniqueIdVersion);
  }
  if (checksum != fnv1a32(data, kChecksummedBytes)) {
    return NS_ERROR(Code::kInvalidArgument, "unique id checksum mismatch: the id was corrupted in transit");
  }
  auto root = SocketAddress::fromWire(address);
  if (!root.ok()) {
    return NS_ERROR(Code::kInvalidArgument, "unique id has a bad root address: {}", root.status().message());
  }
  info.root = *root;
  return info;
}

}  // namespace nshim
