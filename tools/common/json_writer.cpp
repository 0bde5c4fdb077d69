// The JSON writer of json_writer.h.
#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace hal_tools {

namespace {

// The length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string JsonWriter::quote(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(text, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text, i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(has_value_.size() * 2, ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_value_.empty()) {
    if (has_value_.back()) out_ += ',';
    has_value_.back() = true;
    newline();
  }
}

JsonWriter& JsonWriter::key(const std::string& name) {
  before_value();
  out_ += quote(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  has_value_.push_back(false);
}

void JsonWriter::end_object() {
  const bool had = has_value_.back();
  has_value_.pop_back();
  if (had) newline();
  out_ += '}';
  if (has_value_.empty()) out_ += '\n';
}

void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  has_value_.push_back(false);
}

void JsonWriter::end_array() {
  const bool had = has_value_.back();
  has_value_.pop_back();
  if (had) newline();
  out_ += ']';
}

void JsonWriter::value(const std::string& text) {
  before_value();
  out_ += quote(text);
}

void JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", number);
  out_ += buf;
}

void JsonWriter::value(int64_t number) {
  before_value();
  out_ += std::to_string(number);
}

void JsonWriter::value(uint64_t number) {
  before_value();
  out_ += std::to_string(number);
}

void JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
}

void JsonWriter::null() {
  before_value();
  out_ += "null";
}

}  // namespace hal_tools
