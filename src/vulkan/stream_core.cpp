#include "vulkan/stream_core.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/device.h"
#include "vulkan/spirv_bounds_check.h"

#include <algorithm>
#include <cstring>

namespace hal::vulkan {
namespace {

constexpr uint32_t kPoolSets = 2 * StreamCore::kMaxCommandsPerBatch;
constexpr uint32_t kPoolBuffers = 16 * StreamCore::kMaxCommandsPerBatch;
constexpr uint32_t kPoolUniformBuffers = 4 * StreamCore::kMaxCommandsPerBatch;
constexpr uint64_t kWaitSliceNs = 100'000'000;  // re-check device loss every 100 ms

void memory_barrier(const VolkDeviceTable& vk, VkCommandBuffer cmd, VkPipelineStageFlags src,
                    VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = dst_access;
  vk.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace

StreamCore::StreamCore(VulkanDevice& device) : device_(device) {}

hal_status StreamCore::init() {
  const VolkDeviceTable& vk = device_.vk();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = device_.caps().queue_family;
  VkResult result = vk.vkCreateCommandPool(device_.handle(), &pool_info, nullptr, &command_pool_);
  if (result != VK_SUCCESS) return device_.check(result, "vkCreateCommandPool");

  VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type_info.initialValue = 0;
  VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  semaphore_info.pNext = &type_info;
  result = vk.vkCreateSemaphore(device_.handle(), &semaphore_info, nullptr, &semaphore_);
  if (result != VK_SUCCESS) return device_.check(result, "vkCreateSemaphore (timeline)");
  if (trace::on()) trace_row_ = trace::stream_row(device_.info);
  return HAL_SUCCESS;
}

StreamCore::~StreamCore() {
  if (!device_.lost() && last_submitted_ > 0 && semaphore_ != VK_NULL_HANDLE) {
    if (wait_value(last_submitted_) != HAL_SUCCESS) hal::clear_pending_error();
    // Seeing the last value signalled is not enough to destroy the semaphore: Mesa's common
    // queue code (lavapipe's, at least up to 22.3) releases a submission's wait on a timeline
    // semaphore only after it has signalled that submission's semaphores, so a batch that
    // waited on this semaphore (each of this stream's batches waits for the previous one, and
    // other streams' batches may wait on it too) can still be touching it once the host has
    // seen its signal; destroying it then makes the driver's queue thread lock a freed mutex
    // (a hang) or corrupt the heap (a crash later). A queue runs submissions in order, and every
    // batch that refers to this semaphore was submitted before the last reference to this core
    // went away, so one more submission, which waits on nothing and only signals, is finished
    // with only after all of them are: wait for it, then destroy.
    if (submit_retire_marker() != HAL_SUCCESS) hal::clear_pending_error();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Completion callbacks of batches that never ran (device lost) are dropped: their
    // destinations were never written by the device.
    for (auto& batch : in_flight_) destroy_batch(*batch);
    for (auto& batch : spare_) destroy_batch(*batch);
    if (open_) destroy_batch(*open_);
    if (chunk_) device_.memory().destroy_host_buffer(&chunk_->buffer);
    for (auto& chunk : free_chunks_) device_.memory().destroy_host_buffer(&chunk->buffer);
  }
  const VolkDeviceTable& vk = device_.vk();
  if (semaphore_ != VK_NULL_HANDLE) vk.vkDestroySemaphore(device_.handle(), semaphore_, nullptr);
  if (command_pool_ != VK_NULL_HANDLE) {
    vk.vkDestroyCommandPool(device_.handle(), command_pool_, nullptr);
  }
}

hal_status StreamCore::submit_retire_marker() {
  const uint64_t value = last_submitted_ + 1;
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &semaphore_;
  hal_status status = device_.submit(submit);
  if (status != HAL_SUCCESS) return status;
  last_submitted_ = value;
  ++next_value_;
  return wait_semaphore(value);
}

void StreamCore::release_batch_resources(Batch& batch) {
  for (HostBuffer& buffer : batch.large_staging) device_.memory().destroy_host_buffer(&buffer);
  batch.large_staging.clear();
  for (auto& chunk : batch.chunks) {
    chunk->used = 0;
    free_chunks_.push_back(std::move(chunk));
  }
  batch.chunks.clear();
  batch.bounds_records_used = 0;
  batch.keep.clear();
  batch.completions.clear();
  batch.traced.clear();
  batch.commands = 0;
}

void StreamCore::destroy_batch(Batch& batch) {
  batch.completions.clear();
  release_batch_resources(batch);
  if (batch.bounds_records.buffer != VK_NULL_HANDLE) {
    device_.memory().destroy_host_buffer(&batch.bounds_records);
  }
  if (batch.pool != VK_NULL_HANDLE) {
    device_.vk().vkDestroyDescriptorPool(device_.handle(), batch.pool, nullptr);
    batch.pool = VK_NULL_HANDLE;
  }
  if (batch.trace_queries != VK_NULL_HANDLE) {
    device_.vk().vkDestroyQueryPool(device_.handle(), batch.trace_queries, nullptr);
    batch.trace_queries = VK_NULL_HANDLE;
  }
  // Command buffers go with the command pool.
}

hal_status StreamCore::reclaim_locked() {
  if (in_flight_.empty()) return HAL_SUCCESS;
  uint64_t value = 0;
  hal_status status = counter_value(&value);
  if (status != HAL_SUCCESS) return status;
  retire_locked(value);
  while (in_flight_.size() >= kMaxBatchesInFlight) {
    const uint64_t oldest = in_flight_.front()->value;
    // Wait without the lock, so event queries and other threads' synchronisation do not block
    // behind this host wait. The caller's own recording is serialised by the runtime, and no
    // batch is open here, so nothing half-recorded is exposed.
    mutex_.unlock();
    status = wait_semaphore(oldest);
    mutex_.lock();
    if (status != HAL_SUCCESS) return status;
    retire_locked(oldest);
  }
  return HAL_SUCCESS;
}

hal_status StreamCore::open_batch_locked() {
  if (open_) return HAL_SUCCESS;
  hal_status status = reclaim_locked();
  if (status != HAL_SUCCESS) return status;
  if (open_) return HAL_SUCCESS;  // opened by another thread's flush while reclaim waited
  const VolkDeviceTable& vk = device_.vk();
  std::unique_ptr<Batch> batch;
  if (!spare_.empty()) {
    batch = std::move(spare_.back());
    spare_.pop_back();
  } else {
    batch = std::make_unique<Batch>();
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = command_pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkResult result = vk.vkAllocateCommandBuffers(device_.handle(), &info, &batch->cmd);
    if (result != VK_SUCCESS) return device_.check(result, "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult result = vk.vkBeginCommandBuffer(batch->cmd, &begin);
  if (result != VK_SUCCESS) {
    spare_.push_back(std::move(batch));
    return device_.check(result, "vkBeginCommandBuffer");
  }
  if (batch->pool_used) {
    vk.vkResetDescriptorPool(device_.handle(), batch->pool, 0);
    batch->pool_used = false;
  }
  pending_stages_ = 0;
  ++open_serial_;
  open_ = std::move(batch);
  return HAL_SUCCESS;
}

hal_status StreamCore::begin_command(VkPipelineStageFlags stage, VkCommandBuffer* cmd,
                                     const trace::Op* traced) {
  hal_status status = open_batch_locked();
  if (status != HAL_SUCCESS) return status;
  if (stage != 0) {
    if (pending_stages_ != 0) {
      memory_barrier(device_.vk(), open_->cmd, pending_stages_, stage,
                     VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
      pending_stages_ = 0;
    }
    pending_stages_ |= stage;
  }
  if (traced != nullptr && device_.caps().timestamps) {
    status = trace_begin_locked(*traced);
    if (status != HAL_SUCCESS) return status;
  }
  *cmd = open_->cmd;
  return HAL_SUCCESS;
}

hal_status StreamCore::trace_begin_locked(const trace::Op& op) {
  const VolkDeviceTable& vk = device_.vk();
  Batch& batch = *open_;
  if (batch.traced.empty()) {
    if (batch.trace_queries == VK_NULL_HANDLE) {
      VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      info.queryType = VK_QUERY_TYPE_TIMESTAMP;
      info.queryCount = 2 * kMaxCommandsPerBatch;
      VkResult result =
          vk.vkCreateQueryPool(device_.handle(), &info, nullptr, &batch.trace_queries);
      if (result != VK_SUCCESS) return device_.check(result, "vkCreateQueryPool (trace)");
    }
    vk.vkCmdResetQueryPool(batch.cmd, batch.trace_queries, 0, 2 * kMaxCommandsPerBatch);
  }
  // Bottom of pipe: written once every earlier command has completed, which on an in-order
  // stream is when this one can start.
  const auto query = static_cast<uint32_t>(2 * batch.traced.size());
  vk.vkCmdWriteTimestamp(batch.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, batch.trace_queries,
                         query);
  batch.traced.push_back(op);
  tracing_command_ = true;
  return HAL_SUCCESS;
}

void StreamCore::trace_emit(Batch& batch) {
  const auto count = static_cast<uint32_t>(2 * batch.traced.size());
  std::vector<uint64_t> stamps(count);
  const VkResult result = device_.vk().vkGetQueryPoolResults(
      device_.handle(), batch.trace_queries, 0, count, count * sizeof(uint64_t), stamps.data(),
      sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (result != VK_SUCCESS) {
    hal::log()->warn(
        "trace: the timestamps of a completed batch are unavailable ({}); its {} "
        "spans are left out",
        static_cast<int>(result), batch.traced.size());
    return;
  }
  for (size_t i = 0; i < batch.traced.size(); ++i) {
    const uint64_t begin = device_.trace_host_ns(stamps[2 * i], batch.submitted_ns);
    const uint64_t end = device_.trace_host_ns(stamps[2 * i + 1], batch.submitted_ns);
    trace::device_span(device_.info, trace_row_, batch.traced[i], begin, end);
  }
}

hal_status StreamCore::end_command() {
  if (tracing_command_) {
    const auto query = static_cast<uint32_t>(2 * open_->traced.size() - 1);
    device_.vk().vkCmdWriteTimestamp(open_->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                     open_->trace_queries, query);
    tracing_command_ = false;
  }
  ++open_->commands;
  if (open_->commands >= kMaxCommandsPerBatch || open_->staged_bytes >= kMaxStagingBytesPerBatch) {
    return flush_locked();
  }
  return HAL_SUCCESS;
}

hal_status StreamCore::stage(uint64_t size, StagingSpan* out) {
  hal_status status = open_batch_locked();
  if (status != HAL_SUCCESS) return status;
  MemoryManager& memory = device_.memory();
  if (size > kStagingChunkSize) {
    HostBuffer buffer;
    status = memory.create_host_buffer(size, &buffer);
    if (status != HAL_SUCCESS) return status;
    open_->large_staging.push_back(buffer);
    open_->staged_bytes += size;
    *out = StagingSpan{buffer.buffer, 0, buffer.mapped, buffer.address};
    return HAL_SUCCESS;
  }
  uint64_t offset = chunk_ ? (chunk_->used + 15) & ~uint64_t{15} : 0;
  if (!chunk_ || offset + size > chunk_->buffer.size) {
    if (chunk_) open_->chunks.push_back(std::move(chunk_));
    if (!free_chunks_.empty()) {
      chunk_ = std::move(free_chunks_.back());
      free_chunks_.pop_back();
    } else {
      auto chunk = std::make_unique<StagingChunk>();
      status = memory.create_host_buffer(kStagingChunkSize, &chunk->buffer);
      if (status != HAL_SUCCESS) return status;
      chunk_ = std::move(chunk);
    }
    offset = 0;
  }
  chunk_->used = offset + size;
  open_->staged_bytes += size;
  const uint64_t base = chunk_->buffer.address;
  *out = StagingSpan{chunk_->buffer.buffer, offset, chunk_->buffer.mapped + offset,
                     base != 0 ? base + offset : 0};
  return HAL_SUCCESS;
}

void StreamCore::on_complete(std::function<void()> callback) {
  if (open_batch_locked() != HAL_SUCCESS) return;
  open_->completions.push_back(std::move(callback));
}

void StreamCore::keep_alive(std::shared_ptr<void> object) {
  if (open_batch_locked() != HAL_SUCCESS) return;
  open_->keep.push_back(std::move(object));
}

hal_status StreamCore::bounds_record(VkDescriptorBufferInfo* range, uint32_t** host) {
  hal_status status = open_batch_locked();
  if (status != HAL_SUCCESS) return status;
  Batch& batch = *open_;
  const uint64_t bytes = 4 * kBoundsRecordWords;
  const uint64_t align =
      std::max<uint64_t>(device_.caps().limits.minStorageBufferOffsetAlignment, 4);
  const uint64_t stride = (bytes + align - 1) / align * align;
  if (batch.bounds_records.buffer == VK_NULL_HANDLE) {
    status = device_.memory().create_host_buffer(
        stride * kMaxCommandsPerBatch, &batch.bounds_records, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    if (status != HAL_SUCCESS) return status;
  }
  // Every launch is a command, and a batch holds at most kMaxCommandsPerBatch of them.
  if (batch.bounds_records_used >= kMaxCommandsPerBatch) {
    return hal::fail(HAL_ERROR_INTERNAL, "a batch ran out of bounds-check records");
  }
  const uint64_t offset = stride * batch.bounds_records_used++;
  *range = VkDescriptorBufferInfo{batch.bounds_records.buffer, offset, bytes};
  *host = reinterpret_cast<uint32_t*>(batch.bounds_records.mapped + offset);
  std::memset(*host, 0, bytes);
  return HAL_SUCCESS;
}

hal_status StreamCore::allocate_descriptor_sets(const VkDescriptorSetLayout* layouts,
                                                uint32_t count, VkDescriptorSet* out) {
  const VolkDeviceTable& vk = device_.vk();
  for (int attempt = 0; attempt < 2; ++attempt) {
    hal_status status = open_batch_locked();
    if (status != HAL_SUCCESS) return status;
    if (open_->pool == VK_NULL_HANDLE) {
      const VkDescriptorPoolSize sizes[] = {
          {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kPoolBuffers},
          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kPoolUniformBuffers},
      };
      VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      info.maxSets = kPoolSets;
      info.poolSizeCount = 2;
      info.pPoolSizes = sizes;
      VkResult result = vk.vkCreateDescriptorPool(device_.handle(), &info, nullptr, &open_->pool);
      if (result != VK_SUCCESS) return device_.check(result, "vkCreateDescriptorPool");
    }
    VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    info.descriptorPool = open_->pool;
    info.descriptorSetCount = count;
    info.pSetLayouts = layouts;
    VkResult result = vk.vkAllocateDescriptorSets(device_.handle(), &info, out);
    if (result == VK_SUCCESS) {
      open_->pool_used = true;
      return HAL_SUCCESS;
    }
    if ((result != VK_ERROR_OUT_OF_POOL_MEMORY && result != VK_ERROR_FRAGMENTED_POOL) ||
        attempt == 1) {
      return device_.check(result, "vkAllocateDescriptorSets",
                           "A kernel with this many buffers exceeds the per-batch pool");
    }
    status = flush_locked();  // a fresh batch brings a fresh pool
    if (status != HAL_SUCCESS) return status;
  }
  return HAL_SUCCESS;
}

hal_status StreamCore::add_wait(std::shared_ptr<StreamCore> other, uint64_t value, bool reached) {
  if (!reached && open_ && open_->commands > 0) {
    hal_status status = flush_locked();
    if (status != HAL_SUCCESS) return status;
  }
  for (Wait& wait : waits_) {
    if (wait.core == other) {
      wait.value = std::max(wait.value, value);
      return HAL_SUCCESS;
    }
  }
  waits_.push_back(Wait{std::move(other), value});
  return HAL_SUCCESS;
}

uint64_t StreamCore::open_value_locked() {
  if (open_batch_locked() != HAL_SUCCESS) return last_submitted_;
  return next_value_;
}

hal_status StreamCore::counter_value(uint64_t* value) {
  VkResult result = device_.vk().vkGetSemaphoreCounterValue(device_.handle(), semaphore_, value);
  if (result != VK_SUCCESS) return device_.check(result, "vkGetSemaphoreCounterValue");
  return HAL_SUCCESS;
}

bool StreamCore::idle_locked() {
  if ((open_ && open_->commands > 0) || !waits_.empty()) return false;
  if (last_submitted_ == completed_) return true;
  uint64_t value = 0;
  if (counter_value(&value) != HAL_SUCCESS) {
    hal::clear_pending_error();
    return false;
  }
  retire_locked(value);
  return completed_ >= last_submitted_;
}

hal_status StreamCore::flush_locked() {
  if (!open_ && waits_.empty()) return HAL_SUCCESS;
  hal_status status = open_batch_locked();
  if (status != HAL_SUCCESS) return status;
  const VolkDeviceTable& vk = device_.vk();
  Batch& batch = *open_;
  if (pending_stages_ != 0) {
    memory_barrier(vk, batch.cmd, pending_stages_, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
    pending_stages_ = 0;
  }
  if (chunk_ && chunk_->used > 0) batch.chunks.push_back(std::move(chunk_));
  VkResult result = vk.vkEndCommandBuffer(batch.cmd);
  if (result != VK_SUCCESS) {
    // The command buffer is invalid now: recording more into it would be undefined.
    status = device_.check(result, "vkEndCommandBuffer");
    drop_open_locked();
    return status;
  }

  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  // Also when the host has seen the previous batch complete: the wait is what makes that
  // batch's device writes visible to this one (free for a value already reached).
  if (last_submitted_ > 0) {
    wait_semaphores.push_back(semaphore_);
    wait_values.push_back(last_submitted_);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  for (Wait& wait : waits_) {
    wait_semaphores.push_back(wait.core->semaphore());
    wait_values.push_back(wait.value);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    batch.keep.push_back(wait.core);  // its semaphore must outlive this submission
  }
  const uint64_t signal_value = next_value_;
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &batch.cmd;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &semaphore_;
  if (!batch.traced.empty()) batch.submitted_ns = trace::now_ns();
  status = device_.submit(submit);
  waits_.clear();
  if (status != HAL_SUCCESS) {
    drop_open_locked();
    return status;
  }
  batch.value = signal_value;
  last_submitted_ = signal_value;
  ++next_value_;
  in_flight_.push_back(std::move(open_));
  return HAL_SUCCESS;
}

void StreamCore::drop_open_locked() {
  // The command buffer never ran: its completion callbacks must not run either.
  open_->completions.clear();
  // But what it kept alive may be in use by the batches before it (freed memory kept until this
  // stream's work completes is kept by the newest batch only): they keep it now.
  if (!in_flight_.empty()) {
    std::vector<std::shared_ptr<void>>& newest = in_flight_.back()->keep;
    for (auto& object : open_->keep) newest.push_back(std::move(object));
  }
  release_batch_resources(*open_);
  spare_.push_back(std::move(open_));
  pending_stages_ = 0;
  tracing_command_ = false;
  // Its timeline value is never signalled, nor given to a later batch: an event captured in it
  // would otherwise wait forever, or complete with unrelated work and a timestamp never written.
  // Waits for such an event fail instead (submit_through).
  dropped_values_.push_back(next_value_++);
  drop_reason_ = hal::pending_error();
}

void StreamCore::retire_locked(uint64_t completed) {
  if (completed > completed_) completed_ = completed;
  while (!in_flight_.empty() && in_flight_.front()->value <= completed_) {
    std::unique_ptr<Batch> batch = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (!batch->traced.empty()) trace_emit(*batch);
    for (auto& callback : batch->completions) callback();
    release_batch_resources(*batch);
    spare_.push_back(std::move(batch));
  }
}

bool StreamCore::keep_until_done(std::shared_ptr<void> object) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_ && open_->commands > 0) {
    open_->keep.push_back(std::move(object));
    return true;
  }
  if (in_flight_.empty()) return false;
  uint64_t value = 0;
  if (counter_value(&value) == HAL_SUCCESS) {
    retire_locked(value);
    if (in_flight_.empty()) return false;
  } else {
    // Unknown progress (a lost device): keep it; the batch lets go when it is destroyed.
    hal::clear_pending_error();
  }
  in_flight_.back()->keep.push_back(std::move(object));
  return true;
}

void StreamCore::retire_completed_if_unlocked() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || in_flight_.empty()) return;
  uint64_t value = 0;
  if (counter_value(&value) != HAL_SUCCESS) {
    hal::clear_pending_error();
    return;
  }
  retire_locked(value);
}

hal_status StreamCore::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  return flush_locked();
}

hal_status StreamCore::synchronize() {
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hal_status status = flush_locked();
    if (status != HAL_SUCCESS) return status;
    target = last_submitted_;
  }
  return wait_value(target);
}

hal_status StreamCore::query() {
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hal_status status = flush_locked();
    if (status != HAL_SUCCESS) return status;
    target = last_submitted_;
  }
  bool done = false;
  hal_status status = query_value(target, &done);
  if (status != HAL_SUCCESS) return status;
  return done ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

void StreamCore::note_fault_locked(uint64_t position, std::string cause, std::string hint) {
  if (fault_) {
    ++fault_->later;
    return;
  }
  fault_ = Fault{position, std::move(cause), std::move(hint), 0};
}

hal_status StreamCore::take_fault(uint64_t position) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fault_ || fault_->position >= position) return HAL_SUCCESS;
  Fault fault = std::move(*fault_);
  fault_.reset();
  std::string later;
  if (fault.later > 0) {
    later = fmt::format(
        " ({} later launch{} on this stream also accessed out of bounds; see the "
        "log)",
        fault.later, fault.later == 1 ? "" : "es");
  }
  return hal::failf(HAL_ERROR_LAUNCH_FAILED, "{}{}. {}", fault.cause, later, fault.hint);
}

hal_status StreamCore::wait_semaphore(uint64_t value) {
  const VolkDeviceTable& vk = device_.vk();
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore_;
  info.pValues = &value;
  for (;;) {
    // Another thread may find the device lost while this one waits: a lost device never signals.
    if (device_.lost()) {
      return hal::fail(HAL_ERROR_DEVICE_LOST, "the device was lost while this call waited for it");
    }
    VkResult result = vk.vkWaitSemaphores(device_.handle(), &info, kWaitSliceNs);
    if (result == VK_SUCCESS) return HAL_SUCCESS;
    if (result != VK_TIMEOUT) return device_.check(result, "vkWaitSemaphores");
  }
}

hal_status StreamCore::submit_through(uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (std::find(dropped_values_.begin(), dropped_values_.end(), value) != dropped_values_.end()) {
    return hal::failf(HAL_ERROR_LAUNCH_FAILED,
                      "the work recorded on the stream before this event never ran: its "
                      "submission failed ({})",
                      drop_reason_.empty() ? "no reason given" : drop_reason_);
  }
  if (value <= last_submitted_) return HAL_SUCCESS;
  return flush_locked();
}

hal_status StreamCore::wait_value(uint64_t value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (completed_ >= value) {
      retire_locked(completed_);
      return HAL_SUCCESS;
    }
  }
  hal_status status = wait_semaphore(value);
  if (status != HAL_SUCCESS) return status;
  std::lock_guard<std::mutex> lock(mutex_);
  retire_locked(value);
  return HAL_SUCCESS;
}

hal_status StreamCore::query_value(uint64_t value, bool* done) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (completed_ < value) {
    uint64_t counter = 0;
    hal_status status = counter_value(&counter);
    if (status != HAL_SUCCESS) return status;
    retire_locked(counter);
  }
  *done = completed_ >= value;
  return HAL_SUCCESS;
}

}  // namespace hal::vulkan
