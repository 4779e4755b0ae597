// LineBuffer: appends text, integers and JSON strings into caller-owned fixed memory. No allocation
// and no library calls, so the recorder can format records inside a signal handler. Writes past
// the capacity are dropped and remembered (overflow()), never overrun.
// The trace writer formats every record through here, so the common pieces are written in whole:
// a key or text given as a literal is copied with its length known at compile time, a number is
// written straight into place, each with one bounds check (a piece that does not fit goes the
// byte-by-byte way, which cuts it where the memory ends).
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
  void clear() {
    size_ = 0;
    overflow_ = false;
  }

  void put(char c) {
    if (size_ < capacity_) data_[size_++] = c;
    else overflow_ = true;
  }
  void put(std::string_view text) {
    if (text.size() <= room()) {
      for (size_t i = 0; i < text.size(); ++i) data_[size_ + i] = text[i];
      size_ += text.size();
      return;
    }
    for (char c : text) put(c);
  }
  // A character array: a literal, or a fixed field (up to its first NUL, as for a C string). For a
  // literal the compiler knows the length, and the copy is a few stores.
  template <size_t N>
  void put(const char (&text)[N]) {
    const size_t length = boundedLength(text);
    if (length <= room()) {
      __builtin_memcpy(data_ + size_, text, length);
      size_ += length;
      return;
    }
    put(std::string_view(text, length));
  }
  void putUint(uint64_t value) {
    int digits = decimalDigits(value);
    if (static_cast<size_t>(digits) > room()) {
      char text[20];
      for (int i = digits - 1; i >= 0; --i, value /= 10) text[i] = static_cast<char>('0' + value % 10);
      put(std::string_view(text, static_cast<size_t>(digits)));
      return;
    }
    char* end = data_ + size_ + digits;
    while (value >= 100) {
      const char* pair = kPairs + 2 * (value % 100);
      value /= 100;
      *--end = pair[1];
      *--end = pair[0];
    }
    if (value >= 10) {
      *--end = kPairs[2 * value + 1];
      *--end = kPairs[2 * value];
    } else {
      *--end = static_cast<char>('0' + value);
    }
    size_ += static_cast<size_t>(digits);
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
    char text[18] = {'0', 'x'};
    for (int i = 17; i >= 2; --i, value >>= 4) text[i] = kHex[value & 0xf];
    if (sizeof(text) <= room()) {
      __builtin_memcpy(data_ + size_, text, sizeof(text));
      size_ += sizeof(text);
      return;
    }
    put(std::string_view(text, sizeof(text)));
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
    if (needsComma()) put(',');
    put('"');
    put(name);
    put("\":");
  }
  // The same for a key given as a character array (the schema's keys are literals).
  template <size_t N>
  void key(const char (&name)[N]) {
    const bool comma = needsComma();
    const size_t length = boundedLength(name);
    if (length + 4 <= room()) {
      char* out = data_ + size_;
      if (comma) *out++ = ',';
      *out++ = '"';
      __builtin_memcpy(out, name, length);
      out += length;
      *out++ = '"';
      *out++ = ':';
      size_ = static_cast<size_t>(out - data_);
      return;
    }
    key(std::string_view(name, length));
  }

 private:
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  size_t room() const { return capacity_ - size_; }
  bool needsComma() const { return size_ > 0 && data_[size_ - 1] != '{'; }  // not the object's first field
  // Up to the first NUL and never past the array (a fixed field may be full); the compiler folds it
  // for a literal.
  template <size_t N>
  static size_t boundedLength(const char (&text)[N]) {
    size_t length = 0;
    while (length < N && text[length] != '\0') ++length;
    return length;
  }
  // Digits of `value` in base 10: from its bit length (log10(2) ~ 1233 / 4096), one comparison.
  static int decimalDigits(uint64_t value) {
    static constexpr uint64_t kPowers[20] = {1ull,
                                             10ull,
                                             100ull,
                                             1000ull,
                                             10000ull,
                                             100000ull,
                                             1000000ull,
                                             10000000ull,
                                             100000000ull,
                                             1000000000ull,
                                             10000000000ull,
                                             100000000000ull,
                                             1000000000000ull,
                                             10000000000000ull,
                                             100000000000000ull,
                                             1000000000000000ull,
                                             10000000000000000ull,
                                             100000000000000000ull,
                                             1000000000000000000ull,
                                             10000000000000000000ull};
    int bits = 64 - __builtin_clzll(value | 1);
    int guess = (bits * 1233) >> 12;  // digits - 1 or digits
    int digits = guess + (value >= kPowers[guess] ? 1 : 0);
    return digits == 0 ? 1 : digits;  // 0 is written "0"
  }

  char* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool overflow_ = false;
};

}  // namespace nshim::trace
