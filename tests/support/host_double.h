// HostDouble: a test double of the core's services to drivers (hal_driver_host), for tests that
// drive a driver's devices directly, without a core. While one is alive it is the host those
// devices see (attach_host_for_testing): it records which devices reported themselves lost
// (Device::report_lost) and answers Device::lost() from that record, as the core does; the log
// goes to hal's log and the trace is off. One at a time.
#pragma once

#include "common/backend.h"

#include <string>

namespace hal_test {

class HostDouble {
 public:
  HostDouble();   // attaches itself, remembering the host attached before
  ~HostDouble();  // restores that host
  HostDouble(const HostDouble&) = delete;
  HostDouble& operator=(const HostDouble&) = delete;

  // Whether |device| reported itself lost, and the first cause it gave ("" if none).
  bool lost(const hal::Device& device) const;
  std::string cause(const hal::Device& device) const;

 private:
  const hal_driver_host* previous_;
};

}  // namespace hal_test
