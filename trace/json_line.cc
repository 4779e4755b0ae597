// The flat JSON object parser: a cursor over the line, one function per token, every size bounded.
// Strings are decoded (escapes, \u with surrogate pairs to UTF-8); raw control characters are
// refused as JSON requires; integers keep full 64-bit range as sign + magnitude. The hot path
// allocates nothing: a string without escapes is a view into the line, one with escapes is decoded
// into the object's scratch buffer (reserved to the line's length first, so views into it hold).
#include "trace/json_line.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace nshim::trace {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Bit of a key in FlatJsonObject's duplicate filter: equal keys always share it.
uint64_t keyBit(std::string_view key) {
  unsigned h = static_cast<unsigned>(key.size()) * 7u;
  if (!key.empty()) h += static_cast<unsigned char>(key.front()) + 3u * static_cast<unsigned char>(key.back());
  return uint64_t(1) << (h & 63u);
}

class Cursor {
 public:
  Cursor(std::string_view text, std::string* scratch) : text_(text), scratch_(scratch) {}

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (atEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  size_t column() const { return pos_ + 1; }

  // A string after its opening quote: a view into the line when it holds no escape, else decoded
  // into the scratch buffer.
  bool readString(std::string_view* out, size_t limit, std::string* error) {
    const size_t start = pos_;
    while (true) {
      if (atEnd()) return fail(error, "unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        *out = text_.substr(start, pos_ - start);
        ++pos_;
        return true;
      }
      if (c == '\\') break;
      ++pos_;
      if (c < 0x20) return fail(error, "control character in string");
      if (pos_ - start > limit) return fail(error, fmt::format("string longer than {} bytes", limit));
    }
    const size_t first = scratch_->size();
    scratch_->append(text_.substr(start, pos_ - start));
    if (!decodeEscaped(limit, first, error)) return false;
    *out = std::string_view(scratch_->data() + first, scratch_->size() - first);
    return true;
  }

  // A number literal: integer (sign + magnitude) or, with fraction/exponent, kept as text.
  bool readNumber(JsonField* field, std::string* error) {
    size_t start = pos_;
    field->negative = consume('-');
    if (!isDigit(peek())) return fail(error, "bad number");
    bool leadingZero = peek() == '0';
    uint64_t value = 0;
    bool overflow = false;
    size_t digits = 0;
    while (pos_ < text_.size() && isDigit(text_[pos_])) {
      uint64_t d = static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > (UINT64_MAX - d) / 10) overflow = true;
      value = value * 10 + d;
      ++digits;
    }
    if (leadingZero && digits > 1) return fail(error, "number with a leading zero");
    bool integer = true;
    if (consume('.')) {
      integer = false;
      if (!isDigit(peek())) return fail(error, "bad fraction");
      while (isDigit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!isDigit(peek())) return fail(error, "bad exponent");
      while (isDigit(peek())) ++pos_;
    }
    if (pos_ - start > 64) return fail(error, "number literal too long");
    if (integer) {
      if (overflow) return fail(error, "integer out of 64-bit range");
      field->type = JsonType::kInteger;
      field->magnitude = value;
    } else {
      field->type = JsonType::kNumber;
      field->text = text_.substr(start, pos_ - start);
    }
    return true;
  }

  bool readWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

 private:
  static bool fail(std::string* error, std::string message) {
    *error = std::move(message);
    return false;
  }
  // The rest of a string from its first backslash, appended to the scratch buffer from `first`.
  bool decodeEscaped(size_t limit, size_t first, std::string* error) {
    std::string& out = *scratch_;
    while (true) {
      if (atEnd()) return fail(error, "unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail(error, "control character in string");
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
      } else {
        if (atEnd()) return fail(error, "unterminated escape");
        char e = text_[pos_++];
        switch (e) {
          case '"': out.push_back('"'); break;
          case '\\': out.push_back('\\'); break;
          case '/': out.push_back('/'); break;
          case 'b': out.push_back('\b'); break;
          case 'f': out.push_back('\f'); break;
          case 'n': out.push_back('\n'); break;
          case 'r': out.push_back('\r'); break;
          case 't': out.push_back('\t'); break;
          case 'u':
            if (!readUnicode(&out, error)) return false;
            break;
          default: return fail(error, "bad escape");
        }
      }
      if (out.size() - first > limit) return fail(error, fmt::format("string longer than {} bytes", limit));
    }
  }
  bool readHex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else return false;
    }
    *out = v;
    return true;
  }
  // A \u escape (a decoded code point is never longer in UTF-8 than its escape: the scratch
  // buffer's reserve holds).
  bool readUnicode(std::string* out, std::string* error) {
    uint32_t cp = 0;
    if (!readHex4(&cp)) return fail(error, "bad \\u escape");
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(error, "unpaired low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (!readWord("\\u") || !readHex4(&low) || low < 0xDC00 || low > 0xDFFF) {
        return fail(error, "unpaired high surrogate");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return true;
  }

  std::string_view text_;
  std::string* scratch_;
  size_t pos_ = 0;
};

Status fieldError(std::string_view key, const std::string& message) {
  return Status(Code::kInvalidArgument, fmt::format("field '{}': {}", key, message));
}

}  // namespace

const JsonField* FlatJsonObject::find(std::string_view key) const {
  for (size_t i = cursor_; i < count_; ++i) {
    if (fields_[i].key == key) {
      cursor_ = i + 1;
      return &fields_[i];
    }
  }
  for (size_t i = 0; i < cursor_ && i < count_; ++i) {
    if (fields_[i].key == key) {
      cursor_ = i + 1;
      return &fields_[i];
    }
  }
  return nullptr;
}

Status parseFlatJson(std::string_view line, FlatJsonObject* out) {
  out->count_ = 0;
  out->cursor_ = 0;
  out->keyBits_ = 0;
  out->scratch_.clear();
  out->scratch_.reserve(line.size());  // decoded strings are never longer than their source
  Cursor cur(line, &out->scratch_);
  std::string error;
  auto syntax = [&](const std::string& message) {
    return Status(Code::kInvalidArgument, fmt::format("column {}: {}", cur.column(), message));
  };
  cur.skipSpace();
  if (!cur.consume('{')) return syntax("expected '{' (a JSON object)");
  cur.skipSpace();
  if (!cur.consume('}')) {
    while (true) {
      cur.skipSpace();
      size_t keyColumn = cur.column();
      if (!cur.consume('"')) return syntax("expected a quoted key");
      JsonField& field = out->fields_[out->count_ < kMaxJsonFields ? out->count_ : kMaxJsonFields - 1];
      field = JsonField{};
      if (!cur.readString(&field.key, kMaxJsonKeyBytes, &error)) return syntax("key: " + error);
      const uint64_t bit = keyBit(field.key);
      bool duplicate = false;
      if ((out->keyBits_ & bit) != 0) {
        for (size_t i = 0; i < out->count_ && !duplicate; ++i) duplicate = out->fields_[i].key == field.key;
      }
      if (duplicate || out->count_ >= kMaxJsonFields) {
        return Status(Code::kInvalidArgument,
                      fmt::format("column {}: {}", keyColumn,
                                  duplicate ? fmt::format("duplicate field '{}'", field.key)
                                            : fmt::format("more than {} fields", kMaxJsonFields)));
      }
      out->keyBits_ |= bit;
      cur.skipSpace();
      if (!cur.consume(':')) return syntax(fmt::format("field '{}': expected ':'", field.key));
      cur.skipSpace();
      size_t valueColumn = cur.column();
      bool ok = true;
      char c = cur.peek();
      if (cur.consume('"')) {
        field.type = JsonType::kString;
        ok = cur.readString(&field.text, kMaxJsonStringBytes, &error);
      } else if (c == '-' || isDigit(c)) {
        ok = cur.readNumber(&field, &error);
      } else if (cur.readWord("true") || cur.readWord("false")) {
        field.type = JsonType::kBool;
        field.boolean = c == 't';
      } else if (cur.readWord("null")) {
        field.type = JsonType::kNull;
      } else if (c == '{' || c == '[') {
        ok = false;
        error = "nested objects and arrays are not part of the format";
      } else {
        ok = false;
        error = cur.atEnd() ? "missing value" : "expected a value";
      }
      if (!ok) {
        return Status(Code::kInvalidArgument, fmt::format("field '{}' (column {}): {}", field.key, valueColumn, error));
      }
      ++out->count_;
      cur.skipSpace();
      if (cur.consume(',')) continue;
      if (cur.consume('}')) break;
      return syntax("expected ',' or '}'");
    }
  }
  cur.skipSpace();
  if (!cur.atEnd()) return syntax("text after the closing '}'");
  return Status::Ok();
}

Status getStringView(const FlatJsonObject& obj, std::string_view key, std::string_view* out) {
  const JsonField* f = obj.find(key);
  if (f == nullptr) return fieldError(key, "missing");
  if (f->type != JsonType::kString) return fieldError(key, "expected a string");
  *out = f->text;
  return Status::Ok();
}

Status getString(const FlatJsonObject& obj, std::string_view key, std::string* out) {
  std::string_view text;
  NS_RETURN_IF_ERROR(getStringView(obj, key, &text));
  out->assign(text);
  return Status::Ok();
}

Status getInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, int64_t* out) {
  const JsonField* f = obj.find(key);
  if (f == nullptr) return fieldError(key, "missing");
  if (f->type != JsonType::kInteger) return fieldError(key, "expected an integer");
  bool fits = f->negative ? f->magnitude <= uint64_t(INT64_MAX) + 1 : f->magnitude <= uint64_t(INT64_MAX);
  int64_t value = 0;
  if (fits) value = f->negative ? int64_t(0 - f->magnitude) : int64_t(f->magnitude);
  if (!fits || value < lo || value > hi) {
    return fieldError(key, fmt::format("{}{} is outside [{}, {}]", f->negative ? "-" : "", f->magnitude, lo, hi));
  }
  *out = value;
  return Status::Ok();
}

Status getUint64(const FlatJsonObject& obj, std::string_view key, uint64_t* out) {
  const JsonField* f = obj.find(key);
  if (f == nullptr) return fieldError(key, "missing");
  if (f->type != JsonType::kInteger) return fieldError(key, "expected an integer");
  if (f->negative && f->magnitude != 0) return fieldError(key, "must not be negative");
  *out = f->magnitude;
  return Status::Ok();
}

Status getHex64(const FlatJsonObject& obj, std::string_view key, uint64_t* out) {
  std::string_view text;
  NS_RETURN_IF_ERROR(getStringView(obj, key, &text));
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return fieldError(key, "expected \"0x\" and 1 to 16 hex digits");
  }
  uint64_t value = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    char c = text[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return fieldError(key, "expected \"0x\" and 1 to 16 hex digits");
    value = (value << 4) | uint64_t(d);
  }
  *out = value;
  return Status::Ok();
}

Status getOptionalInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, int64_t* out) {
  if (obj.find(key) == nullptr) return Status::Ok();
  return getInt64(obj, key, lo, hi, out);
}

Status takeObjectField(std::string_view line, std::string_view key, std::string* rest, std::string* inner,
                       bool* found) {
  *found = false;
  // Index past a string's closing quote (or the line's end), escapes skipped.
  auto skipString = [&line](size_t open) {
    size_t i = open + 1;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\') ++i;
    }
    return std::min(i + 1, line.size());
  };
  int depth = 0;
  size_t keyStart = std::string_view::npos, keyEnd = 0;  // the last top-level string: [open, past close)
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      const size_t end = skipString(i);
      if (depth == 1) keyStart = i, keyEnd = end;
      i = end - 1;
      continue;
    }
    if (c == '{') {
      const bool isKey = depth == 1 && keyStart != std::string_view::npos && keyEnd - keyStart >= 2 &&
                         line.substr(keyStart + 1, keyEnd - keyStart - 2) == key;
      if (isKey) {
        size_t j = i + 1;
        for (; j < line.size() && line[j] != '}'; ++j) {
          if (line[j] == '{') return Status(Code::kInvalidArgument, fmt::format("field '{}': a nested object", key));
          if (line[j] == '"') j = skipString(j) - 1;
        }
        if (j >= line.size()) {
          return Status(Code::kInvalidArgument, fmt::format("field '{}': the object does not close", key));
        }
        *inner = std::string(line.substr(i, j + 1 - i));
        // The line without `"key":{...}` and one comma next to it.
        size_t from = keyStart, to = j + 1;
        const size_t after = line.find_first_not_of(" \t", to);
        const size_t before = from == 0 ? std::string_view::npos : line.find_last_not_of(" \t", from - 1);
        if (after != std::string_view::npos && line[after] == ',') {
          to = after + 1;
        } else if (before != std::string_view::npos && line[before] == ',') {
          from = before;
        }
        *rest = std::string(line.substr(0, from)) + std::string(line.substr(to));
        *found = true;
        return Status::Ok();
      }
      ++depth;
      keyStart = std::string_view::npos;
      continue;
    }
    if (c == '}') --depth;
    if (c != ' ' && c != '\t' && c != ':') keyStart = std::string_view::npos;  // a value or a comma: no key pending
  }
  return Status::Ok();
}

}  // namespace nshim::trace
