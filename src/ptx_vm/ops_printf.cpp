// vprintf, what CUDA's device printf compiles to: vprintf(format, arguments), both generic
// addresses; the arguments are packed one after another, each aligned to its size (int, char
// and short as 4 bytes, long, long long and pointers as 8, float promoted to an 8-byte double).
//
// Each lane's text is formatted as C's printf would (flags, width and precision as digits or
// '*', the h, hh, l, ll, j, z and t length modifiers; d i u o x X c s p f F e E g G a A and %%) and
// written to the host's standard output, the lanes of one instruction in order under one lock, so
// lines of different threads do not interleave. Unlike C's printf, and as CUDA documents, the
// result is the number of arguments read (-1 for a null format). The format and every string
// argument are read through the memory checks, so a bad pointer faults as a load would; a string is
// read up to its terminator or kMaxText bytes.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "ptx_vm/decode.h"

namespace hal::ptx_vm {
namespace {

constexpr uint32_t kMaxText = 4096;
constexpr int kMaxField = 1 << 16;  // longer fields (a width of 100000) print a marker instead

// The NUL-terminated text at generic address |address|; false after a fault.
bool read_text(Exec& x, uint32_t lane, uint64_t address, std::string* out) {
  out->clear();
  for (uint32_t i = 0; i < kMaxText; ++i) {
    const uint8_t* p = generic_at(x, address + i, 1, 1, Access::kRead, lane);
    if (p == nullptr) return false;
    if (*p == 0) break;
    out->push_back(static_cast<char>(*p));
  }
  return true;
}

// Appends |spec| (a C conversion specification built from the format) applied to |value|.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
template <typename V>
void append(std::string* out, const std::string& spec, V value) {
  const int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n < 0 || n > kMaxField) {
    *out += "<printf field too wide>";
    return;
  }
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(n) + 1);
  std::snprintf(&(*out)[at], static_cast<size_t>(n) + 1, spec.c_str(), value);
  out->resize(at + static_cast<size_t>(n));
}
#pragma GCC diagnostic pop

// Formats one lane's call into |out|; |count| receives the number of arguments read. False
// after a fault.
bool format(Exec& x, uint32_t lane, const std::string& f, uint64_t args, std::string* out,
            int32_t* count) {
  uint64_t at = args;
  const auto next = [&](uint32_t size, uint64_t* value) {
    at = (at + size - 1) / size * size;
    const uint8_t* p = generic_at(x, at, size, size, Access::kRead, lane);
    if (p == nullptr) return false;
    *value = size == 8 ? load_as<uint64_t>(p) : uint64_t{load_as<uint32_t>(p)};
    at += size;
    ++*count;
    return true;
  };
  const size_t n = f.size();
  for (size_t i = 0; i < n;) {
    if (f[i] != '%') {
      *out += f[i++];
      continue;
    }
    size_t j = i + 1;
    if (j < n && f[j] == '%') {
      *out += '%';
      i = j + 1;
      continue;
    }
    // The specification: flags, then width and precision, each digits or '*' (an int
    // argument, read before the value; a negative width is the '-' flag). Both are rebuilt as
    // digits and bounded, so no field can ask for gigabytes of padding.
    std::string spec = "%";
    while (j < n && std::strchr("-+ #0", f[j]) != nullptr) spec += f[j++];
    bool too_wide = false;
    const auto number = [&](bool precision) -> bool {
      int64_t value = 0;
      if (j < n && f[j] == '*') {
        ++j;
        uint64_t v = 0;
        if (!next(4, &v)) return false;
        value = static_cast<int32_t>(v);
        if (value < 0) {
          if (precision) return true;  // a negative precision is as if none were given
          spec += '-';
          value = -value;
        }
      } else if (j < n && f[j] >= '0' && f[j] <= '9') {
        while (j < n && f[j] >= '0' && f[j] <= '9') {
          value = std::min<int64_t>(value * 10 + (f[j++] - '0'), int64_t{1} << 40);
        }
      } else if (!precision) {
        return true;
      }
      too_wide = too_wide || value > kMaxField;
      if (precision) spec += '.';
      spec += std::to_string(value);
      return true;
    };
    if (!number(false)) return false;
    if (j < n && f[j] == '.') {
      ++j;
      if (!number(true)) return false;
    }
    const size_t length_at = j;
    while (j < n && std::strchr("hljztLq", f[j]) != nullptr) ++j;
    if (j >= n) {  // a conversion cut off by the end: printed as written
      *out += f.substr(i);
      break;
    }
    const size_t before = out->size();
    const std::string length = f.substr(length_at, j - length_at);
    const bool wide = !length.empty() && length != "h" && length != "hh";
    const char conversion = f[j];
    uint64_t v = 0;
    switch (conversion) {
      case 'd':
      case 'i': {
        if (!next(wide ? 8 : 4, &v)) return false;
        long long s = wide ? static_cast<long long>(v) : static_cast<int32_t>(v);
        if (length == "h") s = static_cast<int16_t>(s);
        if (length == "hh") s = static_cast<int8_t>(s);
        append(out, spec + "ll" + conversion, s);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        if (!next(wide ? 8 : 4, &v)) return false;
        if (length == "h") v = static_cast<uint16_t>(v);
        if (length == "hh") v = static_cast<uint8_t>(v);
        append(out, spec + "ll" + conversion, static_cast<unsigned long long>(v));
        break;
      }
      case 'c':
        if (!next(4, &v)) return false;
        append(out, spec + "c", static_cast<int>(static_cast<uint8_t>(v)));
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        if (!next(8, &v)) return false;
        double d;
        std::memcpy(&d, &v, 8);
        append(out, spec + conversion, d);
        break;
      }
      case 's': {
        if (!next(8, &v)) return false;
        std::string text = "(null)";
        if (v != 0 && !read_text(x, lane, v, &text)) return false;
        append(out, spec + "s", text.c_str());
        break;
      }
      case 'p':
        if (!next(8, &v)) return false;
        append(out, spec + "p", reinterpret_cast<const void*>(static_cast<uintptr_t>(v)));
        break;
      default:  // not a conversion printf knows: printed as written
        *out += f.substr(i, j + 1 - i);
        break;
    }
    if (too_wide) {  // the value was read (the arguments stay in step), the field is not printed
      out->resize(before);
      *out += "<printf field too wide>";
    }
    i = j + 1;
  }
  return true;
}

void vprintf_op(Exec& x, const Op& op, uint32_t mask) {
  const auto& info = *static_cast<const PrintfInfo*>(op.ext);
  std::string out;
  std::string f;
  for_lanes(mask, [&](uint32_t lane) {
    if (x.faulted) return;
    const uint8_t* fp = local_at(x, info.format, 8, 8, Access::kRead, lane);
    const uint8_t* ap =
        fp != nullptr ? local_at(x, info.arguments, 8, 8, Access::kRead, lane) : nullptr;
    if (ap == nullptr) return;
    const uint64_t format_address = load_as<uint64_t>(fp);
    int32_t count = -1;
    if (format_address != 0) {
      count = 0;
      const size_t lane_start = out.size();
      if (!read_text(x, lane, format_address, &f) ||
          !format(x, lane, f, load_as<uint64_t>(ap), &out, &count)) {
        out.resize(lane_start);  // a lane that faulted prints nothing
        return;
      }
    }
    if (info.result != kNoRef) {
      uint8_t* r = local_at(x, info.result, 4, 4, Access::kWrite, lane);
      if (r != nullptr) store_as<int32_t>(r, count);
    }
  });
  if (out.empty()) return;
  static std::mutex output;
  std::lock_guard<std::mutex> lock(output);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

Handler vprintf_handler() {
  return vprintf_op;
}

}  // namespace hal::ptx_vm
