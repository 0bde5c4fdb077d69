// The worker pool: launches are split into blocks that the pool's threads and the launching
// thread take in order from a shared counter.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "ptx_vm/code.h"
#include "ptx_vm/engine.h"
#include "ptx_vm/vm.h"

namespace hal::ptx_vm {
namespace {

// One launch being run.
struct Job {
  const Kernel* kernel = nullptr;
  const LaunchConfig* config = nullptr;
  uint64_t total = 0;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> lanes{0};
  std::atomic<uint64_t> instructions{0};
  int workers = 0;  // threads inside work(), guarded by the pool's mutex
  std::mutex fault_mutex;
  Fault fault;
};

// Each thread keeps its block runner (and so its scratch memory) for its lifetime.
BlockRunner& runner() {
  thread_local BlockRunner instance;
  return instance;
}

// Runs blocks of |job| until none is left or one faulted.
void work(Job& job, uint32_t worker, uint32_t workers) {
  BlockRunner& r = runner();
  uint64_t lanes = 0;
  uint64_t instructions = 0;
  const uint32_t gx = job.config->grid[0];
  const uint32_t gy = job.config->grid[1];
  while (!job.stop.load(std::memory_order_relaxed)) {
    const uint64_t index = job.next.fetch_add(1, std::memory_order_relaxed);
    if (index >= job.total) break;
    const uint32_t block[3] = {static_cast<uint32_t>(index % gx),
                               static_cast<uint32_t>(index / gx % gy),
                               static_cast<uint32_t>(index / (uint64_t{gx} * gy))};
    Fault fault;
    if (!r.run(*job.kernel, *job.config, block, worker, workers, &fault, &lanes, &instructions)) {
      std::lock_guard<std::mutex> lock(job.fault_mutex);
      if (job.fault.kind == FaultKind::kNone) job.fault = std::move(fault);
      job.stop.store(true);
      break;
    }
  }
  job.lanes.fetch_add(lanes);
  job.instructions.fetch_add(instructions);
}

}  // namespace

struct Executor::Pool {
  unsigned threads = 1;
  std::mutex mutex;
  std::condition_variable work_ready;
  std::condition_variable job_done;
  std::deque<Job*> jobs;
  bool shutdown = false;
  std::vector<std::thread> workers;

  void worker_main(uint32_t index) {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      work_ready.wait(lock, [&] { return shutdown || !jobs.empty(); });
      if (shutdown) return;
      Job* job = jobs.front();
      // Every block is taken: this job needs no more workers.
      if (job->next.load() >= job->total || job->stop.load()) {
        jobs.pop_front();
        continue;
      }
      ++job->workers;
      lock.unlock();
      work(*job, index, threads);
      lock.lock();
      --job->workers;
      job_done.notify_all();
    }
  }
};

Executor::Executor(unsigned threads) : pool_(std::make_unique<Pool>()) {
  pool_->threads = std::max(threads, 1u);
  for (unsigned i = 1; i < pool_->threads; ++i) {
    pool_->workers.emplace_back([this, i] { pool_->worker_main(i); });
  }
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    pool_->shutdown = true;
  }
  pool_->work_ready.notify_all();
  for (std::thread& t : pool_->workers) t.join();
}

unsigned Executor::threads() const {
  return pool_->threads;
}

Fault Executor::run(const Kernel& kernel, const LaunchConfig& config, RunStats* stats) {
  Job job;
  job.kernel = &kernel;
  job.config = &config;
  job.total = uint64_t{config.grid[0]} * config.grid[1] * config.grid[2];
  const bool share = job.total > 1 && !pool_->workers.empty();
  if (share) {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    pool_->jobs.push_back(&job);
  }
  if (share) pool_->work_ready.notify_all();
  work(job, 0, pool_->threads);
  if (share) {
    std::unique_lock<std::mutex> lock(pool_->mutex);
    // No worker may take the job once it leaves the queue; wait for those inside it.
    pool_->jobs.erase(std::remove(pool_->jobs.begin(), pool_->jobs.end(), &job), pool_->jobs.end());
    pool_->job_done.wait(lock, [&] { return job.workers == 0; });
  }
  if (stats != nullptr) {
    stats->lane_instructions += job.lanes.load();
    stats->warp_instructions += job.instructions.load();
  }
  return std::move(job.fault);
}

}  // namespace hal::ptx_vm
