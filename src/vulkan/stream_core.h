// StreamCore: command recording, batched submission and completion tracking for one stream.
//
// Recording: commands go into the open batch (one command buffer). Consecutive commands are
// separated by one global memory barrier from the stages used since the last barrier to the
// stage of the next command: exactly the ordering an in-order stream needs, nothing more. A batch
// ends with one barrier that makes device writes visible to the host.
//
// Submission happens in batches: when the stream is synchronised or queried, when something waits
// for an event recorded in the open batch (not when the event is recorded: its timestamp joins
// the batch), after a device-to-host copy, before a wait for another stream's unfinished work is
// added, and after
// kMaxCommandsPerBatch commands or kMaxStagingBytesPerBatch bytes of staging memory; never once
// per command. Each submission signals the next value of the stream's timeline semaphore and
// waits for the previous one (submission order alone neither orders work on a queue nor makes
// one batch's writes visible to the next), plus any timeline values of other streams it was
// asked to wait for.
//
// Completion: a batch's resources (command buffer, descriptor pool, staging memory, objects kept
// alive for it) are recycled, and its completion callbacks run, when the timeline reaches its
// value; whichever thread observes that (stream or event synchronisation, queries, a free or an
// allocation while freed memory waits for work) does it, and so does opening a new batch. The
// objects kept alive include freed memory (PendingRelease, memory.h), which is why a batch's
// retirement may take the memory manager's lock while holding this stream's. At most
// kMaxBatchesInFlight batches are in flight: opening one more first waits for the oldest, so a
// program that issues work without ever synchronising holds bounded memory, command buffers and
// descriptor pools.
//
// Ownership and lifetime: shared (std::shared_ptr) by the stream object and by every event
// capture and cross-stream wait that refers to it, so its semaphore outlives them all. The
// destructor waits for everything submitted, then for one more, empty submission, before it
// destroys the semaphore: a driver may still be releasing a finished batch's semaphore waits
// after the batch's signal is visible to the host (see the destructor).
//
// Thread-safety: one mutex guards everything. Methods suffixed _locked, and the recording
// methods, require the caller to hold lock(); the others take it themselves. Host waits happen
// without the lock: opening a batch while kMaxBatchesInFlight are out releases it during the
// wait, which is safe because no batch is open then and calls on one stream are serialised.
#pragma once

#include "common/trace.h"
#include "vulkan/memory.h"
#include "vulkan/vk.h"

#include <hal/hal.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hal::vulkan {

class VulkanDevice;

// Host-visible bytes from a stream's staging memory, valid until the batch they were taken for
// has completed.
struct StagingSpan {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;
  uint8_t* host = nullptr;
  uint64_t address = 0;  // the bytes' device address (0 where the device has none)
};

class StreamCore {
 public:
  static constexpr uint32_t kMaxCommandsPerBatch = 256;
  static constexpr uint32_t kMaxBatchesInFlight = 8;
  static constexpr uint64_t kStagingChunkSize = 1ull << 20;
  static constexpr uint64_t kMaxStagingBytesPerBatch = 64ull << 20;

  explicit StreamCore(VulkanDevice& device);
  ~StreamCore();
  StreamCore(const StreamCore&) = delete;
  StreamCore& operator=(const StreamCore&) = delete;
  hal_status init();

  VulkanDevice& device() { return device_; }
  VkSemaphore semaphore() const { return semaphore_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  // ---- Recording (lock held) ----
  // Opens a command of pipeline |stage| (0: needs no barrier, e.g. a timestamp) and returns the
  // command buffer to record it into. With the timeline trace on, |traced| describes the command
  // (nullptr: not traced); it is bracketed by two timestamps and reaches the trace when the batch
  // completes.
  hal_status begin_command(VkPipelineStageFlags stage, VkCommandBuffer* cmd,
                           const trace::Op* traced = nullptr);
  // Closes the command; submits the batch once it holds kMaxCommandsPerBatch commands or
  // kMaxStagingBytesPerBatch bytes of staging memory.
  hal_status end_command();
  // The stream's row in the timeline trace (0 when the trace is off).
  uint32_t trace_row() const { return trace_row_; }
  // Staging bytes for the open batch.
  hal_status stage(uint64_t size, StagingSpan* out);
  // Runs |callback| (under the lock) once the open batch has completed.
  void on_complete(std::function<void()> callback);
  // Keeps |object| alive until the open batch has completed.
  void keep_alive(std::shared_ptr<void> object);
  // Whether the object most recently passed to keep_alive() for the open batch is |object|
  // (launches of one function in a row keep it once).
  bool keeps_last_locked(const void* object) const {
    return open_ && !open_->keep.empty() && open_->keep.back().get() == object;
  }
  // A zeroed bounds-check record (spirv_bounds_check.h) for the next launch in the open batch
  // (HAL_VULKAN_VALIDATION=gpu): the range to bind and its host view, which holds the launch's
  // result once the batch has completed. Each batch has a buffer of kMaxCommandsPerBatch records
  // at fixed places, reused from batch to batch.
  hal_status bounds_record(VkDescriptorBufferInfo* range, uint32_t** host);
  // Descriptor sets from the open batch's pool (submits and retries once when it is full).
  hal_status allocate_descriptor_sets(const VkDescriptorSetLayout* layouts, uint32_t count,
                                      VkDescriptorSet* out);
  // Makes later work wait for |other| reaching |value|. When |reached| is false, the work recorded
  // so far is submitted first, so that only later work waits; a value already reached joins the
  // next submission as it is, for the memory dependency the wait carries (the other stream's
  // writes become visible to this one's commands). One wait per other stream: the highest value.
  hal_status add_wait(std::shared_ptr<StreamCore> other, uint64_t value, bool reached);
  // The timeline value the open batch will signal (opening an empty batch if none is open).
  uint64_t open_value_locked();
  // True when nothing is recorded or waited for and all submitted work has completed: host
  // copies may then touch device memory directly.
  bool idle_locked();
  hal_status flush_locked();
  // Identifies the open batch (0: none is open); a new batch, with a new command buffer, has a new
  // value, so state bound in the previous command buffer is known to be gone.
  uint64_t open_serial_locked() const { return open_ ? open_serial_ : 0; }
  // For tests: submitted batches not yet seen complete, the last submitted timeline value, and
  // the cross-stream waits the next submission will carry.
  size_t in_flight_count_locked() const { return in_flight_.size(); }
  size_t wait_count_locked() const { return waits_.size(); }
  uint64_t last_submitted_locked() const { return last_submitted_; }

  // Where the next command of the open batch stands in the stream's order (opening a batch if
  // none is open): its batch's timeline value, then how many commands precede it there. Events
  // share batches with launches, so a launch's fault and an event's capture are ordered by
  // position, not by batch.
  uint64_t position_locked() {
    const uint64_t value = open_value_locked();
    return (value << kPositionBits) | (open_ ? open_->commands : 0);
  }

  // A kernel's bounds-check report (HAL_VULKAN_VALIDATION=gpu) for the launch at |position|,
  // noted when its batch completes: the first is kept for take_fault(), later ones only counted.
  void note_fault_locked(uint64_t position, std::string cause, std::string hint);

  // ---- Deferred releases (take the lock) ----
  // Keeps |object| alive until every command recorded or submitted on this stream so far has
  // completed: in the open batch when it holds commands, else in the newest batch in flight
  // (batches complete in order, so the newest completes last). Returns false, keeping nothing,
  // when the stream has no such work; batches that have completed are retired first, so a
  // stream whose work is done holds nothing until someone next looks at it. A batch dropped
  // unsubmitted hands what it kept to the newest batch in flight (drop_open_locked), so the
  // object never goes before earlier work. Used for frees (PendingRelease, memory.h): the
  // object's destructor then runs under this stream's lock, on the thread that retires.
  bool keep_until_done(std::shared_ptr<void> object);
  // Retires completed batches unless another thread holds the lock (never waits for it), so
  // that releases kept by batches that have completed happen without anyone synchronising.
  void retire_completed_if_unlocked();

  // ---- Synchronisation (take the lock) ----
  hal_status flush();
  // Submits the open batch when |value| is its timeline value (not yet submitted): what a wait
  // for an event recorded in it needs first. Anything already submitted: nothing to do.
  // HAL_ERROR_LAUNCH_FAILED when the batch of |value| was dropped unsubmitted after a failed
  // submission (its work never ran, and its value is never signalled).
  hal_status submit_through(uint64_t value);
  // Submits, then blocks until everything issued so far has completed.
  hal_status synchronize();
  // HAL_SUCCESS or HAL_ERROR_NOT_READY for everything issued so far (submits recorded work).
  hal_status query();
  // Blocks until the timeline reaches |value|, then retires completed batches.
  hal_status wait_value(uint64_t value);
  // Whether the timeline reached |value| (retires completed batches).
  hal_status query_value(uint64_t value, bool* done);
  // HAL_ERROR_LAUNCH_FAILED with the kept report when it came from a launch before |position|
  // (and forgets it), else HAL_SUCCESS; UINT64_MAX takes any. Stream, event and device
  // synchronisation and queries call it once their work has completed; waits hal makes for
  // itself (before freeing memory) do not.
  hal_status take_fault(uint64_t position);

 private:
  struct StagingChunk {
    HostBuffer buffer;
    uint64_t used = 0;
  };
  struct Batch {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    bool pool_used = false;
    uint64_t value = 0;
    uint32_t commands = 0;
    uint64_t staged_bytes = 0;
    std::vector<std::function<void()>> completions;
    std::vector<std::shared_ptr<void>> keep;
    std::vector<HostBuffer> large_staging;
    std::vector<std::unique_ptr<StagingChunk>> chunks;
    HostBuffer bounds_records;  // created on the first bounds-checked launch
    uint32_t bounds_records_used = 0;
    // Timeline trace: command i's timestamps are queries 2i and 2i+1 of |trace_queries|.
    VkQueryPool trace_queries = VK_NULL_HANDLE;
    std::vector<trace::Op> traced;
    uint64_t submitted_ns = 0;
  };
  struct Wait {
    std::shared_ptr<StreamCore> core;
    uint64_t value = 0;
  };
  // position_locked(): the timeline value above this many bits, the command below.
  static constexpr int kPositionBits = 20;
  struct Fault {
    uint64_t position = 0;
    std::string cause;
    std::string hint;
    uint32_t later = 0;  // faulty launches completed after it, before it was taken
  };

  hal_status open_batch_locked();
  // Retires what has completed; waits for the oldest batch while kMaxBatchesInFlight are out,
  // releasing the lock during the wait (only ever called while no batch is open).
  hal_status reclaim_locked();
  // Blocks until the timeline reaches |value| (in slices, so device loss is noticed); touches no
  // state guarded by the lock and is called without it.
  hal_status wait_semaphore(uint64_t value);
  // Submits a batch without commands or waits that signals the next timeline value, and waits
  // for it: once it has completed, the queue is done with every earlier submission that waited
  // on this stream's semaphore (see the destructor). Only for the destructor.
  hal_status submit_retire_marker();
  // Drops the open batch after a failure before submission: its work never runs. What it kept
  // alive moves to the newest batch in flight, which earlier work may still be using.
  void drop_open_locked();
  hal_status counter_value(uint64_t* value);
  void retire_locked(uint64_t completed);
  void release_batch_resources(Batch& batch);
  void destroy_batch(Batch& batch);
  // Timeline trace: the begin timestamp of a traced command, and the spans of a completed batch.
  hal_status trace_begin_locked(const trace::Op& op);
  void trace_emit(Batch& batch);

  VulkanDevice& device_;
  std::mutex mutex_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkSemaphore semaphore_ = VK_NULL_HANDLE;
  std::unique_ptr<Batch> open_;
  VkPipelineStageFlags pending_stages_ = 0;  // stages used since the last barrier in |open_|
  std::vector<Wait> waits_;
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> spare_;
  std::unique_ptr<StagingChunk> chunk_;  // the staging chunk being filled for |open_|
  std::vector<std::unique_ptr<StagingChunk>> free_chunks_;
  uint64_t open_serial_ = 0;
  uint64_t next_value_ = 1;
  uint64_t last_submitted_ = 0;
  uint64_t completed_ = 0;
  // Timeline values of batches dropped unsubmitted (drop_open_locked), never signalled, and why
  // the last was dropped. Submission failures are rare: the list stays short.
  std::vector<uint64_t> dropped_values_;
  std::string drop_reason_;
  uint32_t trace_row_ = 0;
  bool tracing_command_ = false;  // the open command got a begin timestamp
  std::optional<Fault> fault_;
};

}  // namespace hal::vulkan
