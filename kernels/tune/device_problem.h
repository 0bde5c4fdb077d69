// What every tuning Problem that runs the pack's kernels on a hal device shares: the stream and
// events runs are timed with, the candidates' loaded modules, the problem's device memory and
// the conversion to and from the family's storage type (fp32, or fp16 with fp32 arithmetic).
//
// A family (MatmulProblem, AttentionProblem) fills candidates_, family_ and bucket_, allocates
// its buffers with alloc(), and implements check() and run(): time() times run().
//
// Thread-safety: one thread at a time.
#pragma once

#include "tuner.h"

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hal_kernels::tune {

// "<call> failed: <status>: <hal_last_error()>".
std::string status_text(const char* call, hal_status status);

// A kernel's tunable values by name, in declaration order.
using TunableValues = std::vector<std::pair<std::string, uint32_t>>;

// Every combination of the allowed values of |kernel|'s tunables (its value alone where it lists
// none), the first tunable varying slowest.
std::vector<TunableValues> tunable_combinations(const hal_kernel_info& kernel);

// |kernel|'s tunables as their default values.
TunableValues tunable_defaults(const hal_kernel_info& kernel);

// The value of tunable |name| in |values|, or 0 when it is not there.
uint32_t tunable_value(const TunableValues& values, const char* name);

// The specialization constants that set |values| on |kernel| (by its tunables' spec ids).
std::vector<Specialization> specializations_for(const hal_kernel_info& kernel,
                                                const TunableValues& values);

// The kernel of |kernel|'s pack family whose tunables' defaults are |values| (a named instance,
// so a variant that is one carries its name), else |kernel|.
const hal_kernel_info& instance_for(const hal_kernel_info& kernel, const TunableValues& values);

// Calls |add| for every variant, on a device with |info| in |ir|, of the pack's kernels whose
// family |in_family| accepts: on PTX each kernel with its fixed values (|specialise| false); on
// SPIR-V every combination of each pack family's allowed values (|specialise| true), from the
// instance that has them as defaults where one does. Kernels needing a feature the device lacks
// are left out and set *lacks_features.
void for_each_variant(
    const hal_device_info& info, hal_ir ir,
    const std::function<bool(const std::string& pack_family)>& in_family,
    const std::function<void(const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                             const TunableValues& values, bool specialise)>& add,
    bool* lacks_features);

// A Candidate for |kernel| from |blob|, with |values| as specialization constants when
// |specialise| (SPIR-V) and the kernel's block; tile and label are left to the family.
Candidate candidate_for(const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                        const TunableValues& values, bool specialise);

class DeviceProblem : public Problem {
 public:
  ~DeviceProblem() override;

  const std::string& family() const override { return family_; }
  const std::string& bucket() const override { return bucket_; }
  const std::vector<Candidate>& candidates() const override { return candidates_; }
  // Times |reps| runs of run(): each between two events (hal_event_elapsed_ms), or the wall
  // time of the launch and a synchronize where the device has no timestamps.
  bool time(const Candidate& candidate, uint32_t reps, std::vector<double>* ms,
            std::string* why) override;

  // The candidates, for a test to plant or remove some before the first check or time (loaded
  // modules are kept by candidate address); a planted blob must outlive the problem.
  std::vector<Candidate>& mutable_candidates() { return candidates_; }
  // What timing uses: "events" or "wall clock".
  const char* clock() const { return events_ ? "events" : "wall clock"; }

 protected:
  struct Loaded {
    hal_module module = nullptr;
    hal_function function = nullptr;
  };

  DeviceProblem() = default;
  // Creates the stream (and the events, where the device has timestamps) on |device|; |f16|
  // selects fp16 storage for upload() and download().
  bool open(hal_device device, bool f16, std::string* why);
  // |candidate|'s module and function, loaded on first use and kept until the problem goes.
  bool load(const Candidate& candidate, Loaded** out, std::string* why);
  // |count| elements of the storage type (|bytes_each| when not 0), freed with the problem.
  bool alloc(size_t count, hal_deviceptr* out, std::string* why, size_t bytes_each = 0);
  // Frees, when it goes, what alloc() returned during its life: a check's scratch buffers.
  class ScratchScope {
   public:
    explicit ScratchScope(DeviceProblem* problem)
        : problem_(problem), mark_(problem->allocations_.size()) {}
    ~ScratchScope() { problem_->free_since(mark_); }
    ScratchScope(const ScratchScope&) = delete;
    ScratchScope& operator=(const ScratchScope&) = delete;

   private:
    DeviceProblem* problem_;
    size_t mark_;
  };
  // Uploads |host| (fp32 values) to |ptr| in the storage type, and reads |count| back.
  bool upload(hal_deviceptr ptr, const std::vector<float>& host, std::string* why);
  bool download(hal_deviceptr ptr, size_t count, std::vector<float>* host, std::string* why);
  // Fills |count| elements at |ptr| with NaN, so an output a candidate fails to write is wrong
  // whatever the memory held before.
  bool poison(hal_deviceptr ptr, size_t count, std::string* why);
  // Launches |loaded| with |grid|, the candidate's block and |args|.
  bool launch(const Candidate& candidate, const Loaded& loaded, const uint32_t grid[3], void** args,
              std::string* why);
  // One run at the problem shape: what time() measures (the launch only; no synchronize).
  virtual bool run(const Candidate& candidate, const Loaded& loaded, std::string* why) = 0;
  static bool fail(std::string* why, const std::string& what);

  hal_device device_ = nullptr;
  hal_stream stream_ = nullptr;
  bool f16_ = false;
  std::string family_, bucket_;
  std::vector<Candidate> candidates_;

 private:
  hal_event start_ = nullptr, end_ = nullptr;
  bool events_ = false;
  std::map<const Candidate*, Loaded> loaded_;
  std::vector<hal_deviceptr> allocations_;

  // Frees the allocations past the first |mark|, after the stream has finished with them.
  void free_since(size_t mark);
};

}  // namespace hal_kernels::tune
