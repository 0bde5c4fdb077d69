// Device selectors: parsing (hal::parse_selector) and resolution through hal_device_find,
// including the HAL_DEVICE environment variable.
#include "test_util.h"

#include "common/error.h"
#include "common/selector.h"

#include <string>
#include <vector>

namespace hal_test {
namespace {

const std::vector<std::string> kBackends = {"cuda", "vulkan"};

struct Parsed {
  hal_status status;
  hal::Selector selector;
  std::string message;
};

Parsed parse(const std::string& text) {
  hal::clear_pending_error();
  Parsed p{HAL_ERROR_INTERNAL, {}, ""};
  p.selector.name = "untouched";
  p.status = hal::parse_selector(text, kBackends, &p.selector);
  p.message = hal::pending_error();
  return p;
}

TEST(SelectorParse, BackendIndex) {
  Parsed p = parse("vulkan:0");
  ASSERT_EQ(p.status, HAL_SUCCESS);
  EXPECT_EQ(p.selector.kind, hal::Selector::Kind::kBackendIndex);
  EXPECT_EQ(p.selector.backend, "vulkan");
  EXPECT_EQ(p.selector.index, 0u);
  p = parse(" CUDA:1 ");
  ASSERT_EQ(p.status, HAL_SUCCESS);
  EXPECT_EQ(p.selector.kind, hal::Selector::Kind::kBackendIndex);
  EXPECT_EQ(p.selector.backend, "cuda");
  EXPECT_EQ(p.selector.index, 1u);
  p = parse("cuda : 4294967295");
  ASSERT_EQ(p.status, HAL_SUCCESS);
  EXPECT_EQ(p.selector.index, 4294967295u);
}

TEST(SelectorParse, GlobalIndex) {
  Parsed p = parse("2");
  ASSERT_EQ(p.status, HAL_SUCCESS);
  EXPECT_EQ(p.selector.kind, hal::Selector::Kind::kGlobalIndex);
  EXPECT_EQ(p.selector.index, 2u);
  p = parse(" 007 ");
  ASSERT_EQ(p.status, HAL_SUCCESS);
  EXPECT_EQ(p.selector.index, 7u);
}

TEST(SelectorParse, Default) {
  for (const char* text : {"default", "DEFAULT", "", "   ", " Default\t"}) {
    const Parsed p = parse(text);
    ASSERT_EQ(p.status, HAL_SUCCESS) << "'" << text << "'";
    EXPECT_EQ(p.selector.kind, hal::Selector::Kind::kDefault) << "'" << text << "'";
  }
}

TEST(SelectorParse, MalformedBackendIndexIsRefused) {
  Parsed p = parse("vulkan:");
  EXPECT_EQ(p.status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(p.message.find("expected a device index after 'vulkan:'"), std::string::npos)
      << p.message;
  p = parse("vulkan:x");
  EXPECT_EQ(p.status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(p.message.find("as in 'vulkan:0'"), std::string::npos) << p.message;
  EXPECT_EQ(parse("cuda:-1").status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(parse("cuda:1:2").status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p.selector.name, "untouched") << "output written on failure";
}

TEST(SelectorParse, UnknownBackendIsRefused) {
  const Parsed p = parse("foo:0");
  EXPECT_EQ(p.status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(p.message.find("unknown backend 'foo'"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find("Known backends: cuda, vulkan"), std::string::npos) << p.message;
  hal::Selector s;
  hal::clear_pending_error();
  EXPECT_EQ(hal::parse_selector("cuda:0", {}, &s), HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(hal::pending_error().find("Known backends: none"), std::string::npos);
}

TEST(SelectorParse, HugeIndicesAreRefused) {
  Parsed p = parse("4294967296");
  EXPECT_EQ(p.status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(p.message.find("too large"), std::string::npos) << p.message;
  EXPECT_EQ(parse("99999999999999999999999999").status, HAL_ERROR_INVALID_ARGUMENT);
  p = parse("vulkan:4294967296");
  EXPECT_EQ(p.status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(p.message.find("too large"), std::string::npos) << p.message;
}

TEST(SelectorParse, AnythingElseIsANameSubstring) {
  for (const char* text : {"RTX 4090", "llvmpipe", "foo:x", "NVIDIA: A100", "-1", "gpu0", ":0"}) {
    const Parsed p = parse(text);
    ASSERT_EQ(p.status, HAL_SUCCESS) << text << ": " << p.message;
    EXPECT_EQ(p.selector.kind, hal::Selector::Kind::kName) << text;
    EXPECT_EQ(p.selector.name, text);
  }
  EXPECT_EQ(parse("  Tesla V100 ").selector.name, "Tesla V100") << "trimmed";
}

TEST(SelectorParse, ContainsIgnoreCase) {
  EXPECT_TRUE(hal::contains_ignore_case("NVIDIA GeForce RTX 4090", "geforce"));
  EXPECT_TRUE(hal::contains_ignore_case("llvmpipe", ""));
  EXPECT_FALSE(hal::contains_ignore_case("llvmpipe", "llvmpipe (LLVM)"));
  EXPECT_FALSE(hal::contains_ignore_case("abc", "abd"));
}

// Resolution with the double: global 0 = "Double GPU (test double)" (double:1),
// global 1 = "Double CPU (test double)" (double:0).
class Find : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(hal_device_get(0, &gpu_));
    ASSERT_OK(hal_device_get(1, &cpu_));
  }
  hal_device find(const char* selector) {
    hal_device d = nullptr;
    EXPECT_OK(hal_device_find(selector, &d)) << "selector '" << selector << "'";
    return d;
  }
  hal_device gpu_ = nullptr;
  hal_device cpu_ = nullptr;
  ScopedEnv no_env_{"HAL_DEVICE", nullptr};
};

TEST_F(Find, ResolvesEveryForm) {
  EXPECT_EQ(find("double:0"), cpu_);
  EXPECT_EQ(find("double:1"), gpu_);
  EXPECT_EQ(find(" DOUBLE : 1 "), gpu_);
  EXPECT_EQ(find("0"), gpu_);
  EXPECT_EQ(find("1"), cpu_);
  EXPECT_EQ(find("default"), gpu_);
  EXPECT_EQ(find(""), gpu_);
  EXPECT_EQ(find("cpu"), cpu_);
  EXPECT_EQ(find("Double GPU"), gpu_);
  EXPECT_EQ(find("test double"), gpu_) << "the first match in global order wins";
}

TEST_F(Find, FailuresExplainThemselves) {
  hal_device d = reinterpret_cast<hal_device>(0x77);
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("double:2", &d));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"the double backend has 2 device(s)",
                                              "[0] double:1 (Double GPU (test double))",
                                              "[1] double:0 (Double CPU (test double))"}));
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("2", &d));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"device index 2 is out of range", "[1] double:0"}));
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("quantum", &d));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"no device name contains 'quantum'", "[0]"}));
  // Backends this build does not have are unknown names.
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("vulkan:0", &d));
  EXPECT_TRUE(
      LastErrorIs("hal_device_find", {"unknown backend 'vulkan'", "Known backends: double"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("double:x", &d));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("99999999999", &d));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find(nullptr, &d));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"selector is NULL"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("0", nullptr));
  EXPECT_EQ(d, reinterpret_cast<hal_device>(0x77)) << "output written on failure";
}

TEST_F(Find, HalDeviceChoosesTheDefault) {
  {
    ScopedEnv env("HAL_DEVICE", "double:0");
    EXPECT_EQ(find("default"), cpu_);
    EXPECT_EQ(find(""), cpu_);
    // Explicit selectors ignore it.
    EXPECT_EQ(find("0"), gpu_);
    EXPECT_EQ(find("double:1"), gpu_);
  }
  EXPECT_EQ(find("default"), gpu_) << "unset again";
  {
    ScopedEnv env("HAL_DEVICE", "CPU");
    EXPECT_EQ(find("default"), cpu_);
  }
  {
    ScopedEnv env("HAL_DEVICE", "1");
    EXPECT_EQ(find(" default "), cpu_);
  }
  {
    ScopedEnv env("HAL_DEVICE", "default");
    EXPECT_EQ(find("default"), gpu_);
  }
  {
    ScopedEnv env("HAL_DEVICE", "");
    EXPECT_EQ(find("default"), gpu_);
  }
}

TEST_F(Find, BadHalDeviceIsReported) {
  hal_device d = reinterpret_cast<hal_device>(0x77);
  {
    ScopedEnv env("HAL_DEVICE", "9");
    EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("default", &d));
    EXPECT_TRUE(LastErrorIs("hal_device_find", {"HAL_DEVICE='9'", "device index 9"}));
    EXPECT_EQ(find("1"), cpu_) << "explicit selectors still work";
  }
  {
    ScopedEnv env("HAL_DEVICE", "bogus:1");
    EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("", &d));
    EXPECT_TRUE(LastErrorIs("hal_device_find", {"HAL_DEVICE", "unknown backend 'bogus'"}));
  }
  {
    ScopedEnv env("HAL_DEVICE", "nothing-like-this");
    EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("default", &d));
    EXPECT_TRUE(LastErrorIs("hal_device_find", {"HAL_DEVICE='nothing-like-this'"}));
  }
  EXPECT_EQ(d, reinterpret_cast<hal_device>(0x77));
}

}  // namespace
}  // namespace hal_test
