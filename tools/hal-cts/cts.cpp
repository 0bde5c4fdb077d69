// The shared parts of hal-cts: options, devices, the fixture and the helpers of cts.h.
#include "cts.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

namespace cts {

namespace {

Options g_options;
std::vector<Device> g_devices;
std::mutex g_figures_mutex;
std::vector<Figure> g_figures;

}  // namespace

const char* ir_text(hal_ir ir) {
  switch (ir) {
    case HAL_IR_SPIRV:
      return "SPIR-V";
    case HAL_IR_PTX:
      return "PTX";
    case HAL_IR_AUTO:
      return "each device's own";
    default:
      return "an IR hal-cts does not name";
  }
}

const Options& options() {
  return g_options;
}
void set_options(const Options& options) {
  g_options = options;
}

const std::vector<Device>& devices() {
  return g_devices;
}
void set_devices(std::vector<Device> devices) {
  g_devices = std::move(devices);
}

std::vector<const Device*> device_params() {
  std::vector<const Device*> out;
  for (const Device& d : g_devices) out.push_back(&d);
  return out;
}

void PrintTo(const Device* device, std::ostream* os) {
  *os << device->label;
}

std::string device_name(const ::testing::TestParamInfo<const Device*>& info) {
  return info.param->label;
}

// Success and HAL_ERROR_NOT_READY leave hal_last_error() as an earlier call set it: quoting it
// there would blame this call for an older message.
static bool sets_last_error(hal_status status) {
  return status != HAL_SUCCESS && status != HAL_ERROR_NOT_READY;
}

std::string describe(hal_status status) {
  if (!sets_last_error(status)) {
    return std::string(hal_status_string(status)) +
           " (a status that leaves hal_last_error() unchanged: no message of its own)";
  }
  return std::string(hal_status_string(status)) + ": " + hal_last_error();
}

void expect_status(hal_status expected, const char* api, hal_status got, const char* text,
                   const char* file, int line) {
  const std::string message = hal_last_error();
  if (got != expected) {
    ADD_FAILURE_AT(file, line) << text << " returned " << describe(got) << ", expected "
                               << hal_status_string(expected);
    return;
  }
  if (message.empty()) {
    ADD_FAILURE_AT(file, line) << text << " returned " << hal_status_string(got)
                               << " but hal_last_error() is empty";
  } else if (message.find(api) == std::string::npos) {
    ADD_FAILURE_AT(file, line) << text << ": hal_last_error() does not name " << api << ": \""
                               << message << "\"";
  }
}

// ---- DeviceTest -------------------------------------------------------------------------------

void DeviceTest::SetUp() {
  const hal_status s = hal_stream_create(device(), &stream_);
  ASSERT_EQ(s, HAL_SUCCESS) << "hal_stream_create -> " << describe(s);
}

void DeviceTest::TearDown() {
  if (stream_ != nullptr) {
    const hal_status s = hal_stream_destroy(stream_);
    EXPECT_EQ(s, HAL_SUCCESS) << "hal_stream_destroy -> " << describe(s);
    stream_ = nullptr;
  }
}

hal_ir pack_ir_of(const Device& device) {
  auto takes = [&](hal_ir ir) { return (device.info.ir_mask & ir) != 0; };
  if (options().ir != HAL_IR_AUTO) return takes(options().ir) ? options().ir : HAL_IR_AUTO;
  // A device that takes both (a Vulkan device translating PTX) runs the pack in its own IR:
  // warp-level PTX runs slowly where warps go through workgroup memory, and tensor-core PTX does
  // not translate yet. --ir ptx
  // runs the translation instead.
  if (takes(HAL_IR_SPIRV)) return HAL_IR_SPIRV;
  if (takes(HAL_IR_PTX)) return HAL_IR_PTX;
  if (takes(HAL_IR_BUILTIN)) return HAL_IR_BUILTIN;
  return HAL_IR_AUTO;
}

hal_ir DeviceTest::pack_ir() const {
  return pack_ir_of(*GetParam());
}

std::string DeviceTest::cannot_run(const std::string& name) const {
  if (pack_ir() == HAL_IR_AUTO && options().ir != HAL_IR_AUTO) {
    return std::string("The device does not take ") + ir_text(options().ir) +
           ", the IR --ir asks the kernel pack to be loaded in.";
  }
  if (pack_ir() == HAL_IR_AUTO) {
    return "The device accepts none of the kernel pack's IRs: PTX, SPIR-V, or built-in kernels "
           "of the pack's names.";
  }
  const hal_kernel_info* k = hal_kernels_info(name.c_str());
  if (k == nullptr) return "The kernel pack has no kernel named " + name + ".";
  // For a built-in kernel hal_kernels_runs_on checks only that the pack has its blob: it needs
  // no feature of the device's compiler, its driver has it or not.
  char why[512];
  if (!hal_kernels_runs_on(k, pack_ir(), &info(), why, sizeof why)) {
    return std::string(why) + ".";
  }
  return "";
}

void DeviceTest::load_pack_kernel(Kernel* kernel, const std::string& name, std::string* skip) {
  skip->clear();
  if (std::string why = cannot_run(name); !why.empty()) {
    *skip = why;
    return;
  }
  if (pack_ir() != HAL_IR_BUILTIN) {
    const hal_status s = kernel->try_load(device(), name, pack_ir());
    if (s == HAL_SUCCESS || ::testing::Test::HasFatalFailure()) return;
    // A device that translates PTX (a Vulkan device) refuses the PTX it cannot translate, saying
    // why (matrix instructions, a feature it lacks): the kernel does not run here, which is a
    // reason to skip, as a missing feature is. On any other device a refusal is a failure.
    if (s == HAL_ERROR_NOT_SUPPORTED && pack_ir() == HAL_IR_PTX && takes(HAL_IR_SPIRV)) {
      *skip = "The device does not translate this kernel's PTX (" + describe(s) + ").";
      return;
    }
    FAIL() << "hal_module_load(" << name << ") -> " << describe(s);
  }
  // The device's driver brings the kernels it chooses; one it does not have is
  // HAL_ERROR_NOT_FOUND, which is a reason to skip, not a failure.
  const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), HAL_IR_BUILTIN);
  ASSERT_NE(blob, nullptr) << "the kernel pack has no built-in blob for " << name;
  hal_module module = nullptr;
  const hal_status s = hal_module_load(device(), blob->data, blob->size, nullptr, &module);
  if (s == HAL_ERROR_NOT_FOUND) {
    *skip = "The device's driver does not provide the built-in kernel " + name + " (" +
            describe(s) + ").";
    return;
  }
  ASSERT_EQ(s, HAL_SUCCESS) << "hal_module_load(built-in " << name << ") -> " << describe(s);
  kernel->module = module;  // the Kernel unloads it from here on
  kernel->info = blob->kernel;
  const hal_status f = hal_module_get_function(module, blob->entry_point, &kernel->function);
  ASSERT_EQ(f, HAL_SUCCESS) << "hal_module_get_function(" << name << ") -> " << describe(f);
}

std::vector<OwnKernel> DeviceTest::own_kernels(const std::string& base) const {
  std::vector<OwnKernel> out;
  auto add = [&](hal_ir ir, const char* ir_name, const std::string& file, std::string entry) {
    if (!takes(ir) || (options().ir != HAL_IR_AUTO && options().ir != ir)) return;
    const cts_files::FileBlob* blob = own_file(file);
    if (blob != nullptr) out.push_back({ir, ir_name, blob, std::move(entry)});
  };
  add(HAL_IR_SPIRV, "SPIR-V", base + ".spv", "main");
  add(HAL_IR_PTX, "PTX", base + ".ptx", "cts_" + base);
  return out;
}

std::string DeviceTest::no_own_kernels() const {
  return options().ir == HAL_IR_AUTO
             ? "The device takes neither SPIR-V nor PTX, the IRs of hal-cts's own kernels."
             : std::string("The device does not take ") + ir_text(options().ir) + " (--ir).";
}

void DeviceTest::for_each_own_kernel(
    const std::string& base, const std::function<void(const OwnKernel&, hal_function)>& body) {
  const std::vector<OwnKernel> kernels = own_kernels(base);
  if (kernels.empty()) GTEST_SKIP() << no_own_kernels();
  std::string refused;
  size_t ran = 0;
  for (const OwnKernel& k : kernels) {
    hal_module module = nullptr;
    hal_function function = nullptr;
    hal_status s = hal_module_load(device(), k.file->data, k.file->size, nullptr, &module);
    if (s == HAL_SUCCESS) s = hal_module_get_function(module, k.entry.c_str(), &function);
    if (s == HAL_ERROR_NOT_SUPPORTED) {
      refused += std::string(refused.empty() ? "" : "; ") + "the " + k.ir_name + " kernel " +
                 k.file->name + ": " + describe(s);
    } else if (s != HAL_SUCCESS) {
      ADD_FAILURE() << "loading hal-cts's kernel " << k.file->name << " (" << k.entry << ") -> "
                    << describe(s);
    } else {
      SCOPED_TRACE(std::string("in ") + k.ir_name + " (" + k.file->name + ")");
      ++ran;
      body(k, function);
    }
    if (module != nullptr) CTS_EXPECT_OK(hal_module_unload(module));
    if (HasFatalFailure()) return;
  }
  if (ran == 0 && !refused.empty()) GTEST_SKIP() << "The device refuses " << refused;
  // Half a check is still a result; the report lists what it left out.
  if (!refused.empty()) RecordProperty("refused", "The device refuses " + refused);
}

const cts_files::FileBlob* own_file(const std::string& name) {
  for (size_t i = 0; i < cts_files::kFileCount; ++i) {
    if (name == cts_files::kFiles[i].name) return &cts_files::kFiles[i];
  }
  return nullptr;
}

void DeviceTest::expect_device_works(const std::string& after) {
  SCOPED_TRACE("the device still runs a kernel correctly after " + after);
  hal_stream s = nullptr;
  const hal_status cs = hal_stream_create(device(), &s);
  ASSERT_EQ(cs, HAL_SUCCESS) << "hal_stream_create -> " << describe(cs);
  const uint32_t n = 1000;
  Buffer y(device(), n * sizeof(float));
  ASSERT_TRUE(y.ok()) << y.error();
  Kernel k;
  std::string skip;
  load_pack_kernel(&k, "fill_f32", &skip);
  if (k.function != nullptr) {
    uint32_t count = n;
    float value = 2.5f;
    k.launch(s, 2, 1, 1, {&y.ptr, &count, &value});
    std::vector<float> got(n, 0.0f);
    CTS_EXPECT_OK(hal_memcpy_dtoh(s, got.data(), y.ptr, n * sizeof(float)));
    CTS_EXPECT_OK(hal_stream_synchronize(s));
    EXPECT_EQ(std::count(got.begin(), got.end(), value), static_cast<long>(n));
  } else if (!skip.empty()) {
    // No kernel to run: a copy round trip is what can be checked.
    const std::vector<uint8_t> in = pattern(n * sizeof(float), 5);
    std::vector<uint8_t> out(in.size());
    CTS_EXPECT_OK(hal_memcpy_htod(s, y.ptr, in.data(), in.size()));
    CTS_EXPECT_OK(hal_memcpy_dtoh(s, out.data(), y.ptr, out.size()));
    CTS_EXPECT_OK(hal_stream_synchronize(s));
    EXPECT_EQ(first_difference(in.data(), out.data(), in.size()), -1);
  }
  CTS_EXPECT_OK(hal_stream_destroy(s));
}

// ---- Buffer and Kernel ------------------------------------------------------------------------

Buffer::Buffer(hal_device device, size_t bytes_in) : bytes(bytes_in), device_(device) {
  status_ = hal_mem_alloc(device, bytes, &ptr);
  if (status_ != HAL_SUCCESS) {
    error_ = "hal_mem_alloc(" + std::to_string(bytes) + " bytes) -> " + describe(status_) + "; ";
  }
}

Buffer::~Buffer() {
  if (status_ == HAL_SUCCESS) hal_mem_free(device_, ptr);
}

std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> out(bytes);
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < bytes; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<uint8_t>(x >> 7);
  }
  return out;
}

long long first_difference(const uint8_t* a, const uint8_t* b, size_t bytes) {
  if (std::memcmp(a, b, bytes) == 0) return -1;
  for (size_t i = 0; i < bytes; ++i) {
    if (a[i] != b[i]) return static_cast<long long>(i);
  }
  return -1;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void record_figure(const Figure& figure) {
  std::lock_guard<std::mutex> lock(g_figures_mutex);
  g_figures.push_back(figure);
}

const std::vector<Figure>& figures() {
  return g_figures;
}

}  // namespace cts
