#include "raw_vulkan.h"

#include <volk.h>

#include <cstring>
#include <vector>

namespace bench {

struct RawVulkan::State {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  // Engine style: a pool of |per_dispatch_capacity| sets, reset before each run.
  VkDescriptorPool per_dispatch_pool = VK_NULL_HANDLE;
  uint32_t per_dispatch_capacity = 0;
  // Push descriptors (when the device has VK_KHR_push_descriptor): their own layouts and pipeline.
  bool has_push_descriptors = false;
  VkDescriptorSetLayout push_set_layout = VK_NULL_HANDLE;
  VkPipelineLayout push_layout = VK_NULL_HANDLE;
  VkPipeline push_pipeline = VK_NULL_HANDLE;
  // Two groups of |buffer_count| buffers: bind-once uses the first; the per-dispatch styles
  // alternate, as an engine's consecutive kernels see different tensors.
  uint32_t buffer_count = 0;
  // Timestamps around one dispatch (time_dispatch), and the device's nanoseconds per tick.
  VkQueryPool timestamps = VK_NULL_HANDLE;
  float timestamp_period = 0;
  uint32_t timestamp_bits = 0;
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkBuffer> buffers;
  std::vector<VkDeviceMemory> memories;
  uint32_t push_bytes = 0;

  // Descriptor writes binding buffer group |group| to |set|.
  std::vector<VkWriteDescriptorSet> buffer_writes(uint32_t group, VkDescriptorSet set) const {
    std::vector<VkWriteDescriptorSet> writes(buffer_count);
    for (uint32_t i = 0; i < buffer_count; ++i) {
      writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[group * buffer_count + i];
    }
    return writes;
  }
};

namespace {

std::string vk_error(const char* call, VkResult result) {
  return std::string(call) + " returned " + std::to_string(static_cast<int>(result));
}

}  // namespace

std::unique_ptr<RawVulkan> RawVulkan::open(const uint8_t uuid[16], const std::string& name,
                                           std::string* why) {
  if (volkInitialize() != VK_SUCCESS) {
    *why = "the Vulkan loader (libvulkan.so.1) could not be opened";
    return nullptr;
  }
  std::unique_ptr<RawVulkan> raw(new RawVulkan());
  raw->s_ = std::make_unique<State>();
  State& s = *raw->s_;

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "hal-bench raw baseline";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = vkCreateInstance(&ici, nullptr, &s.instance);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateInstance", r);
    return nullptr;
  }
  volkLoadInstance(s.instance);

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(s.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(s.instance, &count, physicals.data());
  for (VkPhysicalDevice p : physicals) {
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &id;
    vkGetPhysicalDeviceProperties2(p, &props);
    if (std::memcmp(id.deviceUUID, uuid, VK_UUID_SIZE) == 0) {
      s.physical = p;
      s.timestamp_period = props.properties.limits.timestampPeriod;
      break;
    }
    if (s.physical == VK_NULL_HANDLE && name == props.properties.deviceName) {
      s.physical = p;
      s.timestamp_period = props.properties.limits.timestampPeriod;
    }
  }
  if (s.physical == VK_NULL_HANDLE) {
    *why = "no physical device matches hal's device '" + name + "'";
    return nullptr;
  }

  vkGetPhysicalDeviceQueueFamilyProperties(s.physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(s.physical, &count, families.data());
  bool found = false;
  for (uint32_t i = 0; i < count && !found; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      s.queue_family = i;
      s.timestamp_bits = families[i].timestampValidBits;
      found = true;
    }
  }
  if (!found) {
    *why = "the device has no compute queue";
    return nullptr;
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = s.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  vkEnumerateDeviceExtensionProperties(s.physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(s.physical, nullptr, &count, extensions.data());
  for (const VkExtensionProperties& e : extensions) {
    if (std::strcmp(e.extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0) {
      s.has_push_descriptors = true;
    }
  }
  const char* push_extension = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  if (s.has_push_descriptors) {
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &push_extension;
  }
  r = vkCreateDevice(s.physical, &dci, nullptr, &s.device);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateDevice", r);
    return nullptr;
  }
  volkLoadDevice(s.device);
  vkGetDeviceQueue(s.device, s.queue_family, 0, &s.queue);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = s.queue_family;
  r = vkCreateCommandPool(s.device, &pci, nullptr, &s.pool);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateCommandPool", r);
    return nullptr;
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = s.pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  r = vkAllocateCommandBuffers(s.device, &cai, &s.cmd);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkAllocateCommandBuffers", r);
    return nullptr;
  }
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(s.device, &fci, nullptr, &s.fence);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateFence", r);
    return nullptr;
  }
  return raw;
}

RawVulkan::~RawVulkan() {
  if (!s_) return;
  State& s = *s_;
  if (s.device != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(s.device);
    for (VkBuffer b : s.buffers) vkDestroyBuffer(s.device, b, nullptr);
    for (VkDeviceMemory m : s.memories) vkFreeMemory(s.device, m, nullptr);
    if (s.descriptor_pool) vkDestroyDescriptorPool(s.device, s.descriptor_pool, nullptr);
    if (s.per_dispatch_pool) vkDestroyDescriptorPool(s.device, s.per_dispatch_pool, nullptr);
    if (s.timestamps) vkDestroyQueryPool(s.device, s.timestamps, nullptr);
    if (s.pipeline) vkDestroyPipeline(s.device, s.pipeline, nullptr);
    if (s.push_pipeline) vkDestroyPipeline(s.device, s.push_pipeline, nullptr);
    if (s.layout) vkDestroyPipelineLayout(s.device, s.layout, nullptr);
    if (s.push_layout) vkDestroyPipelineLayout(s.device, s.push_layout, nullptr);
    if (s.set_layout) vkDestroyDescriptorSetLayout(s.device, s.set_layout, nullptr);
    if (s.push_set_layout) vkDestroyDescriptorSetLayout(s.device, s.push_set_layout, nullptr);
    if (s.shader) vkDestroyShaderModule(s.device, s.shader, nullptr);
    if (s.fence) vkDestroyFence(s.device, s.fence, nullptr);
    if (s.pool) vkDestroyCommandPool(s.device, s.pool, nullptr);
    vkDestroyDevice(s.device, nullptr);
  }
  if (s.instance != VK_NULL_HANDLE) vkDestroyInstance(s.instance, nullptr);
}

namespace {

// A pipeline for |shader| over |set_layout| plus |push_bytes| of push constants.
bool make_pipeline(VkDevice device, VkShaderModule shader, const char* entry,
                   VkDescriptorSetLayout set_layout, uint32_t push_bytes, VkPipelineLayout* layout,
                   VkPipeline* pipeline, std::string* why) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout;
  pli.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  VkResult r = vkCreatePipelineLayout(device, &pli, nullptr, layout);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreatePipelineLayout", r);
    return false;
  }
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = shader;
  cpi.stage.pName = entry;
  cpi.layout = *layout;
  r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpi, nullptr, pipeline);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateComputePipelines", r);
    return false;
  }
  return true;
}

}  // namespace

bool RawVulkan::prepare(const void* spirv, size_t size, const char* entry, uint32_t buffers,
                        uint64_t buffer_bytes, uint32_t push_bytes, std::string* why) {
  State& s = *s_;
  s.push_bytes = push_bytes;
  s.buffer_count = buffers;
  // The module: vkCreateShaderModule wants 4-byte aligned words.
  std::vector<uint32_t> words((size + 3) / 4);
  std::memcpy(words.data(), spirv, size);
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = size;
  smi.pCode = words.data();
  VkResult r = vkCreateShaderModule(s.device, &smi, nullptr, &s.shader);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateShaderModule", r);
    return false;
  }

  std::vector<VkDescriptorSetLayoutBinding> bindings(buffers);
  for (uint32_t i = 0; i < buffers; ++i) {
    bindings[i] = VkDescriptorSetLayoutBinding{i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                               VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = buffers;
  dli.pBindings = bindings.data();
  r = vkCreateDescriptorSetLayout(s.device, &dli, nullptr, &s.set_layout);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateDescriptorSetLayout", r);
    return false;
  }
  if (!make_pipeline(s.device, s.shader, entry, s.set_layout, push_bytes, &s.layout, &s.pipeline,
                     why)) {
    return false;
  }
  if (s.has_push_descriptors) {
    dli.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    r = vkCreateDescriptorSetLayout(s.device, &dli, nullptr, &s.push_set_layout);
    if (r != VK_SUCCESS) {
      *why = vk_error("vkCreateDescriptorSetLayout (push descriptors)", r);
      return false;
    }
    if (!make_pipeline(s.device, s.shader, entry, s.push_set_layout, push_bytes, &s.push_layout,
                       &s.push_pipeline, why)) {
      return false;
    }
  }

  // Buffers in device-local memory (any type the buffer accepts, device-local preferred).
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(s.physical, &mem);
  for (uint32_t i = 0; i < 2 * buffers; ++i) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = buffer_bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    r = vkCreateBuffer(s.device, &bci, nullptr, &buffer);
    if (r != VK_SUCCESS) {
      *why = vk_error("vkCreateBuffer", r);
      return false;
    }
    s.buffers.push_back(buffer);
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(s.device, buffer, &req);
    int type = -1;
    for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
      if (!(req.memoryTypeBits & (1u << t))) continue;
      const bool local = mem.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      if (type < 0 || local) type = static_cast<int>(t);
      if (local) break;
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    r = vkAllocateMemory(s.device, &mai, nullptr, &memory);
    if (r != VK_SUCCESS) {
      *why = vk_error("vkAllocateMemory", r);
      return false;
    }
    s.memories.push_back(memory);
    vkBindBufferMemory(s.device, buffer, memory, 0);
    s.infos.push_back(VkDescriptorBufferInfo{buffer, 0, VK_WHOLE_SIZE});
  }

  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &pool_size;
  r = vkCreateDescriptorPool(s.device, &dpi, nullptr, &s.descriptor_pool);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkCreateDescriptorPool", r);
    return false;
  }
  VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsa.descriptorPool = s.descriptor_pool;
  dsa.descriptorSetCount = 1;
  dsa.pSetLayouts = &s.set_layout;
  r = vkAllocateDescriptorSets(s.device, &dsa, &s.set);
  if (r != VK_SUCCESS) {
    *why = vk_error("vkAllocateDescriptorSets", r);
    return false;
  }
  std::vector<VkWriteDescriptorSet> writes = s.buffer_writes(0, s.set);
  vkUpdateDescriptorSets(s.device, buffers, writes.data(), 0, nullptr);
  return true;
}

bool RawVulkan::has_push_descriptors() const {
  return s_->has_push_descriptors;
}

bool RawVulkan::run_batched(Binding binding, uint32_t n, const void* push, uint32_t gx) {
  State& s = *s_;
  if (binding == Binding::kPushPerDispatch && !s.has_push_descriptors) return false;
  if (binding == Binding::kSetPerDispatch) {
    // Sized once for the largest run; reset (not freed set by set) before each run, as engines
    // recycle a pool per submission.
    if (s.per_dispatch_capacity < n) {
      if (s.per_dispatch_pool) vkDestroyDescriptorPool(s.device, s.per_dispatch_pool, nullptr);
      s.per_dispatch_pool = VK_NULL_HANDLE;
      VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n * s.buffer_count};
      VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      dpi.maxSets = n;
      dpi.poolSizeCount = 1;
      dpi.pPoolSizes = &pool_size;
      if (vkCreateDescriptorPool(s.device, &dpi, nullptr, &s.per_dispatch_pool) != VK_SUCCESS) {
        return false;
      }
      s.per_dispatch_capacity = n;
    }
    vkResetDescriptorPool(s.device, s.per_dispatch_pool, 0);
  }
  const bool pushed = binding == Binding::kPushPerDispatch;
  const VkPipelineLayout layout = pushed ? s.push_layout : s.layout;
  vkResetCommandPool(s.device, s.pool, 0);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(s.cmd, &begin);
  vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pushed ? s.push_pipeline : s.pipeline);
  if (binding == Binding::kBindOnce) {
    vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s.layout, 0, 1, &s.set, 0,
                            nullptr);
  }
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0) {
      vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0,
                           nullptr);
    }
    if (binding == Binding::kSetPerDispatch) {
      VkDescriptorSet set = VK_NULL_HANDLE;
      VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      dsa.descriptorPool = s.per_dispatch_pool;
      dsa.descriptorSetCount = 1;
      dsa.pSetLayouts = &s.set_layout;
      if (vkAllocateDescriptorSets(s.device, &dsa, &set) != VK_SUCCESS) return false;
      const std::vector<VkWriteDescriptorSet> writes = s.buffer_writes(i % 2, set);
      vkUpdateDescriptorSets(s.device, s.buffer_count, writes.data(), 0, nullptr);
      vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s.layout, 0, 1, &set, 0,
                              nullptr);
    } else if (pushed) {
      const std::vector<VkWriteDescriptorSet> writes = s.buffer_writes(i % 2, VK_NULL_HANDLE);
      vkCmdPushDescriptorSetKHR(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s.push_layout, 0,
                                s.buffer_count, writes.data());
    }
    if (s.push_bytes > 0) {
      vkCmdPushConstants(s.cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, s.push_bytes, push);
    }
    vkCmdDispatch(s.cmd, gx, 1, 1);
  }
  if (vkEndCommandBuffer(s.cmd) != VK_SUCCESS) return false;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s.cmd;
  if (vkQueueSubmit(s.queue, 1, &submit, s.fence) != VK_SUCCESS) return false;
  const bool ok = vkWaitForFences(s.device, 1, &s.fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS;
  vkResetFences(s.device, 1, &s.fence);
  return ok;
}

bool RawVulkan::time_dispatch(const void* push, uint32_t gx, double* ms) {
  State& s = *s_;
  if (s.timestamp_bits == 0 || s.timestamp_period <= 0) return false;
  if (s.timestamps == VK_NULL_HANDLE) {
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    if (vkCreateQueryPool(s.device, &info, nullptr, &s.timestamps) != VK_SUCCESS) return false;
  }
  vkResetCommandPool(s.device, s.pool, 0);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(s.cmd, &begin);
  vkCmdResetQueryPool(s.cmd, s.timestamps, 0, 2);
  vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps, 0);
  vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s.pipeline);
  vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s.layout, 0, 1, &s.set, 0,
                          nullptr);
  if (s.push_bytes > 0) {
    vkCmdPushConstants(s.cmd, s.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, s.push_bytes, push);
  }
  vkCmdDispatch(s.cmd, gx, 1, 1);
  vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps, 1);
  if (vkEndCommandBuffer(s.cmd) != VK_SUCCESS) return false;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s.cmd;
  if (vkQueueSubmit(s.queue, 1, &submit, s.fence) != VK_SUCCESS) return false;
  const bool ok = vkWaitForFences(s.device, 1, &s.fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS;
  vkResetFences(s.device, 1, &s.fence);
  uint64_t ticks[2] = {};
  if (!ok ||
      vkGetQueryPoolResults(s.device, s.timestamps, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS) {
    return false;
  }
  const uint64_t mask =
      s.timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << s.timestamp_bits) - 1;
  // Subtracted first, then masked: a counter that wrapped between the two still gives the time.
  *ms = static_cast<double>((ticks[1] - ticks[0]) & mask) * s.timestamp_period / 1e6;
  return true;
}

}  // namespace bench
