#include "vulkan/stream.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/device.h"
#include "vulkan/event.h"
#include "vulkan/memory.h"
#include "vulkan/module.h"
#include "vulkan/stream_core.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace hal::vulkan {
namespace {

// The buffer and byte offset of a device range.
struct Located {
  MemoryBlock* block;
  uint64_t offset;
};

Located locate(const DeviceRange& range) {
  const DeviceChunk& chunk = MemoryManager::chunk(range.alloc);
  return Located{chunk.block, chunk.offset + range.offset};
}

using Kind = trace::Op::Kind;

// Runs |work|, a copy or fill the host does itself (the stream is idle and the memory mapped),
// and with the timeline trace on puts it on the stream's row, timed by the host clock.
template <typename Work>
void on_host(const StreamCore& core, const hal_device_info& device, Kind kind, uint64_t bytes,
             Work&& work) {
  if (!trace::on()) {
    work();
    return;
  }
  const uint64_t begin = trace::now_ns();
  work();
  trace::Op op = trace::Op::transfer(kind, bytes);
  op.on_host = true;
  trace::device_span(device, core.trace_row(), op, begin, trace::now_ns());
}

// Records the report of a launch of |state| whose bounds-check |record| (spirv_bounds_check.h)
// counted accesses out of bounds; |position| is the launch's (StreamCore::position_locked()).
void report_bounds_fault(StreamCore& core, uint64_t position, const FunctionState& state,
                         const uint32_t* record) {
  const BoundsChecks& bounds = *state.shader->bounds;
  const std::string& kernel = state.entry.name;
  const uint32_t count = record[0];
  std::string cause;
  std::string hint;
  if (record[1] == 0 || record[1] > bounds.sites.size()) {
    cause = fmt::format("kernel '{}' accessed a buffer out of bounds ({} times)", kernel, count);
    hint = "Check the kernel's index arithmetic against the sizes of its buffers";
  } else {
    const BoundsSite& site = bounds.sites[record[1] - 1];
    size_t param = 0;
    while (param < state.slots.size() &&
           (state.slots[param].push || state.slots[param].set != site.set ||
            state.slots[param].binding != site.binding)) {
      ++param;
    }
    const std::string parameter =
        param < state.slots.size() ? fmt::format("parameter {}", param) : std::string("a buffer");
    const uint32_t index = record[2];
    const uint32_t length = record[3];
    const std::string name = site.name.empty() ? "" : fmt::format(", '{}'", site.name);
    const std::string as_signed =
        index > 0x7FFFFFFFu ? fmt::format(" ({} as a signed index)", static_cast<int32_t>(index))
                            : "";
    const char* outcome = site.write     ? (count == 1 ? "was skipped" : "were skipped")
                          : site.skipped ? "read 0"
                                         : "went ahead (8- and 16-bit loads are only reported)";
    cause = fmt::format(
        "kernel '{}' {} out of bounds: element {}{} (byte offset {}) of {} (set {}, "
        "binding {}{}), an array of {} element{} of {} bytes; {} access{} in this launch {} out "
        "of bounds (the first recorded is shown) and {} (HAL_VULKAN_VALIDATION=gpu)",
        kernel, site.write ? "wrote" : "read", index, as_signed,
        site.array_offset + static_cast<uint64_t>(index) * site.stride, parameter, site.set,
        site.binding, name, length, length == 1 ? "" : "s", site.stride, count,
        count == 1 ? "" : "es", count == 1 ? "was" : "were", outcome);
    hint = fmt::format(
        "Check the kernel's index arithmetic and bounds tests against the size of the allocation "
        "passed as {} (the buffer ends where that allocation ends), or allocate it larger",
        parameter);
  }
  hal::log()->error("vulkan bounds check: {}", cause);
  core.note_fault_locked(position, std::move(cause), std::move(hint));
}

}  // namespace

VulkanStream::VulkanStream(std::shared_ptr<StreamCore> core)
    : core_(std::move(core)), device_(core_->device()) {}

VulkanStream::~VulkanStream() {
  // The runtime synchronised already; this only submits anything recorded since (nothing, in
  // practice). Event captures may keep the core alive beyond this point.
  if (core_->flush() != HAL_SUCCESS) hal::clear_pending_error();
}

hal_status VulkanStream::record_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst,
                                     uint64_t dst_offset, uint64_t size, Kind kind,
                                     std::function<void()> on_complete) {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::optional<trace::Op> traced;  // only with the trace on: nothing to build otherwise
  if (trace::on()) traced = trace::Op::transfer(kind, size);
  hal_status status =
      core_->begin_command(VK_PIPELINE_STAGE_TRANSFER_BIT, &cmd, traced ? &*traced : nullptr);
  if (status != HAL_SUCCESS) return status;
  VkBufferCopy region{src_offset, dst_offset, size};
  device_.vk().vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  // Registered before end_command(), which may submit: the callback must belong to the batch
  // holding the copy (and its staging memory), not to the next one.
  if (on_complete) core_->on_complete(std::move(on_complete));
  return core_->end_command();
}

hal_status VulkanStream::copy_htod(const DeviceRange& dst, const void* src, size_t size,
                                   const HostAllocation* /*host*/) {
  // Staged even from a host_alloc buffer: the caller may reuse |src| once this returns.
  auto lock = core_->lock();
  const Located to = locate(dst);
  if (to.block->mapped != nullptr && core_->idle_locked()) {
    on_host(*core_, device_.info, Kind::kCopyHostToDevice, size,
            [&] { std::memcpy(to.block->mapped + to.offset, src, size); });
    return HAL_SUCCESS;
  }
  StagingSpan span;
  hal_status status = core_->stage(size, &span);
  if (status != HAL_SUCCESS) return status;
  std::memcpy(span.host, src, size);
  return record_copy(span.buffer, span.offset, to.block->buffer, to.offset, size,
                     Kind::kCopyHostToDevice);
}

hal_status VulkanStream::copy_dtoh(void* dst, const DeviceRange& src, size_t size,
                                   const HostAllocation* host) {
  auto lock = core_->lock();
  const Located from = locate(src);
  if (from.block->mapped != nullptr && core_->idle_locked()) {
    on_host(*core_, device_.info, Kind::kCopyDeviceToHost, size,
            [&] { std::memcpy(dst, from.block->mapped + from.offset, size); });
    return HAL_SUCCESS;
  }
  hal_status status = HAL_SUCCESS;
  if (host != nullptr) {
    const uint64_t host_offset =
        static_cast<uint64_t>(static_cast<uint8_t*>(dst) - static_cast<uint8_t*>(host->base));
    status = record_copy(from.block->buffer, from.offset, MemoryManager::host_buffer(*host).buffer,
                         host_offset, size, Kind::kCopyDeviceToHost);
  } else {
    StagingSpan span;
    status = core_->stage(size, &span);
    if (status != HAL_SUCCESS) return status;
    uint8_t* staged = span.host;
    status = record_copy(from.block->buffer, from.offset, span.buffer, span.offset, size,
                         Kind::kCopyDeviceToHost,
                         [dst, staged, size] { std::memcpy(dst, staged, size); });
  }
  if (status != HAL_SUCCESS) return status;
  // The host is about to wait for this data: start the device on it now.
  return core_->flush_locked();
}

hal_status VulkanStream::copy_dtod(const DeviceRange& dst, const DeviceRange& src, size_t size) {
  auto lock = core_->lock();
  const Located to = locate(dst);
  const Located from = locate(src);
  if (to.block->mapped != nullptr && from.block->mapped != nullptr && core_->idle_locked()) {
    on_host(*core_, device_.info, Kind::kCopyDeviceToDevice, size, [&] {
      std::memmove(to.block->mapped + to.offset, from.block->mapped + from.offset, size);
    });
    return HAL_SUCCESS;
  }
  return record_copy(from.block->buffer, from.offset, to.block->buffer, to.offset, size,
                     Kind::kCopyDeviceToDevice);
}

hal_status VulkanStream::fill_bytes_staged(VkBuffer buffer, uint64_t offset, uint8_t value,
                                           uint64_t size) {
  StagingSpan span;
  hal_status status = core_->stage(size, &span);
  if (status != HAL_SUCCESS) return status;
  std::memset(span.host, value, size);
  return record_copy(span.buffer, span.offset, buffer, offset, size, Kind::kFill);
}

hal_status VulkanStream::fill(const DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                              size_t bytes) {
  auto lock = core_->lock();
  const Located to = locate(dst);
  const uint32_t word = pattern_size == 1 ? (pattern & 0xFFu) * 0x01010101u : pattern;
  if (to.block->mapped != nullptr && core_->idle_locked()) {
    on_host(*core_, device_.info, Kind::kFill, bytes, [&] {
      uint8_t* p = to.block->mapped + to.offset;
      if (pattern_size == 1) {
        std::memset(p, static_cast<int>(pattern & 0xFF), bytes);
      } else {
        for (size_t i = 0; i < bytes; i += 4) std::memcpy(p + i, &word, 4);
      }
    });
    return HAL_SUCCESS;
  }
  // vkCmdFillBuffer needs 4-byte aligned offset and size; 1-byte fills cover the unaligned head
  // and tail from staging memory.
  uint64_t offset = to.offset;
  uint64_t remaining = bytes;
  if (pattern_size == 1) {
    const uint64_t head = std::min<uint64_t>((4 - offset % 4) % 4, remaining);
    if (head > 0) {
      hal_status status =
          fill_bytes_staged(to.block->buffer, offset, static_cast<uint8_t>(pattern), head);
      if (status != HAL_SUCCESS) return status;
      offset += head;
      remaining -= head;
    }
    const uint64_t tail = remaining % 4;
    if (tail > 0) {
      hal_status status = fill_bytes_staged(to.block->buffer, offset + remaining - tail,
                                            static_cast<uint8_t>(pattern), tail);
      if (status != HAL_SUCCESS) return status;
      remaining -= tail;
    }
  } else if (offset % 4 != 0) {
    return hal::fail(HAL_ERROR_INTERNAL,
                     "a 32-bit fill target is not 4-byte aligned in its buffer");
  }
  if (remaining == 0) return HAL_SUCCESS;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::optional<trace::Op> traced;
  if (trace::on()) traced = trace::Op::transfer(Kind::kFill, remaining);
  hal_status status =
      core_->begin_command(VK_PIPELINE_STAGE_TRANSFER_BIT, &cmd, traced ? &*traced : nullptr);
  if (status != HAL_SUCCESS) return status;
  device_.vk().vkCmdFillBuffer(cmd, to.block->buffer, offset, remaining, word);
  return core_->end_command();
}

bool VulkanStream::same_buffers(const std::vector<VkDescriptorBufferInfo>& buffers) const {
  if (buffers.size() != bound_.buffers.size()) return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const VkDescriptorBufferInfo& a = buffers[i];
    const VkDescriptorBufferInfo& b = bound_.buffers[i];
    if (a.buffer != b.buffer || a.offset != b.offset || a.range != b.range) return false;
  }
  return true;
}

hal_status VulkanStream::launch(hal::Function& function, const LaunchParams& params) {
  auto& vulkan_function = static_cast<VulkanFunction&>(function);
  // The function (and so its state) outlives this call; the batch takes its own reference below.
  const std::shared_ptr<FunctionState>& state = vulkan_function.state;
  VkPipeline pipeline = VK_NULL_HANDLE;
  hal_status status = state->pipeline(params.block, params.shared_bytes, &pipeline);
  if (status != HAL_SUCCESS) return status;

  // Scratch vectors are members, reused from launch to launch: no heap traffic once they have
  // grown to the largest kernel's needs.
  const VolkDeviceTable& vk = device_.vk();
  const uint64_t max_storage_range = device_.caps().limits.maxStorageBufferRange;
  const uint64_t max_uniform_range = device_.caps().limits.maxUniformBufferRange;
  std::vector<uint8_t>& push = push_scratch_;
  std::vector<VkDescriptorBufferInfo>& buffers = buffer_scratch_;
  std::vector<VkWriteDescriptorSet>& writes = write_scratch_;
  std::vector<VkDescriptorSet>& sets = set_scratch_;
  push.assign(std::max(state->push_size, state->param_block_bytes), 0);
  buffers.clear();
  writes.clear();
  for (size_t i = 0; i < state->slots.size(); ++i) {
    const ParamSlot& slot = state->slots[i];
    if (slot.push) {
      std::memcpy(push.data() + slot.offset, params.args[i], slot.size);
      continue;
    }
    const DeviceRange range = launch_range(params, i);
    const Located at = locate(range);
    // To the end of the allocation, as far as one descriptor reaches (the core checked that a
    // uniform block fits).
    const uint64_t length = std::min<uint64_t>(
        range.alloc.size - range.offset, slot.uniform ? max_uniform_range : max_storage_range);
    buffers.push_back(VkDescriptorBufferInfo{at.block->buffer, at.offset, length});
  }

  auto lock = core_->lock();
  // The previous launch in this command buffer bound sets describing exactly these buffers for
  // this function's layout: they are still bound (copies, fills, barriers and other pipelines
  // of the same layout leave them alone). With bounds checks each launch has its own record.
  const BoundsChecks* bounds = state->shader->bounds.get();
  const bool reuse_sets = bounds == nullptr && bound_.batch != 0 &&
                          bound_.batch == core_->open_serial_locked() &&
                          bound_.state == state.get() && same_buffers(buffers);
  uint32_t* record = nullptr;
  VkDescriptorBufferInfo record_info{};
  sets.assign(reuse_sets ? 0 : state->set_layouts.size(), VK_NULL_HANDLE);
  if (!sets.empty()) {
    status = core_->allocate_descriptor_sets(state->set_layouts.data(),
                                             static_cast<uint32_t>(sets.size()), sets.data());
    if (status != HAL_SUCCESS) return status;
    size_t next_buffer = 0;
    for (const ParamSlot& slot : state->slots) {
      if (slot.push) continue;
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.dstSet = sets[slot.set];
      write.dstBinding = slot.binding;
      write.descriptorCount = 1;
      write.descriptorType =
          slot.uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      write.pBufferInfo = &buffers[next_buffer++];
      writes.push_back(write);
    }
    if (bounds != nullptr) {
      status = core_->bounds_record(&record_info, &record);
      if (status != HAL_SUCCESS) return status;
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.dstSet = sets[bounds->set];
      write.dstBinding = 0;
      write.descriptorCount = 1;
      write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      write.pBufferInfo = &record_info;
      writes.push_back(write);
    }
    vk.vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(),
                              0, nullptr);
  }
  if (state->param_block_bytes > 0) {
    // The arguments go to staging memory, alive until the batch completes; the kernel reads them
    // through the address pushed in their place. Staged after the descriptor sets: allocating
    // them may submit the open batch (its pool full), and staging taken before that would go
    // with that batch and be reused while this launch, in the next one, still reads it.
    StagingSpan span;
    status = core_->stage(state->param_block_bytes, &span);
    if (status != HAL_SUCCESS) return status;
    if (span.address == 0) {
      return hal::fail(HAL_ERROR_INTERNAL, "staging memory has no device address");
    }
    std::memcpy(span.host, push.data(), state->param_block_bytes);
    push.assign(state->push_size, 0);
    std::memcpy(push.data(), &span.address, sizeof span.address);
  }
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::optional<trace::Op> traced;
  if (trace::on()) {
    traced = trace::Op::kernel_launch(function.desc.name, params.grid, params.block,
                                      params.shared_bytes);
  }
  const uint64_t position = core_->position_locked();
  status =
      core_->begin_command(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, &cmd, traced ? &*traced : nullptr);
  if (status != HAL_SUCCESS) return status;
  const uint64_t batch = core_->open_serial_locked();
  if (bound_.batch != batch) {
    bound_.batch = batch;
    bound_.state = nullptr;
    bound_.pipeline = VK_NULL_HANDLE;
  }
  if (bound_.pipeline != pipeline) {
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    bound_.pipeline = pipeline;
  }
  if (!reuse_sets) {
    if (!sets.empty()) {
      vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, state->layout, 0,
                                 static_cast<uint32_t>(sets.size()), sets.data(), 0, nullptr);
    }
    bound_.state = state.get();
    bound_.buffers = buffers;
  }
  if (!push.empty()) {
    vk.vkCmdPushConstants(cmd, state->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<uint32_t>(push.size()), push.data());
  }
  vk.vkCmdDispatch(cmd, params.grid[0], params.grid[1], params.grid[2]);
  if (!core_->keeps_last_locked(state.get())) core_->keep_alive(state);
  if (record != nullptr) {
    // Read when the batch has completed, before the batch's records are reused.
    core_->on_complete([core = core_.get(), position, state, record] {
      if (record[0] != 0) report_bounds_fault(*core, position, *state, record);
    });
  }
  return core_->end_command();
}

hal_status VulkanStream::record(hal::Event& event) {
  auto& vulkan_event = static_cast<VulkanEvent&>(event);
  auto capture = std::make_shared<EventCapture>(device_);
  capture->core = core_;
  const VolkDeviceTable& vk = device_.vk();
  if (device_.caps().timestamps) {
    hal_status status = device_.timestamps().acquire(&capture->query);
    if (status != HAL_SUCCESS) return status;
  }
  auto lock = core_->lock();
  capture->position = core_->position_locked();
  if (capture->query.pool == VK_NULL_HANDLE) {
    capture->value = core_->open_value_locked();
    core_->keep_alive(capture);
    vulkan_event.set_capture(std::move(capture));
    return HAL_SUCCESS;
  }
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  hal_status status = core_->begin_command(0, &cmd);
  if (status != HAL_SUCCESS) return status;
  // The query may have been another event's: reset it in the same command buffer, before the
  // write (its earlier batch has completed, or the query would not be free).
  vk.vkCmdResetQueryPool(cmd, capture->query.pool, capture->query.index, 1);
  vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, capture->query.pool,
                         capture->query.index);
  // The batch holding the write, taken before end_command(), which may submit it and open the
  // next. No submission otherwise: whoever waits for the event submits its batch (event.h).
  capture->value = core_->open_value_locked();
  core_->keep_alive(capture);
  vulkan_event.set_capture(capture);
  return core_->end_command();
}

hal_status VulkanStream::wait(hal::Event& event) {
  std::shared_ptr<EventCapture> captured = static_cast<VulkanEvent&>(event).capture();
  if (!captured || captured->core == core_) return HAL_SUCCESS;  // nothing, or earlier here
  // The other stream's batch must be on its way before this stream's work waits for it: a
  // timeline may be waited for before its signal is submitted, but hal must not rely on that
  // stream submitting later by itself.
  hal_status status = captured->core->submit_through(captured->value);
  if (status != HAL_SUCCESS) return status;
  bool done = false;
  status = captured->core->query_value(captured->value, &done);
  if (status != HAL_SUCCESS) return status;
  // Also when the work is done: the semaphore wait is what makes its writes visible to this
  // stream's commands (a host that saw it complete does not do that for the device).
  auto lock = core_->lock();
  return core_->add_wait(captured->core, captured->value, done);
}

hal_status VulkanStream::synchronize() {
  hal_status status = core_->synchronize();
  if (status != HAL_SUCCESS) return status;
  return core_->take_fault(UINT64_MAX);
}

hal_status VulkanStream::query() {
  hal_status status = core_->query();
  if (status != HAL_SUCCESS && status != HAL_ERROR_NOT_READY) return status;
  // A report from work that completed comes first, even while later work is still running.
  hal_status fault = core_->take_fault(UINT64_MAX);
  return fault != HAL_SUCCESS ? fault : status;
}

}  // namespace hal::vulkan
