// The CPU PTX driver's streams and events: ordering, concurrency with the host and between
// streams, the legacy stream's implicit synchronisation, destruction, timing.
#include "driver_fixture.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ptx_cpu_test {
namespace {

using std::chrono::milliseconds;

// Appends a label to a shared list when it runs.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> order;

  struct Entry {
    Recorder* recorder;
    std::string label;
  };
  std::vector<std::unique_ptr<Entry>> entries;

  void* entry(const std::string& label) {
    entries.push_back(std::make_unique<Entry>(Entry{this, label}));
    return entries.back().get();
  }
  static void CUDA_CB record(void* data) {
    auto* entry = static_cast<Entry*>(data);
    std::lock_guard<std::mutex> lock(entry->recorder->mutex);
    entry->recorder->order.push_back(entry->label);
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return order;
  }
};

void CUDA_CB sleep_50ms(void*) {
  std::this_thread::sleep_for(milliseconds(50));
}

TEST_F(DriverTest, StreamCreationAndProperties) {
  CUstream stream = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuStreamCreate(&stream, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuStreamCreate(nullptr, 0));
  ASSERT_OK(cu().cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, -1));
  unsigned flags = 0;
  ASSERT_OK(cu().cuStreamGetFlags(stream, &flags));
  EXPECT_EQ(flags, unsigned{CU_STREAM_NON_BLOCKING});
  int priority = 5;
  ASSERT_OK(cu().cuStreamGetPriority(stream, &priority));
  EXPECT_EQ(priority, 0);  // clamped into [0, 0]
  CUdevice device = -1;
  ASSERT_OK(cu().cuStreamGetDevice(stream, &device));
  EXPECT_EQ(device, 0);
  ASSERT_OK(cu().cuStreamGetFlags(nullptr, &flags));
  EXPECT_EQ(flags, 0u);
  EXPECT_OK(cu().cuStreamQuery(stream));
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamDestroy(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamSynchronize(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamDestroy(nullptr));
  int garbage = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamQuery(reinterpret_cast<CUstream>(&garbage)));
  uint32_t word = 0;
  CUdeviceptr device_memory = 0;
  ASSERT_OK(cu().cuMemAlloc(&device_memory, 4));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu().cuMemcpyHtoDAsync(device_memory, &word, 4, reinterpret_cast<CUstream>(&garbage)));
  EXPECT_OK(cu().cuMemFree(device_memory));
}

TEST_F(DriverTest, WorkRunsWhileTheHostContinues) {
  Gate gate;
  Flag ran;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, 0));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Flag::raise, &ran));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(stream));
  EXPECT_FALSE(ran.raised());
  gate.open();
  EXPECT_TRUE(ran.wait_for(milliseconds(10000)));  // no synchronisation needed to run
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  EXPECT_OK(cu().cuStreamQuery(stream));
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

// Stream A's work can only finish if stream B's runs meanwhile.
TEST_F(DriverTest, StreamsRunConcurrently) {
  CUstream a = nullptr;
  CUstream b = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  struct Meeting {
    Flag from_b;
    bool a_saw_b = false;
  } meeting;
  ASSERT_OK(cu().cuLaunchHostFunc(
      a,
      [](void* data) {
        auto* m = static_cast<Meeting*>(data);
        m->a_saw_b = m->from_b.wait_for(milliseconds(10000));
      },
      &meeting));
  ASSERT_OK(cu().cuLaunchHostFunc(b, &Flag::raise, &meeting.from_b));
  ASSERT_OK(cu().cuCtxSynchronize());
  EXPECT_TRUE(meeting.a_saw_b);
  EXPECT_OK(cu().cuStreamDestroy(a));
  EXPECT_OK(cu().cuStreamDestroy(b));
}

TEST_F(DriverTest, OneStreamRunsInOrder) {
  Recorder recorder;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) {
    expected.push_back(std::to_string(i));
    ASSERT_OK(cu().cuLaunchHostFunc(stream, &Recorder::record, recorder.entry(expected.back())));
  }
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  EXPECT_EQ(recorder.snapshot(), expected);
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

// The legacy stream waits for blocking streams and they for it; non-blocking streams for
// neither.
TEST_F(DriverTest, LegacyStreamSynchronisesWithBlockingStreamsOnly) {
  Recorder recorder;
  Gate gate;
  CUstream blocking = nullptr;
  CUstream non_blocking = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  ASSERT_OK(cu().cuStreamCreate(&non_blocking, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuLaunchHostFunc(blocking, &Gate::wait, &gate));
  ASSERT_OK(cu().cuLaunchHostFunc(blocking, &Recorder::record, recorder.entry("blocking")));
  ASSERT_OK(cu().cuLaunchHostFunc(nullptr, &Recorder::record, recorder.entry("legacy")));
  ASSERT_OK(
      cu().cuLaunchHostFunc(CU_STREAM_LEGACY, &Recorder::record, recorder.entry("legacy again")));
  // Issued after the legacy work: waits for it, so for the gate too.
  ASSERT_OK(cu().cuLaunchHostFunc(blocking, &Recorder::record, recorder.entry("blocking after")));
  Flag free_ran;
  ASSERT_OK(cu().cuLaunchHostFunc(non_blocking, &Flag::raise, &free_ran));
  EXPECT_TRUE(free_ran.wait_for(milliseconds(10000)));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(recorder.snapshot().empty());
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(nullptr));
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(blocking));
  EXPECT_EQ(recorder.snapshot(),
            (std::vector<std::string>{"blocking", "legacy", "legacy again", "blocking after"}));
  EXPECT_OK(cu().cuStreamSynchronize(nullptr));
  EXPECT_OK(cu().cuStreamDestroy(blocking));
  EXPECT_OK(cu().cuStreamDestroy(non_blocking));
}

TEST_F(DriverTest, PerThreadDefaultStream) {
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 4));
  uint32_t value = 5;
  ASSERT_OK(cu().cuMemcpyHtoDAsync(device, &value, 4, CU_STREAM_PER_THREAD));
  ASSERT_OK(cu().cuStreamSynchronize(CU_STREAM_PER_THREAD));
  uint32_t out = 0;
  ASSERT_OK(cu().cuMemcpyDtoH(&out, device, 4));
  EXPECT_EQ(out, 5u);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamDestroy(CU_STREAM_PER_THREAD));
  EXPECT_OK(cu().cuMemFree(device));
}

// Destroying a stream returns at once; its work still runs, and cuCtxSynchronize waits for it.
TEST_F(DriverTest, DestroyedStreamFinishesItsWork) {
  Gate gate;
  Flag ran;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Flag::raise, &ran));
  ASSERT_OK(cu().cuStreamDestroy(stream));
  EXPECT_FALSE(ran.raised());
  gate.open();
  ASSERT_OK(cu().cuCtxSynchronize());
  EXPECT_TRUE(ran.raised());
}

TEST_F(DriverTest, StreamCallbackGetsTheStatus) {
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  struct Seen {
    CUstream stream = nullptr;
    CUresult status = CUDA_ERROR_UNKNOWN;
  } seen;
  ASSERT_OK(cu().cuStreamAddCallback(
      stream,
      [](CUstream s, CUresult status, void* data) {
        static_cast<Seen*>(data)->stream = s;
        static_cast<Seen*>(data)->status = status;
      },
      &seen, 0));
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  EXPECT_EQ(seen.stream, stream);
  EXPECT_EQ(seen.status, CUDA_SUCCESS);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuStreamAddCallback(
                                          stream, [](CUstream, CUresult, void*) {}, nullptr, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLaunchHostFunc(stream, nullptr, nullptr));
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

// ===========================================================================================
// Events
// ===========================================================================================

TEST_F(DriverTest, EventTiming) {
  CUevent start = nullptr;
  CUevent end = nullptr;
  ASSERT_OK(cu().cuEventCreate(&start, CU_EVENT_DEFAULT));
  ASSERT_OK(cu().cuEventCreate(&end, CU_EVENT_BLOCKING_SYNC));
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuEventRecord(start, stream));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &sleep_50ms, nullptr));
  ASSERT_OK(cu().cuEventRecord(end, stream));
  ASSERT_OK(cu().cuEventSynchronize(end));
  EXPECT_OK(cu().cuEventQuery(end));
  float ms = -1;
  ASSERT_OK(cu().cuEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 45.0f);
  EXPECT_LT(ms, 10000.0f);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuEventElapsedTime(nullptr, start, end));
  EXPECT_OK(cu().cuEventDestroy(start));
  EXPECT_OK(cu().cuEventDestroy(end));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventDestroy(end));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventQuery(end));
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

// As in CUDA: complete, and not timeable.
TEST_F(DriverTest, NeverRecordedEvent) {
  CUevent never = nullptr;
  CUevent recorded = nullptr;
  ASSERT_OK(cu().cuEventCreate(&never, 0));
  ASSERT_OK(cu().cuEventCreate(&recorded, 0));
  ASSERT_OK(cu().cuEventRecord(recorded, nullptr));
  ASSERT_OK(cu().cuEventSynchronize(recorded));
  EXPECT_OK(cu().cuEventQuery(never));
  EXPECT_OK(cu().cuEventSynchronize(never));
  float ms = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventElapsedTime(&ms, never, recorded));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventElapsedTime(&ms, recorded, never));
  EXPECT_OK(cu().cuStreamWaitEvent(nullptr, never, 0));  // nothing to wait for
  EXPECT_OK(cu().cuEventDestroy(never));
  EXPECT_OK(cu().cuEventDestroy(recorded));
}

TEST_F(DriverTest, EventFlags) {
  CUevent event = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuEventCreate(&event, 0x40));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuEventCreate(&event, CU_EVENT_INTERPROCESS));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu().cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuEventCreate(nullptr, 0));
  CUevent untimed = nullptr;
  CUevent timed = nullptr;
  ASSERT_OK(cu().cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  ASSERT_OK(cu().cuEventCreate(&timed, 0));
  ASSERT_OK(cu().cuEventRecord(untimed, nullptr));
  ASSERT_OK(cu().cuEventRecord(timed, nullptr));
  ASSERT_OK(cu().cuCtxSynchronize());
  float ms = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventElapsedTime(&ms, untimed, timed));
  EXPECT_OK(cu().cuEventQuery(untimed));
  EXPECT_OK(cu().cuEventDestroy(untimed));
  EXPECT_OK(cu().cuEventDestroy(timed));
}

TEST_F(DriverTest, EventNotReadyWhilePending) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent start = nullptr;
  CUevent event = nullptr;
  ASSERT_OK(cu().cuEventCreate(&start, 0));
  ASSERT_OK(cu().cuEventCreate(&event, 0));
  ASSERT_OK(cu().cuEventRecord(start, stream));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  ASSERT_OK(cu().cuEventRecord(event, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuEventQuery(event));
  float ms = 0;
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuEventElapsedTime(&ms, start, event));
  gate.open();
  ASSERT_OK(cu().cuEventSynchronize(event));
  EXPECT_OK(cu().cuEventQuery(event));
  EXPECT_OK(cu().cuEventElapsedTime(&ms, start, event));
  EXPECT_OK(cu().cuEventDestroy(start));
  EXPECT_OK(cu().cuEventDestroy(event));
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

// cuStreamWaitEvent waits for the record that was the event's latest at the call, even when the
// event is re-recorded or destroyed afterwards.
TEST_F(DriverTest, StreamWaitsForTheRecordCurrentAtTheCall) {
  Gate gate;
  Flag waited;
  CUstream producer = nullptr;
  CUstream consumer = nullptr;
  CUstream idle = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuStreamCreate(&idle, CU_STREAM_NON_BLOCKING));
  CUevent event = nullptr;
  ASSERT_OK(cu().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  ASSERT_OK(cu().cuLaunchHostFunc(producer, &Gate::wait, &gate));
  ASSERT_OK(cu().cuEventRecord(event, producer));
  ASSERT_OK(cu().cuStreamWaitEvent(consumer, event, CU_EVENT_WAIT_DEFAULT));
  ASSERT_OK(cu().cuLaunchHostFunc(consumer, &Flag::raise, &waited));
  // A later record that completes at once does not release the wait.
  ASSERT_OK(cu().cuEventRecord(event, idle));
  ASSERT_OK(cu().cuStreamSynchronize(idle));
  ASSERT_OK(cu().cuEventDestroy(event));
  EXPECT_FALSE(waited.wait_for(milliseconds(100)));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(consumer));
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(consumer));
  EXPECT_TRUE(waited.raised());
  CUevent other = nullptr;
  ASSERT_OK(cu().cuEventCreate(&other, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuStreamWaitEvent(consumer, other, 7));
  int garbage = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu().cuStreamWaitEvent(consumer, reinterpret_cast<CUevent>(&garbage), 0));
  EXPECT_OK(cu().cuEventDestroy(other));
  for (CUstream stream : {producer, consumer, idle}) EXPECT_OK(cu().cuStreamDestroy(stream));
}

}  // namespace
}  // namespace ptx_cpu_test
