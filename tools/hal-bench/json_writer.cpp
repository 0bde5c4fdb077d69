#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace bench {

std::string JsonWriter::escape(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
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
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * has_element_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_ += ',';
    has_element_.back() = true;
    newline();
  }
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  has_element_.push_back(false);
}

void JsonWriter::end_object() {
  const bool any = has_element_.back();
  has_element_.pop_back();
  if (any) newline();
  out_ += '}';
}

void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  has_element_.push_back(false);
}

void JsonWriter::end_array() {
  const bool any = has_element_.back();
  has_element_.pop_back();
  if (any) newline();
  out_ += ']';
}

void JsonWriter::key(const std::string& name) {
  before_value();
  out_ += escape(name);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::value(const std::string& text) {
  before_value();
  out_ += escape(text);
}

void JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", number);
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

}  // namespace bench
