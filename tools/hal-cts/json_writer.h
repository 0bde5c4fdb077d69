// A small streaming JSON writer: objects, arrays, strings (escaped, invalid UTF-8 replaced),
// numbers (non-finite values become null), booleans and null. It places the commas; the caller
// pairs begin_* and end_*.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cts {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The key of the next value inside an object.
  JsonWriter& key(const std::string& name);
  void string(const std::string& value);
  void number(double value);
  void integer(int64_t value);
  void boolean(bool value);
  void null();

  // key(name) followed by the value.
  void field(const std::string& name, const std::string& value) { key(name).string(value); }
  void field(const std::string& name, const char* value) { key(name).string(value); }
  void field(const std::string& name, double value) { key(name).number(value); }
  void field_int(const std::string& name, int64_t value) { key(name).integer(value); }
  void field_bool(const std::string& name, bool value) { key(name).boolean(value); }

  const std::string& text() const { return out_; }

  // |value| as a JSON string literal, quotes included.
  static std::string quote(const std::string& value);

 private:
  void before_value();
  void newline();

  std::string out_;
  // One entry per open container: whether it already holds a value.
  std::vector<bool> has_value_;
  bool after_key_ = false;
};

}  // namespace cts
