#include "side_device.h"

namespace bench {

SideDevice::SideDevice(const Context& ctx, const std::string& backend,
                       const std::function<bool(const hal_device_info&)>& accept, hal_ir ir,
                       const std::string& what, const std::string& hint) {
  ctx_.options = ctx.options;
  ctx_.report = ctx.report;
  ctx_.cache_dir = ctx.cache_dir;
  ctx_.ir = ir;
  std::string seen;
  for (uint32_t index = 0;; ++index) {
    const std::string selector = backend + ":" + std::to_string(index);
    hal_device device = nullptr;
    if (hal_device_find(selector.c_str(), &device) != HAL_SUCCESS) {
      // What to do first; what hal said after.
      missing_ = "no " + what + ": " + hint + " (" +
                 (index == 0 ? std::string(hal_last_error()) : "found only " + seen) + ")";
      return;
    }
    hal_device_info info{};
    info.struct_size = sizeof info;
    BENCH_CHECK(hal_device_get_info(device, &info));
    if (accept(info)) {
      ctx_.device = device;
      ctx_.info = info;
      selector_ = selector;
      BENCH_CHECK(hal_stream_create(device, &ctx_.stream));
      return;
    }
    seen += (seen.empty() ? "" : ", ") + selector + " (" + info.name + ")";
  }
}

SideDevice::~SideDevice() {
  if (ctx_.stream != nullptr) hal_stream_destroy(ctx_.stream);
}

}  // namespace bench
