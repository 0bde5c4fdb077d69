// The persistent pipeline cache: a warm start from a saved file, and files that must be
// ignored (corrupt, truncated, written for another device) without crashing.
#include "vk_test_util.h"

#include "vulkan/pipeline_cache.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace hal_vk_test {
namespace {

namespace fs = std::filesystem;

class PipelineCacheTest : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    dir_ = fs::temp_directory_path() / ("hal-vk-cache-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
    VulkanTest::TearDown();
  }
  std::vector<uint8_t> read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>());
  }
  void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  // A cache in |dir_| that compiled one pipeline and saved itself; returns its file's bytes.
  std::vector<uint8_t> saved_cache(hal::vulkan::VulkanDevice& device, std::string* path) {
    hal::vulkan::PipelineCache cache(device);
    EXPECT_OK(cache.init(dir_.string()));
    EXPECT_FALSE(cache.warm());
    // Compile a pipeline through it: the smallest valid compute shader.
    std::vector<uint32_t> words = read_words("vadd");
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = words.size() * 4;
    info.pCode = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    EXPECT_EQ(device.vk().vkCreateShaderModule(device.handle(), &info, nullptr, &module),
              VK_SUCCESS);
    VkDescriptorSetLayoutBinding bindings[3];
    for (uint32_t b = 0; b < 3; ++b) {
      bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 3;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    EXPECT_EQ(
        device.vk().vkCreateDescriptorSetLayout(device.handle(), &set_info, nullptr, &set_layout),
        VK_SUCCESS);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    EXPECT_EQ(device.vk().vkCreatePipelineLayout(device.handle(), &layout_info, nullptr, &layout),
              VK_SUCCESS);
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    EXPECT_EQ(device.vk().vkCreateComputePipelines(device.handle(), cache.handle(), 1,
                                                   &pipeline_info, nullptr, &pipeline),
              VK_SUCCESS);
    cache.mark_dirty();
    cache.save();
    device.vk().vkDestroyPipeline(device.handle(), pipeline, nullptr);
    device.vk().vkDestroyPipelineLayout(device.handle(), layout, nullptr);
    device.vk().vkDestroyDescriptorSetLayout(device.handle(), set_layout, nullptr);
    device.vk().vkDestroyShaderModule(device.handle(), module, nullptr);
    *path = cache.path();
    return read(cache.path());
  }

  bool warm_after_writing(hal::vulkan::VulkanDevice& device, const std::string& path,
                          const std::vector<uint8_t>& bytes) {
    write(path, bytes);
    hal::vulkan::PipelineCache cache(device);
    EXPECT_OK(cache.init(dir_.string()));
    EXPECT_NE(cache.handle(), VK_NULL_HANDLE);
    return cache.warm();
  }

  fs::path dir_;
};

TEST_F(PipelineCacheTest, WarmStartFromASavedFile) {
  hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  std::string path;
  std::vector<uint8_t> file = saved_cache(*device, &path);
  ASSERT_GT(file.size(), 64u);
  EXPECT_EQ(fs::path(path).parent_path(), dir_);
  // Written atomically: no temporary file is left behind.
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  hal::vulkan::PipelineCache warm(*device);
  ASSERT_OK(warm.init(dir_.string()));
  EXPECT_TRUE(warm.warm());
}

TEST_F(PipelineCacheTest, BadFilesAreIgnored) {
  hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  std::string path;
  const std::vector<uint8_t> good = saved_cache(*device, &path);
  ASSERT_GT(good.size(), 64u);

  std::vector<uint8_t> corrupt = good;
  corrupt[corrupt.size() - 5] ^= 0x40;
  EXPECT_FALSE(warm_after_writing(*device, path, corrupt));

  std::vector<uint8_t> truncated(good.begin(), good.begin() + good.size() / 2);
  EXPECT_FALSE(warm_after_writing(*device, path, truncated));

  std::vector<uint8_t> header_only(good.begin(), good.begin() + 10);
  EXPECT_FALSE(warm_after_writing(*device, path, header_only));

  std::vector<uint8_t> foreign = good;
  foreign[8] ^= 0x01;  // the vendor id
  EXPECT_FALSE(warm_after_writing(*device, path, foreign));

  std::vector<uint8_t> garbage(good.size());
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 37);
  EXPECT_FALSE(warm_after_writing(*device, path, garbage));

  EXPECT_TRUE(warm_after_writing(*device, path, good));  // and the good file still works
}

TEST_F(PipelineCacheTest, ModulesPersistTheDeviceCache) {
  hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  const std::string path = device->pipeline_cache().path();
  ASSERT_FALSE(path.empty());
  std::error_code error;
  fs::remove(path, error);
  hal_module module = nullptr;
  std::vector<uint8_t> blob = read_shader("saxpy");
  ASSERT_OK(hal_module_load(device_, blob.data(), blob.size(), nullptr, &module));
  ASSERT_OK(hal_module_unload(module));  // saves the cache the module's pipeline went into
  EXPECT_TRUE(fs::exists(path)) << path;
  hal::vulkan::PipelineCache reloaded(*device);
  ASSERT_OK(reloaded.init(fs::path(path).parent_path().string()));
  EXPECT_TRUE(reloaded.warm());
}

}  // namespace
}  // namespace hal_vk_test
