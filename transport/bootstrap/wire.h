// Bounds-checked big-endian encoding for the unique id and the bootstrap messages. A reader never
// reads past its span: running off the end sets a sticky failure flag and yields zeros, so parsers
// check ok() once at the end instead of trusting any length on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nshim {

class WireWriter {
 public:
  WireWriter(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}

  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void bytes(const void* src, size_t n) {
    if (!reserve(n)) return;
    std::memcpy(data_ + size_, src, n);
    size_ += n;
  }
  bool ok() const { return ok_; }
  size_t size() const { return size_; }

 private:
  bool reserve(size_t n) {
    if (!ok_ || n > capacity_ - size_) ok_ = false;
    return ok_;
  }
  void put(uint64_t v, size_t n) {
    if (!reserve(n)) return;
    for (size_t i = 0; i < n; ++i) data_[size_ + i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
    size_ += n;
  }

  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool ok_ = true;
};

class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  // Copies n bytes out (zeros when the input is too short).
  void bytes(void* dst, size_t n) {
    if (!take(n)) {
      std::memset(dst, 0, n);
      return;
    }
    std::memcpy(dst, data_ + offset_ - n, n);
  }
  // Pointer to the next n bytes, or nullptr when the input is too short.
  const uint8_t* view(size_t n) { return take(n) ? data_ + offset_ - n : nullptr; }
  bool ok() const { return ok_; }
  size_t offset() const { return offset_; }

 private:
  bool take(size_t n) {
    if (!ok_ || n > size_ - offset_) ok_ = false;
    if (ok_) offset_ += n;
    return ok_;
  }
  uint64_t get(size_t n) {
    if (!take(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | data_[offset_ - n + i];
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace nshim
