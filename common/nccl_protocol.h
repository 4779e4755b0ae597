// NCCL's protocols as they look on the wire. NCCL moves a message with one of three protocols:
// Simple (the payload as it is), LL (each 4-byte word of payload followed by a 4-byte flag: twice
// the payload) and LL128 (128-byte lines of 120 payload bytes and an 8-byte flag: 16/15 of it).
// The engine frames a message the same way (protocol_framing_transport.h), so that a replay puts
// NCCL's bytes on the fabric; the flags carry a value derived from the message's tag, which the
// receiver checks on every word or line before it copies the payload out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nshim {

// kAuto: not decided (a trace that did not record it, no option forcing one); moves as Simple.
enum class Protocol : uint8_t { kAuto = 0, kSimple = 1, kLL = 2, kLL128 = 3 };
const char* protocolName(Protocol protocol);  // "auto", "simple", "ll", "ll128"
// Those names in any case (NCCL writes "SIMPLE", "LL", "LL128"). False for anything else.
bool parseProtocol(std::string_view text, Protocol* out);

// Bytes on the wire for `payload` bytes: LL twice the payload (a last word of k < 4 bytes takes k
// bytes of flag), LL128 ceil(payload / 120) lines of 128; Simple and kAuto the payload itself.
size_t protocolWireBytes(Protocol protocol, size_t payload);
// The flag value every line of a message with this tag carries (never 0).
uint32_t protocolLineFlag(uint64_t tag);

// Writes protocolWireBytes(protocol, bytes) bytes at `wire` (LL or LL128; the tail of LL128's last
// line is zero).
void encodeProtocolLines(Protocol protocol, const void* payload, size_t bytes, void* wire, uint32_t flag);
// Copies the payload at `wire` to `payload` when every LL word or LL128 line carries `flag`;
// otherwise returns false with the index of the first word or line that does not (nothing is
// guaranteed copied).
bool decodeProtocolLines(Protocol protocol, const void* wire, size_t bytes, void* payload, uint32_t flag,
                         size_t* badLine);

}  // namespace nshim
