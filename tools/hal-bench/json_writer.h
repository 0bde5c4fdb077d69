// JsonWriter: a small streaming JSON writer with correct string escaping, enough for hal-bench's
// report (objects, arrays, strings, numbers, booleans, null). Non-finite numbers become null, as
// JSON has no spelling for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // Writes "key": inside an object; the next call writes its value.
  void key(const std::string& name);
  void value(const std::string& text);
  void value(const char* text) { value(std::string(text)); }
  void value(double number);
  void value(int64_t number);
  void value(uint64_t number);
  void value(uint32_t number) { value(static_cast<uint64_t>(number)); }
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(bool flag);
  void null();
  // Shorthands for key(name) followed by value(v).
  template <typename T>
  void field(const std::string& name, const T& v) {
    key(name);
    value(v);
  }
  const std::string& text() const { return out_; }

  static std::string escape(const std::string& text);

 private:
  void before_value();
  void newline();
  std::string out_;
  // One entry per open container: whether it has any element yet.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace bench
