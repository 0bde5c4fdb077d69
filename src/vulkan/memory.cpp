#include "vulkan/memory.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/device.h"

#include <algorithm>

namespace hal::vulkan {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

constexpr VkMemoryPropertyFlags kHostFlags =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// The first memory type allowed by |bits| that has all of |required|, preferring one that also
// has |preferred|; -1 if none.
int find_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t bits,
              VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  int fallback = -1;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if ((bits & (1u << i)) == 0) continue;
    const VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

}  // namespace

MemoryManager::MemoryManager(VulkanDevice& device, uint64_t block_size)
    : device_(device), block_size_(block_size) {}

MemoryManager::~MemoryManager() {
  // A release still pending here belongs to a stream core that outlived its device: a bug
  // elsewhere, which would end in a use after free when that core lets go of it.
  if (const uint64_t pending = pending_releases_.load(); pending != 0) {
    hal::log()->error(
        "vulkan: {} freed allocations were still waiting for work to complete when "
        "their device was destroyed",
        pending);
  }
  for (auto& block : blocks_) destroy_block(block.get());
}

hal_status MemoryManager::init() {
  const DeviceCaps& caps = device_.caps();
  const VolkDeviceTable& vk = device_.vk();
  // Any allocation may be a kernel's storage or uniform buffer argument.
  device_usage_ = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (caps.buffer_device_address) device_usage_ |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

  // Which memory types can back our buffers: ask with a small probe buffer.
  VkBufferCreateInfo probe_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  probe_info.size = 4096;
  probe_info.usage = device_usage_;
  probe_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer probe = VK_NULL_HANDLE;
  VkResult result = vk.vkCreateBuffer(device_.handle(), &probe_info, nullptr, &probe);
  if (result != VK_SUCCESS) return device_.check(result, "vkCreateBuffer (probe)");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device_.handle(), probe, &requirements);
  vk.vkDestroyBuffer(device_.handle(), probe, nullptr);

  VkPhysicalDeviceMemoryProperties props{};
  vkGetPhysicalDeviceMemoryProperties(device_.physical(), &props);
  const bool shared_memory = caps.type == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                             caps.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  int device_type = -1;
  if (shared_memory) {
    device_type = find_type(props, requirements.memoryTypeBits,
                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | kHostFlags, 0);
  }
  if (device_type < 0) {
    device_type =
        find_type(props, requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  }
  if (device_type < 0) device_type = find_type(props, requirements.memoryTypeBits, 0, 0);
  int host_type =
      find_type(props, requirements.memoryTypeBits, kHostFlags, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (device_type < 0 || host_type < 0) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "the device has no memory type for storage buffers (device-local: {}, "
                      "host-visible: {}). The driver is unusable for compute",
                      device_type >= 0 ? "found" : "missing", host_type >= 0 ? "found" : "missing");
  }
  device_type_ = static_cast<uint32_t>(device_type);
  host_type_ = static_cast<uint32_t>(host_type);
  const VkMemoryType& type = props.memoryTypes[device_type_];
  device_mapped_ = (type.propertyFlags & kHostFlags) == kHostFlags;
  const uint64_t heap_size = props.memoryHeaps[type.heapIndex].size;
  total_memory_ = 0;
  for (uint32_t h = 0; h < props.memoryHeapCount; ++h) {
    if (props.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      total_memory_ += props.memoryHeaps[h].size;
    }
  }
  if (total_memory_ == 0) total_memory_ = heap_size;

  max_allocation_size_ =
      std::min({caps.max_memory_allocation_size, caps.max_buffer_size, heap_size}) -
      kAddressAlignment;  // room to align the address
  block_size_ = std::min(block_size_, max_allocation_size_);
  hal::log()->debug("vulkan: device memory type {} ({}), host type {}, block {} MiB, max alloc {}",
                    device_type_, device_mapped_ ? "mapped" : "not mapped", host_type_,
                    block_size_ >> 20, max_allocation_size_);
  return HAL_SUCCESS;
}

size_t MemoryManager::block_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

uint64_t MemoryManager::device_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return device_bytes_;
}

hal_status MemoryManager::allocate_memory(uint64_t size, uint32_t type, bool device_address,
                                          VkDeviceMemory* out) {
  uint32_t limit = device_.caps().limits.maxMemoryAllocationCount;
  if (const uint32_t testing = object_limit_for_testing_.load(); testing != 0) {
    limit = std::min(limit, testing);
  }
  if (memory_objects_.load() >= limit) {
    return hal::failf(HAL_ERROR_OUT_OF_MEMORY,
                      "the device allows at most {} live memory objects "
                      "(maxMemoryAllocationCount) and all are in use. Free memory first",
                      limit);
  }
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = size;
  info.memoryTypeIndex = type;
  if (device_address) info.pNext = &flags;
  VkResult result = device_.vk().vkAllocateMemory(device_.handle(), &info, nullptr, out);
  if (result != VK_SUCCESS) {
    return device_.check(result, fmt::format("vkAllocateMemory of {} bytes", size),
                         "Free device memory or allocate less");
  }
  memory_objects_.fetch_add(1);
  return HAL_SUCCESS;
}

void MemoryManager::free_memory(VkDeviceMemory memory) {
  if (memory == VK_NULL_HANDLE) return;
  device_.vk().vkFreeMemory(device_.handle(), memory, nullptr);
  memory_objects_.fetch_sub(1);
}

hal_status MemoryManager::create_block(uint64_t size, bool dedicated,
                                       std::unique_ptr<MemoryBlock>* out) {
  const VolkDeviceTable& vk = device_.vk();
  const bool bda = device_.caps().buffer_device_address;
  auto block = std::make_unique<MemoryBlock>();
  block->size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = device_usage_;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = vk.vkCreateBuffer(device_.handle(), &info, nullptr, &block->buffer);
  if (result != VK_SUCCESS) return device_.check(result, "vkCreateBuffer");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device_.handle(), block->buffer, &requirements);
  hal_status status = allocate_memory(requirements.size, device_type_, bda, &block->memory);
  if (status == HAL_SUCCESS) {
    result = vk.vkBindBufferMemory(device_.handle(), block->buffer, block->memory, 0);
    if (result != VK_SUCCESS) status = device_.check(result, "vkBindBufferMemory");
  }
  if (status == HAL_SUCCESS && device_mapped_) {
    void* mapped = nullptr;
    result = vk.vkMapMemory(device_.handle(), block->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (result != VK_SUCCESS) {
      status = device_.check(result, "vkMapMemory");
    } else {
      block->mapped = static_cast<uint8_t*>(mapped);
    }
  }
  if (status != HAL_SUCCESS) {
    destroy_block(block.get());
    return status;
  }
  uint64_t base = 0;
  if (bda) {
    VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address_info.buffer = block->buffer;
    base = vk.vkGetBufferDeviceAddress(device_.handle(), &address_info);
  } else {
    base = next_fake_address_;
    next_fake_address_ += align_up(size, 1ull << 20) + (1ull << 20);  // a gap between blocks
  }
  block->pad = align_up(base, kAddressAlignment) - base;
  block->address = base + block->pad;
  if (!dedicated) {
    block->ranges = std::make_unique<RangeAllocator>(0, size - block->pad, kAddressAlignment);
  }
  *out = std::move(block);
  return HAL_SUCCESS;
}

void MemoryManager::destroy_block(MemoryBlock* block) {
  const VolkDeviceTable& vk = device_.vk();
  if (block->mapped != nullptr) vk.vkUnmapMemory(device_.handle(), block->memory);
  if (block->buffer != VK_NULL_HANDLE) vk.vkDestroyBuffer(device_.handle(), block->buffer, nullptr);
  free_memory(block->memory);
  block->mapped = nullptr;
  block->buffer = VK_NULL_HANDLE;
  block->memory = VK_NULL_HANDLE;
}

hal_status MemoryManager::allocate(uint64_t size, Allocation* out) {
  if (size == 0 || size > max_allocation_size_) {
    return hal::failf(HAL_ERROR_OUT_OF_MEMORY,
                      "{} bytes exceed the largest allocation the device allows ({} bytes)", size,
                      max_allocation_size_);
  }
  auto chunk = std::make_unique<DeviceChunk>();
  chunk->size = size;
  std::lock_guard<std::mutex> lock(mutex_);
  if (size > block_size_ / 2) {
    std::unique_ptr<MemoryBlock> block;
    hal_status status = create_block(size + kAddressAlignment, /*dedicated=*/true, &block);
    if (status != HAL_SUCCESS) return status;
    chunk->block = block.get();
    chunk->offset = block->pad;
    blocks_.push_back(std::move(block));
  } else {
    for (auto& block : blocks_) {
      if (!block->ranges) continue;
      uint64_t offset = 0;
      if (block->ranges->allocate(size, &offset)) {
        chunk->block = block.get();
        chunk->range_offset = offset;
        chunk->offset = block->pad + offset;
        break;
      }
    }
    if (chunk->block == nullptr) {
      std::unique_ptr<MemoryBlock> block;
      hal_status status = create_block(block_size_, /*dedicated=*/false, &block);
      if (status != HAL_SUCCESS) return status;
      uint64_t offset = 0;
      if (!block->ranges->allocate(size, &offset)) {
        destroy_block(block.get());
        return hal::failf(HAL_ERROR_INTERNAL, "a fresh {}-byte block cannot hold {} bytes",
                          block_size_, size);
      }
      chunk->block = block.get();
      chunk->range_offset = offset;
      chunk->offset = block->pad + offset;
      blocks_.push_back(std::move(block));
    }
  }
  device_bytes_ += align_up(size, kAddressAlignment);
  out->base = chunk->block->address + (chunk->offset - chunk->block->pad);
  out->size = size;
  out->backend_data = reinterpret_cast<uintptr_t>(chunk.release());
  return HAL_SUCCESS;
}

hal_status MemoryManager::release(const Allocation& alloc) {
  std::unique_ptr<DeviceChunk> chunk(
      reinterpret_cast<DeviceChunk*>(static_cast<uintptr_t>(alloc.backend_data)));
  if (!chunk) return hal::fail(HAL_ERROR_INTERNAL, "allocation without backend data");
  std::lock_guard<std::mutex> lock(mutex_);
  device_bytes_ -= align_up(chunk->size, kAddressAlignment);
  MemoryBlock* block = chunk->block;
  bool drop = true;
  if (block->ranges) {
    block->ranges->release(chunk->range_offset);
    size_t sub_blocks = 0;
    for (auto& b : blocks_) sub_blocks += b->ranges ? 1 : 0;
    // Keep one empty block around so alloc/free loops do not churn driver allocations.
    drop = block->ranges->empty() && sub_blocks > 1;
  }
  if (drop) {
    destroy_block(block);
    blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(),
                               [block](const auto& b) { return b.get() == block; }));
  }
  return HAL_SUCCESS;
}

hal_status MemoryManager::create_host_buffer(uint64_t size, HostBuffer* out,
                                             VkBufferUsageFlags extra_usage) {
  const VolkDeviceTable& vk = device_.vk();
  HostBuffer buffer;
  buffer.size = size;
  // Kernels read some host-visible memory by address (PTX parameters too large for push
  // constants travel in staging memory), so it has an address wherever the device has them.
  const bool device_address = device_.caps().buffer_device_address;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | extra_usage;
  if (device_address) info.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = vk.vkCreateBuffer(device_.handle(), &info, nullptr, &buffer.buffer);
  if (result != VK_SUCCESS) return device_.check(result, "vkCreateBuffer (host-visible)");
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device_.handle(), buffer.buffer, &requirements);
  VkPhysicalDeviceMemoryProperties props{};
  vkGetPhysicalDeviceMemoryProperties(device_.physical(), &props);
  int type =
      find_type(props, requirements.memoryTypeBits, kHostFlags, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  hal_status status = HAL_SUCCESS;
  if (type < 0) {
    status = hal::fail(HAL_ERROR_NOT_SUPPORTED, "no host-visible memory type for transfers");
  } else {
    status = allocate_memory(requirements.size, static_cast<uint32_t>(type), device_address,
                             &buffer.memory);
  }
  if (status == HAL_SUCCESS) {
    result = vk.vkBindBufferMemory(device_.handle(), buffer.buffer, buffer.memory, 0);
    if (result != VK_SUCCESS) status = device_.check(result, "vkBindBufferMemory");
  }
  if (status == HAL_SUCCESS && device_address) {
    VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address_info.buffer = buffer.buffer;
    buffer.address = vk.vkGetBufferDeviceAddress(device_.handle(), &address_info);
  }
  if (status == HAL_SUCCESS) {
    void* mapped = nullptr;
    result = vk.vkMapMemory(device_.handle(), buffer.memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (result != VK_SUCCESS) {
      status = device_.check(result, "vkMapMemory");
    } else {
      buffer.mapped = static_cast<uint8_t*>(mapped);
    }
  }
  if (status != HAL_SUCCESS) {
    destroy_host_buffer(&buffer);
    return status;
  }
  *out = buffer;
  return HAL_SUCCESS;
}

void MemoryManager::destroy_host_buffer(HostBuffer* buffer) {
  const VolkDeviceTable& vk = device_.vk();
  if (buffer->mapped != nullptr) vk.vkUnmapMemory(device_.handle(), buffer->memory);
  if (buffer->buffer != VK_NULL_HANDLE) {
    vk.vkDestroyBuffer(device_.handle(), buffer->buffer, nullptr);
  }
  free_memory(buffer->memory);
  *buffer = HostBuffer{};
}

hal_status MemoryManager::host_allocate(uint64_t size, HostAllocation* out) {
  auto buffer = std::make_unique<HostBuffer>();
  hal_status status = create_host_buffer(size, buffer.get());
  if (status != HAL_SUCCESS) return status;
  out->base = buffer->mapped;
  out->driver_data = reinterpret_cast<uintptr_t>(buffer.release());
  return HAL_SUCCESS;
}

void MemoryManager::host_release(const HostAllocation& allocation) {
  std::unique_ptr<HostBuffer> buffer(
      reinterpret_cast<HostBuffer*>(static_cast<uintptr_t>(allocation.driver_data)));
  if (buffer) destroy_host_buffer(buffer.get());
}

PendingRelease::PendingRelease(MemoryManager& memory, const Allocation& alloc)
    : memory_(memory), host_(false), device_allocation_(alloc) {
  memory_.pending_releases_.fetch_add(1);
}

PendingRelease::PendingRelease(MemoryManager& memory, const HostAllocation& host)
    : memory_(memory), host_(true), host_allocation_(host) {
  memory_.pending_releases_.fetch_add(1);
}

PendingRelease::~PendingRelease() {
  if (host_) {
    memory_.host_release(host_allocation_);
  } else {
    // Fails only for an allocation without backend data, which the device refuses before it
    // creates a PendingRelease; a destructor has no caller to tell anyway.
    (void)memory_.release(device_allocation_);
  }
  memory_.pending_releases_.fetch_sub(1);
}

}  // namespace hal::vulkan
