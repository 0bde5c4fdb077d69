#include "vulkan/instance.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/validation.h"
#include "vulkan/vk_status.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

namespace hal::vulkan {
namespace {

std::atomic<uint64_t> g_validation_errors{0};
std::atomic<bool> g_validation_enabled{false};
std::atomic<bool> g_bounds_checks{false};

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// HAL_VULKAN_VALIDATION: unset, empty or "0" is off; "gpu" is the validation layer and bounds
// checks inside kernels (validation.h); any other value is the validation layer.
enum class ValidationMode { kOff, kLayer, kGpu };

ValidationMode validation_mode() {
  const char* value = std::getenv("HAL_VULKAN_VALIDATION");
  if (value == nullptr || *value == '\0' || std::string_view(value) == "0") {
    return ValidationMode::kOff;
  }
  std::string lower(value);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "gpu" ? ValidationMode::kGpu : ValidationMode::kLayer;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                void*) {
  const char* text = data != nullptr && data->pMessage != nullptr ? data->pMessage : "";
  const char* id = data != nullptr && data->pMessageIdName != nullptr ? data->pMessageIdName : "";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    note_validation_error();
    hal::log()->error("vulkan validation: [{}] {}", id, text);
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    hal::log()->warn("vulkan validation: [{}] {}", id, text);
  } else {
    hal::log()->debug("vulkan: [{}] {}", id, text);
  }
  return VK_FALSE;  // never abort the call that triggered the message
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const VkLayerProperties& layer : layers) {
    if (std::strcmp(layer.layerName, name) == 0) return true;
  }
  return false;
}

bool layer_has_extension(const char* layer, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> props(count);
  if (vkEnumerateInstanceExtensionProperties(layer, &count, props.data()) != VK_SUCCESS) {
    return false;
  }
  for (const VkExtensionProperties& p : props) {
    if (std::strcmp(p.extensionName, name) == 0) return true;
  }
  return false;
}

std::vector<std::string> instance_extensions() {
  uint32_t count = 0;
  std::vector<std::string> names;
  if (vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) != VK_SUCCESS) return names;
  std::vector<VkExtensionProperties> props(count);
  if (vkEnumerateInstanceExtensionProperties(nullptr, &count, props.data()) != VK_SUCCESS) {
    return names;
  }
  for (const VkExtensionProperties& p : props) names.emplace_back(p.extensionName);
  return names;
}

bool contains(const std::vector<std::string>& names, const char* name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

uint64_t validation_error_count() {
  return g_validation_errors.load();
}
bool validation_enabled() {
  return g_validation_enabled.load();
}
void note_validation_error() {
  g_validation_errors.fetch_add(1);
}
void set_validation_enabled(bool enabled) {
  g_validation_enabled.store(enabled);
}
bool bounds_checks_enabled() {
  return g_bounds_checks.load();
}
void set_bounds_checks_enabled(bool enabled) {
  g_bounds_checks.store(enabled);
}

hal_status Instance::create(std::shared_ptr<Instance>* out) {
  // volkInitialize is idempotent; serialise it because it writes volk's globals.
  static std::mutex init_mutex;
  std::lock_guard<std::mutex> lock(init_mutex);
  VkResult result = volkInitialize();
  if (result != VK_SUCCESS) {
    return hal::fail(HAL_ERROR_UNAVAILABLE,
                     "the Vulkan loader libvulkan.so.1 could not be opened (searched "
                     "LD_LIBRARY_PATH, the ld.so cache and the system library directories). "
                     "Install the loader and a driver (Debian: libvulkan1 and "
                     "mesa-vulkan-drivers); vulkaninfo --summary shows what the loader finds");
  }
  uint32_t loader_version = volkGetInstanceVersion();
  if (loader_version < VK_API_VERSION_1_2) {
    return hal::failf(HAL_ERROR_UNAVAILABLE,
                      "the Vulkan loader supports only version {}.{}; hal needs Vulkan 1.2 or "
                      "newer. Update the loader (Debian: libvulkan1)",
                      VK_API_VERSION_MAJOR(loader_version), VK_API_VERSION_MINOR(loader_version));
  }
  uint32_t api = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const std::vector<std::string> available = instance_extensions();
  const ValidationMode mode = validation_mode();
  bool validation = mode != ValidationMode::kOff;
  if (validation) {
    if (has_layer(kValidationLayer) && contains(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    } else if (mode == ValidationMode::kGpu) {
      hal::log()->warn(
          "HAL_VULKAN_VALIDATION=gpu: {} is not installed (Debian: vulkan-validationlayers); "
          "running without API validation, with bounds checks in kernels",
          kValidationLayer);
      validation = false;
    } else {
      hal::log()->warn(
          "HAL_VULKAN_VALIDATION is set but {} is not installed (Debian: "
          "vulkan-validationlayers); running without validation",
          kValidationLayer);
      validation = false;
    }
  }
  VkInstanceCreateFlags flags = 0;
  if (contains(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "hal";
  app.pEngineName = "hal";
  app.engineVersion = HAL_VERSION;
  app.apiVersion = api;

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_debug_message;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Synchronisation validation as well: it checks the barriers the streams record.
  const VkValidationFeatureEnableEXT enabled_features[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = enabled_features;
  if (validation) {
    info.pNext = &messenger_info;  // also covers instance creation itself
    if (layer_has_extension(kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
      info.ppEnabledExtensionNames = extensions.data();
      validation_features.pNext = &messenger_info;
      info.pNext = &validation_features;
    }
  }

  std::shared_ptr<Instance> instance(new Instance());
  instance->api_version_ = api;
  result = vkCreateInstance(&info, nullptr, &instance->instance_);
  if (result != VK_SUCCESS) {
    hal_status status = vk_fail(result, "vkCreateInstance",
                                "No usable Vulkan driver: install one (Debian: "
                                "mesa-vulkan-drivers) and check vulkaninfo --summary");
    return status == HAL_ERROR_OUT_OF_MEMORY ? status : HAL_ERROR_UNAVAILABLE;
  }
  volkLoadInstanceOnly(instance->instance_);
  if (validation) {
    result = vkCreateDebugUtilsMessengerEXT(instance->instance_, &messenger_info, nullptr,
                                            &instance->messenger_);
    if (result != VK_SUCCESS) {
      hal::log()->warn("vkCreateDebugUtilsMessengerEXT failed ({}); validation messages are lost",
                       vk_result_name(result));
    }
  }
  set_validation_enabled(validation);
  set_bounds_checks_enabled(mode == ValidationMode::kGpu);
  hal::log()->debug("vulkan: instance created (API {}.{}, validation {}, bounds checks {})",
                    VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), validation ? "on" : "off",
                    mode == ValidationMode::kGpu ? "on" : "off");
  *out = std::move(instance);
  return HAL_SUCCESS;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

hal_status Instance::physical_devices(std::vector<VkPhysicalDevice>* out) const {
  uint32_t count = 0;
  VkResult result = vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  if (result != VK_SUCCESS) return vk_fail(result, "vkEnumeratePhysicalDevices");
  out->resize(count);
  result = vkEnumeratePhysicalDevices(instance_, &count, out->data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    return vk_fail(result, "vkEnumeratePhysicalDevices");
  }
  out->resize(count);
  return HAL_SUCCESS;
}

}  // namespace hal::vulkan
