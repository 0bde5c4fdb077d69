// The driver log (logs.h) and CUDA 12.9's cuLogs* entry points.
#include "ptx_cpu/logs.h"

#include "ptx_cpu/entry.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <vector>

namespace hal::ptx_cpu {
namespace {

struct Message {
  CUlogLevel level;
  std::string text;
};

struct Callback {
  CUlogsCallback function;
  void* data;
};

// The header dumps start with when older messages were lost since the iterator.
constexpr std::string_view kTruncated =
    "[earlier messages dropped: they do not fit in the buffer, or the 25600-byte log lost them]";

class Log {
 public:
  void write(CUlogLevel level, std::string_view message) {
    if (message.size() > kLogCapacity) message = message.substr(0, kLogCapacity);
    std::vector<Callback> callbacks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      messages_.push_back(Message{level, std::string(message)});
      bytes_ += message.size();
      ++next_;
      while (bytes_ > kLogCapacity) {
        bytes_ -= messages_.front().text.size();
        messages_.pop_front();
      }
      callbacks.assign(callbacks_.begin(), callbacks_.end());
      write_file(message);
    }
    // Outside the lock: a callback may take as long as it likes, and may read the log.
    for (const Callback& callback : callbacks) {
      std::string copy(message);  // the callback gets a writable, NUL-terminated string
      callback.function(callback.data, level, copy.data(), copy.size());
    }
  }

  CUlogsCallbackHandle add(CUlogsCallback function, void* data) {
    std::lock_guard<std::mutex> lock(mutex_);
    callbacks_.push_back(Callback{function, data});
    // The handle is the address of the list node, stable until it is removed.
    return reinterpret_cast<CUlogsCallbackHandle>(&callbacks_.back());
  }

  bool remove(CUlogsCallbackHandle handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
      if (reinterpret_cast<CUlogsCallbackHandle>(&*it) == handle) {
        callbacks_.erase(it);
        return true;
      }
    }
    return false;
  }

  CUlogIterator current() {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_;
  }

  // The messages from *iterator (all kept ones when null), newline-separated, and advances it.
  // When they do not all fit in |limit| bytes (or older ones were lost), a line saying so comes
  // first and then as many of the newest as fit; *nothing_fits when not even the newest does.
  std::string dump(CUlogIterator* iterator, size_t limit, bool* nothing_fits) {
    std::lock_guard<std::mutex> lock(mutex_);
    const CUlogIterator first_kept = next_ - static_cast<CUlogIterator>(messages_.size());
    CUlogIterator from = iterator != nullptr ? *iterator : first_kept;
    // Iterators count modulo 2^32; one from before the oldest kept message lost some.
    bool lost = static_cast<CUlogIterator>(next_ - from) > messages_.size();
    if (lost) from = first_kept;
    const size_t count = static_cast<CUlogIterator>(next_ - from);
    // How many of the newest messages fit in |budget| bytes, newline-separated.
    const auto newest_fitting = [&](size_t budget) {
      size_t taken = 0;
      size_t bytes = 0;
      while (taken < count) {
        const size_t extra =
            messages_[messages_.size() - 1 - taken].text.size() + (taken > 0 ? 1 : 0);
        if (bytes + extra > budget) break;
        bytes += extra;
        ++taken;
      }
      return taken;
    };
    size_t taken = newest_fitting(limit);
    bool header = lost || taken < count;
    if (header) {
      const size_t reserved = kTruncated.size() + 1;
      const size_t with_header = limit > reserved ? newest_fitting(limit - reserved) : 0;
      if (with_header > 0) {
        taken = with_header;
      } else {
        header = false;  // no room for the line: the newest messages matter more
      }
    }
    *nothing_fits = count > 0 && taken == 0;
    std::string out;
    if (header) {
      out += kTruncated;
      out += '\n';
    }
    for (size_t i = messages_.size() - taken; i < messages_.size(); ++i) {
      out += messages_[i].text;
      if (i + 1 < messages_.size()) out += '\n';
    }
    if (iterator != nullptr && !*nothing_fits) *iterator = next_;
    return out;
  }

 private:
  // Called with the lock held, so that lines from several threads never interleave.
  void write_file(std::string_view message) {
    if (!file_checked_) {
      file_checked_ = true;
      const char* target = std::getenv("CUDA_LOG_FILE");
      if (target != nullptr && *target != '\0') {
        if (std::strcmp(target, "stdout") == 0) {
          file_ = stdout;
        } else if (std::strcmp(target, "stderr") == 0) {
          file_ = stderr;
        } else {
          file_ = std::fopen(target, "a");
        }
      }
    }
    if (file_ == nullptr) return;
    std::fprintf(file_, "%.*s\n", static_cast<int>(message.size()), message.data());
    std::fflush(file_);
  }

  std::mutex mutex_;
  std::deque<Message> messages_;
  size_t bytes_ = 0;
  CUlogIterator next_ = 0;  // sequence number of the next message
  std::list<Callback> callbacks_;
  bool file_checked_ = false;
  FILE* file_ = nullptr;
};

// Never destroyed: worker threads may log while the process exits.
Log& the_log() {
  static Log* log = new Log();
  return *log;
}

}  // namespace

void log_message(CUlogLevel level, std::string_view message) {
  the_log().write(level, message);
}

}  // namespace hal::ptx_cpu

using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::the_log;

// The log needs no initialisation: it also explains why cuInit failed.
PTXCPU_ENTRY CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                                     CUlogsCallbackHandle* callback_out) {
  return entry(__func__, [&] {
    if (callbackFunc == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "callbackFunc is NULL");
    CUlogsCallbackHandle handle = the_log().add(callbackFunc, userData);
    if (callback_out != nullptr) *callback_out = handle;
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  return entry(__func__, [&] {
    if (callback == nullptr || !the_log().remove(callback)) {
      return fail(CUDA_ERROR_INVALID_VALUE, "not a registered log callback");
    }
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  return entry(__func__, [&] {
    if (iterator_out == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "iterator_out is NULL");
    if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "flags must be 0");
    *iterator_out = the_log().current();
    return CUDA_SUCCESS;
  });
}

// Writes (truncating) the file: the messages from *iterator, one per line.
PTXCPU_ENTRY CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile,
                                               unsigned int flags) {
  return entry(__func__, [&] {
    if (pathToFile == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pathToFile is NULL");
    if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "flags must be 0");
    FILE* file = std::fopen(pathToFile, "w");
    if (file == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  std::string("cannot open '") + pathToFile + "': " + std::strerror(errno));
    }
    bool nothing_fits = false;
    const std::string text = the_log().dump(iterator, SIZE_MAX, &nothing_fits);
    const bool written =
        text.empty() || (std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                         std::fputc('\n', file) != EOF);
    if (std::fclose(file) != 0 || !written) {
      return fail(CUDA_ERROR_INVALID_VALUE, std::string("cannot write '") + pathToFile + "'");
    }
    return CUDA_SUCCESS;
  });
}

// As documented for CUDA 12.9: NUL-terminated, newline between messages, *size receives the
// bytes written without the NUL; when not all messages fit, a line saying so comes first and the
// newest messages follow; when not even the newest fits, *size is 0 and the answer is
// CUDA_ERROR_INVALID_VALUE.
PTXCPU_ENTRY CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer,
                                                 size_t* size, unsigned int flags) {
  return entry(__func__, [&] {
    if (buffer == nullptr || size == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "buffer and size must not be NULL");
    }
    if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "flags must be 0");
    if (*size == 0) return CUDA_ERROR_INVALID_VALUE;  // not even room for the NUL
    bool nothing_fits = false;
    const std::string text = the_log().dump(iterator, *size - 1, &nothing_fits);
    if (nothing_fits) {
      *size = 0;
      buffer[0] = '\0';
      return CUDA_ERROR_INVALID_VALUE;  // not logged: it would only make the log longer
    }
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    *size = text.size();
    return CUDA_SUCCESS;
  });
}
