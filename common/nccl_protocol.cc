// LL and LL128 lines (nccl_protocol.h).
#include "common/nccl_protocol.h"

#include <cstring>

#include "common/named_choice.h"

namespace nshim {
namespace {

constexpr size_t kLlWordBytes = 4;       // LL: each 4-byte word of payload, then a 4-byte flag
constexpr size_t kLl128LineBytes = 128;  // 120 payload bytes, then the flag twice (8 bytes)
constexpr size_t kLl128PayloadBytes = 120;

size_t linesOf(size_t bytes, size_t payloadPerLine) { return (bytes + payloadPerLine - 1) / payloadPerLine; }

// A last word of k < 4 bytes goes with the first k bytes of its flag: the wire is exactly twice the
// payload, as NCCL's LL is for the sizes it moves (whole 16-byte lines of two words and two flags).
void encodeLl(const char* in, size_t bytes, char* out, uint32_t flag) {
  char flagBytes[kLlWordBytes];
  std::memcpy(flagBytes, &flag, sizeof(flagBytes));
  for (size_t offset = 0; offset < bytes; offset += kLlWordBytes) {
    const size_t take = bytes - offset < kLlWordBytes ? bytes - offset : kLlWordBytes;
    std::memcpy(out + 2 * offset, in + offset, take);
    std::memcpy(out + 2 * offset + take, flagBytes, take);
  }
}

bool decodeLl(const char* in, size_t bytes, char* out, uint32_t flag, size_t* badLine) {
  char flagBytes[kLlWordBytes];
  std::memcpy(flagBytes, &flag, sizeof(flagBytes));
  for (size_t offset = 0; offset < bytes; offset += kLlWordBytes) {
    const size_t take = bytes - offset < kLlWordBytes ? bytes - offset : kLlWordBytes;
    if (std::memcmp(in + 2 * offset + take, flagBytes, take) != 0) {
      *badLine = offset / kLlWordBytes;
      return false;
    }
    std::memcpy(out + offset, in + 2 * offset, take);
  }
  return true;
}

void encodeLl128(const char* in, size_t bytes, char* out, uint32_t flag) {
  const size_t lines = linesOf(bytes, kLl128PayloadBytes);
  const uint32_t flags[2] = {flag, flag};
  for (size_t l = 0; l < lines; ++l) {
    char* line = out + l * kLl128LineBytes;
    const size_t offset = l * kLl128PayloadBytes;
    const size_t take = bytes - offset < kLl128PayloadBytes ? bytes - offset : kLl128PayloadBytes;
    std::memcpy(line, in + offset, take);
    std::memset(line + take, 0, kLl128PayloadBytes - take);
    std::memcpy(line + kLl128PayloadBytes, flags, sizeof(flags));
  }
}

bool decodeLl128(const char* in, size_t bytes, char* out, uint32_t flag, size_t* badLine) {
  const size_t lines = linesOf(bytes, kLl128PayloadBytes);
  for (size_t l = 0; l < lines; ++l) {
    const char* line = in + l * kLl128LineBytes;
    uint32_t flags[2];
    std::memcpy(flags, line + kLl128PayloadBytes, sizeof(flags));
    if (flags[0] != flag || flags[1] != flag) {
      *badLine = l;
      return false;
    }
    const size_t offset = l * kLl128PayloadBytes;
    std::memcpy(out + offset, line, bytes - offset < kLl128PayloadBytes ? bytes - offset : kLl128PayloadBytes);
  }
  return true;
}

}  // namespace

const char* protocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kSimple: return "simple";
    case Protocol::kLL: return "ll";
    case Protocol::kLL128: return "ll128";
    case Protocol::kAuto: break;
  }
  return "auto";
}

bool parseProtocol(std::string_view text, Protocol* out) {
  return parseNamedChoice(text, {Protocol::kAuto, Protocol::kSimple, Protocol::kLL, Protocol::kLL128}, protocolName,
                          out);
}

size_t protocolWireBytes(Protocol protocol, size_t payload) {
  switch (protocol) {
    case Protocol::kLL: return 2 * payload;
    case Protocol::kLL128: return linesOf(payload, kLl128PayloadBytes) * kLl128LineBytes;
    default: return payload;
  }
}

uint32_t protocolLineFlag(uint64_t tag) { return static_cast<uint32_t>((tag * 0x9E3779B97F4A7C15ull) >> 32) | 1u; }

void encodeProtocolLines(Protocol protocol, const void* payload, size_t bytes, void* wire, uint32_t flag) {
  const char* in = static_cast<const char*>(payload);
  char* out = static_cast<char*>(wire);
  if (protocol == Protocol::kLL) encodeLl(in, bytes, out, flag);
  else if (protocol == Protocol::kLL128) encodeLl128(in, bytes, out, flag);
  else std::memcpy(out, in, bytes);
}

bool decodeProtocolLines(Protocol protocol, const void* wire, size_t bytes, void* payload, uint32_t flag,
                         size_t* badLine) {
  const char* in = static_cast<const char*>(wire);
  char* out = static_cast<char*>(payload);
  if (protocol == Protocol::kLL) return decodeLl(in, bytes, out, flag, badLine);
  if (protocol == Protocol::kLL128) return decodeLl128(in, bytes, out, flag, badLine);
  std::memcpy(out, in, bytes);
  return true;
}

}  // namespace nshim
