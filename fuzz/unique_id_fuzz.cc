// libFuzzer target of the unique id decoder: decodeUniqueId on 128 arbitrary bytes (shorter inputs
// are zero-padded), then again with magic, version and checksum made right so that the root address
// decoding is reached too. An accepted id must re-encode to the same magic, version, address and
// secret (the reserved u16 is not checked by the decoder and the encoder writes it as 0).
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "transport/bootstrap/unique_id.h"

using namespace nshim;

namespace {

constexpr size_t kCheckedBytes = 4 + 2 + 2 + SocketAddress::kWireBytes + 16;  // then the u32 checksum

uint32_t fnv1a(const uint8_t* data, size_t n) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < n; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}

void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

void decodeAndCheck(const UniqueId& id) {
  Result<UniqueIdInfo> info = decodeUniqueId(id);
  if (!info.ok()) return;
  (void)info->root.toString();
  UniqueId again = encodeUniqueId(*info);
  FUZZ_CHECK(std::memcmp(again.bytes, id.bytes, 6) == 0);
  FUZZ_CHECK(std::memcmp(again.bytes + 8, id.bytes + 8, kCheckedBytes - 8) == 0);
  Result<UniqueIdInfo> back = decodeUniqueId(again);
  FUZZ_CHECK(back.ok() && secretsEqual(back->secret.data(), info->secret.data()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  UniqueId id{};
  std::memcpy(id.bytes, data, std::min(size, sizeof(id.bytes)));
  decodeAndCheck(id);
  auto* bytes = reinterpret_cast<uint8_t*>(id.bytes);
  putU32(bytes, kUniqueIdMagic);
  bytes[4] = 0;
  bytes[5] = kUniqueIdVersion;
  putU32(bytes + kCheckedBytes, fnv1a(bytes, kCheckedBytes));
  decodeAndCheck(id);
  return 0;
}
