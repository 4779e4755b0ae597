// LineBuffer: appends text, integers and JSON strings into caller-owned fixed memory. No allocation
// and no library calls, so the recorder can format records inside a signal handler. Writes past
// the capacity are dropped and remembered (overflow()), never overrun.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nshim::trace {

class LineBuffer {
 public:
  LineBuffer(char* data, size_t capacity) : data_(data), capacity_(capacity) {}

  size_t size() const { return size_; }
  bool overflow() const { return overflow_; }
  const char* data() const { return data_; }
  std::string_view view() const { return std::string_view(data_, size_); }
  void clear() { size_ = 0; overflow_ = false; }

  void put(char c) {
    if (size_ < capacity_) data_[size_++] = c;
    else overflow_ = true;
  }
  void put(std::string_view text) {
    for (char c : text) put(c);
  }
  void putUint(uint64_t value) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (n > 0) put(digits[--n]);
  }
  void putInt(int64_t value) {
    if (value < 0) {
      put('-');
      putUint(static_cast<uint64_t>(0) - static_cast<uint64_t>(value));
    } else {
      putUint(static_cast<uint64_t>(value));
    }
  }
  // "0x" and 16 lower-case hex digits.
  void putHex64(uint64_t value) {
    static constexpr char kHex[] = "0123456789abcdef";
    put("0x");
    for (int shift = 60; shift >= 0; shift -= 4) put(kHex[(value >> shift) & 0xf]);
  }
  // A quoted JSON string of at most maxLen bytes of `text` (stops at NUL); control characters,
  // quotes and backslashes are escaped; bytes >= 0x80 pass through.
  void putJsonString(const char* text, size_t maxLen) {
    static constexpr char kHex[] = "0123456789abcdef";
    put('"');
    for (size_t i = 0; i < maxLen && text[i] != '\0'; ++i) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c == '"' || c == '\\') {
        put('\\');
        put(static_cast<char>(c));
      } else if (c == '\n') {
        put("\\n");
      } else if (c == '\t') {
        put("\\t");
      } else if (c < 0x20 || c == 0x7f) {
        put("\\u00");
        put(kHex[c >> 4]);
        put(kHex[c & 0xf]);
      } else {
        put(static_cast<char>(c));
      }
    }
    put('"');
  }
  // `"key":` with the leading comma unless it is the first field.
  void key(std::string_view name) {
    if (size_ > 0 && data_[size_ - 1] != '{') put(',');
    put('"');
    put(name);
    put("\":");
  }

 private:
  char* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool overflow_ = false;
};

}  // namespace nshim::trace
