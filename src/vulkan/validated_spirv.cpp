#include "vulkan/validated_spirv.h"

#include <functional>
#include <string_view>

namespace hal::vulkan {

uint64_t ValidatedSpirv::hash(const std::vector<uint32_t>& words) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(words.data()), words.size() * 4));
}

bool ValidatedSpirv::contains(const std::vector<uint32_t>& words) {
  const uint64_t h = hash(words);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->hash != h || it->words != words) continue;
    entries_.splice(entries_.begin(), entries_, it);
    return true;
  }
  return false;
}

void ValidatedSpirv::passed(const std::vector<uint32_t>& words) {
  const size_t size = words.size() * 4;
  if (size > kBudgetBytes) return;
  const uint64_t h = hash(words);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.hash == h && entry.words == words) return;  // another thread got there first
  }
  entries_.push_front(Entry{h, words});
  bytes_ += size;
  while (bytes_ > kBudgetBytes) {
    bytes_ -= entries_.back().words.size() * 4;
    entries_.pop_back();
  }
}

size_t ValidatedSpirv::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace hal::vulkan
