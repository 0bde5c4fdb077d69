// A small streaming JSON writer shared by the tools' reports: objects, arrays, strings (escaped;
// invalid UTF-8 replaced by U+FFFD), numbers (non-finite values become null, as JSON has no
// spelling for them), booleans and null. It places the commas and indentation; the caller pairs
// begin_* with end_*. Not thread-safe: one writer per report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hal_tools {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The key of the next value inside an object.
  JsonWriter& key(const std::string& name);
  void value(const std::string& text);
  void value(const char* text) { value(std::string(text)); }
  void value(double number);
  void value(int64_t number);
  void value(uint64_t number);
  void value(uint32_t number) { value(static_cast<uint64_t>(number)); }
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(bool flag);
  void null();

  // key(name) followed by value(v).
  template <typename T>
  void field(const std::string& name, const T& v) {
    key(name);
    value(v);
  }

  const std::string& text() const { return out_; }

  // |text| as a JSON string literal, quotes included.
  static std::string quote(const std::string& text);

 private:
  void before_value();
  void newline();

  std::string out_;
  // One entry per open container: whether it already holds a value.
  std::vector<bool> has_value_;
  bool after_key_ = false;
};

}  // namespace hal_tools
