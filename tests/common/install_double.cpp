// Installs the backend test double as the only backend of this test process, before any test
// (and so before anything touches hal).
#include "backend_double.h"

namespace hal_test {

extern const bool kDoubleInstalled;
const bool kDoubleInstalled = hal::set_drivers_for_testing({double_factory()});

}  // namespace hal_test
