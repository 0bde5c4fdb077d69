// hal-tune: tunes the kernel pack's families on one device and keeps the answer.
//
//   hal-tune [--device <selector>] [--family <name>]... [--shape MxNxK] [--shape BHxSQxSKVxD]
//            [--causal] [--budget <seconds>] [--reps <n>] [--seed <n>] [--top <n>] [--no-save]
//   hal-tune [--device <selector>] --show
//
// For each family (default: every one the device runs: matmul_f32, matmul_f16, attention_f32,
// attention_f16) it checks every candidate it tries against the CPU reference before timing it,
// searches within the budget (exhaustively when the space fits, else by successive halving;
// kernels/tune/tuner.h), prints a table of the fastest candidates against the family's default,
// and stores the winner in the device's tuning database (HAL_CACHE_DIR/tune), which the kernel
// pack's plan_matmul and plan_attention, the samples, hal-cts --perf and hal-bench then use. See
// docs/TUNING.md.
//
// Exit status: 0 when every family was tuned (or --show printed the database), 1 when a family
// could not be tuned, the device runs none, or the database could not be written, 2 on a usage
// error (checked before any device is opened), 77 when the device does not exist. The database is
// written only when this run tuned a family; the families tuned are kept when another fails.
#include "attention_problem.h"
#include "matmul_problem.h"
#include "plan.h"
#include "tuner.h"
#include "tuning_db.h"

#include <hal/hal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace tune = hal_kernels::tune;

constexpr int kNoDevice = 77;

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: hal-tune [--device <selector>] [--family <name>]... [--shape MxNxK]\n"
      "                [--shape BHxSQxSKVxD] [--causal] [--budget <seconds>] [--reps <n>]\n"
      "                [--seed <n>] [--top <n>] [--no-save]\n"
      "       hal-tune [--device <selector>] --show\n"
      "  --device   a hal device selector (vulkan:0, cuda:0, a name); default: HAL_DEVICE or "
      "device 0\n"
      "  --family   a family to tune (repeatable): matmul_f32, matmul_f16, attention_f32,\n"
      "             attention_f16; default: every one the device runs\n"
      "  --shape    the matmul problem, M x N x K (default 1024x1024x1024), or the attention\n"
      "             problem, batch_heads x seq_q x seq_kv x head_dim (default 4x256x256x64;\n"
      "             head_dim 64 or 128); results are stored for its bucket (each dimension\n"
      "             rounded up to a power of two)\n"
      "  --causal   tune attention with the causal mask (stored under the same bucket)\n"
      "  --budget   seconds per family (default 100); the search stops trying candidates then\n"
      "  --reps     timed runs of a fully measured candidate (default 5); medians are compared\n"
      "  --seed     the order of candidates the cost model cannot tell apart\n"
      "  --top      rows of the result table (default 8)\n"
      "  --no-save  tune and print, but leave the database alone\n"
      "  --show     print the device's tuning database and exit\n");
}

bool parse_u32(const char* text, uint32_t* out, uint32_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v > max || text[0] == '-') return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// "AxBxC..." as 3 or 4 dimensions, each from 1 to 2^20.
bool parse_shape(const std::string& text, std::vector<uint32_t>* dims) {
  dims->clear();
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    uint32_t value = 0;
    if (part.empty() || !parse_u32(part.c_str(), &value, 1u << 20) || value == 0) return false;
    dims->push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims->size() == 3 || dims->size() == 4;
}

bool is_attention(const std::string& family) {
  const std::vector<std::string> known = tune::AttentionProblem::families();
  return std::find(known.begin(), known.end(), family) != known.end();
}

bool is_matmul(const std::string& family) {
  const std::vector<std::string> known = tune::MatmulProblem::families();
  return std::find(known.begin(), known.end(), family) != known.end();
}

}  // namespace

int main(int argc, char** argv) {
  std::string selector = "default";
  std::vector<std::string> families;
  tune::MatmulShape shape{1024, 1024, 1024};
  tune::AttentionShape attention{4, 256, 256, 64, false};
  tune::SearchOptions options;
  options.budget_seconds = 100;
  uint32_t top = 8;
  bool save = true, show = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "hal-tune: %s needs a value\n", arg.c_str());
        usage(stderr);
        std::exit(2);
      }
      return argv[++i];
    };
    uint32_t value = 0;
    if (arg == "--device") {
      selector = next();
    } else if (arg == "--family") {
      const std::string family = next();
      if (!is_attention(family) && !is_matmul(family)) {
        std::string list;
        for (const auto& known :
             {tune::MatmulProblem::families(), tune::AttentionProblem::families()}) {
          for (const std::string& f : known) list += (list.empty() ? "" : ", ") + f;
        }
        std::fprintf(stderr, "hal-tune: --family '%s' is not a family the tuner knows (%s)\n",
                     family.c_str(), list.c_str());
        return 2;
      }
      families.push_back(family);
    } else if (arg == "--shape") {
      const char* text = next();
      std::vector<uint32_t> dims;
      if (!parse_shape(text, &dims)) {
        std::fprintf(stderr,
                     "hal-tune: --shape '%s' is neither M x N x K, such as 1024x1024x1024, nor "
                     "batch_heads x seq_q x seq_kv x head_dim, such as 4x256x256x64 (each from 1 "
                     "to 1048576)\n",
                     text);
        return 2;
      }
      if (dims.size() == 3) {
        shape = {dims[0], dims[1], dims[2]};
      } else {
        attention = {dims[0], dims[1], dims[2], dims[3], attention.causal};
      }
    } else if (arg == "--causal") {
      attention.causal = true;
    } else if (arg == "--budget") {
      const char* text = next();
      if (!parse_u32(text, &value, 86400) || value == 0) {
        std::fprintf(stderr, "hal-tune: --budget '%s' is not a number of seconds (1 to 86400)\n",
                     text);
        return 2;
      }
      options.budget_seconds = value;
    } else if (arg == "--reps") {
      const char* text = next();
      if (!parse_u32(text, &value, 1000) || value == 0) {
        std::fprintf(stderr, "hal-tune: --reps '%s' is not a count from 1 to 1000\n", text);
        return 2;
      }
      options.reps = value;
    } else if (arg == "--seed") {
      const char* text = next();
      if (!parse_u32(text, &options.seed, 0xffffffffu)) {
        std::fprintf(stderr, "hal-tune: --seed '%s' is not a number\n", text);
        return 2;
      }
    } else if (arg == "--top") {
      const char* text = next();
      if (!parse_u32(text, &top, 1000) || top == 0) {
        std::fprintf(stderr, "hal-tune: --top '%s' is not a count from 1 to 1000\n", text);
        return 2;
      }
    } else if (arg == "--no-save") {
      save = false;
    } else if (arg == "--show") {
      show = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "hal-tune: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    }
  }

  hal_device device = nullptr;
  if (hal_device_find(selector.c_str(), &device) != HAL_SUCCESS) {
    std::fprintf(stderr, "hal-tune: no device '%s': %s\n", selector.c_str(), hal_last_error());
    return kNoDevice;
  }
  hal_device_info info{};
  info.struct_size = sizeof(info);
  hal_device_get_info(device, &info);

  tune::DeviceKey key;
  std::string why;
  if (!tune::device_key(device, &key, &why)) {
    std::fprintf(stderr, "hal-tune: %s\n", why.c_str());
    return 1;
  }
  const std::string directory = tune::default_directory();
  if (directory.empty() && (save || show)) {
    std::fprintf(stderr,
                 "hal-tune: no cache directory: set HAL_CACHE_DIR (or HOME) to keep the tuning "
                 "database, or pass --no-save\n");
    return 1;
  }
  const std::string path = directory.empty() ? std::string() : tune::path_for(directory, key);
  std::string warning;
  tune::Database db =
      path.empty() ? tune::Database(key) : tune::Database::load(path, key, &warning);
  if (!warning.empty()) std::fprintf(stderr, "hal-tune: %s\n", warning.c_str());

  if (show) {
    std::printf("tuning database %s\n%s", path.c_str(), tune::format_table(db).c_str());
    return 0;
  }

  if (families.empty()) {  // every family the device runs; the others are named with the reason
    for (const std::string& family : tune::MatmulProblem::families()) {
      std::string skip;
      if (!tune::matmul_candidates(info, family, &skip).empty()) {
        families.push_back(family);
      } else {
        std::fprintf(stderr, "hal-tune: not tuning %s: %s\n", family.c_str(), skip.c_str());
      }
    }
    for (const std::string& family : tune::AttentionProblem::families()) {
      std::string skip;
      if (!tune::attention_candidates(info, family, attention.head_dim, &skip).empty()) {
        families.push_back(family);
      } else {
        std::fprintf(stderr, "hal-tune: not tuning %s: %s\n", family.c_str(), skip.c_str());
      }
    }
    if (families.empty()) {
      std::fprintf(stderr, "hal-tune: %s:%u runs none of the tuner's families\n", info.backend_name,
                   info.backend_index);
      return 1;
    }
  }
  std::printf("hal-tune: %s:%u (%s), budget %.0f s per family\n", info.backend_name,
              info.backend_index, info.name, options.budget_seconds);
  int status = 0;
  size_t tuned = 0;  // families this run put into the database
  for (const std::string& family : families) {
    std::unique_ptr<tune::DeviceProblem> problem;
    std::string shape_text;
    if (is_attention(family)) {
      problem = tune::AttentionProblem::create(device, family, attention, &why);
      shape_text = "batch_heads " + std::to_string(attention.batch_heads) + ", seq_q " +
                   std::to_string(attention.seq_q) + ", seq_kv " +
                   std::to_string(attention.seq_kv) + ", head_dim " +
                   std::to_string(attention.head_dim) + (attention.causal ? ", causal" : "");
    } else {
      problem = tune::MatmulProblem::create(device, family, shape, &why);
      shape_text =
          std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
    }
    if (!problem) {
      std::fprintf(stderr, "hal-tune: %s: %s\n", family.c_str(), why.c_str());
      status = 1;
      continue;
    }
    std::printf("\n%s at %s (bucket %s): %zu candidates, timed with %s\n", family.c_str(),
                shape_text.c_str(), problem->bucket().c_str(), problem->candidates().size(),
                problem->clock());
    std::fflush(stdout);
    const tune::SearchResult result = tune::search(*problem, options);
    std::printf("%s: %s search, %u checked (%u wrong) in %.1f s\n%s", family.c_str(),
                result.strategy.c_str(), result.checked, result.wrong, result.seconds,
                tune::format_outcomes(result, top).c_str());
    if (result.best == nullptr || result.baseline == nullptr) {
      std::fprintf(stderr, "hal-tune: %s: no candidate computed a correct result\n",
                   family.c_str());
      status = 1;
      continue;
    }
    const tune::Candidate& winner = *result.best->candidate;
    tune::Entry entry;
    entry.family = family;
    entry.bucket = problem->bucket();
    entry.kernel = winner.kernel;
    entry.specializations = winner.specializations;
    for (int d = 0; d < 3; ++d) entry.block[d] = winner.block[d];
    entry.time_ms = result.best->median_ms;
    entry.default_time_ms = result.baseline->median_ms;
    entry.label = winner.label;
    db.put(entry);
    ++tuned;
    std::printf("%s: chose %s: %.3f ms against the default's %.3f ms (%.2fx)\n", family.c_str(),
                winner.label.c_str(), entry.time_ms, entry.default_time_ms,
                entry.time_ms > 0 ? entry.default_time_ms / entry.time_ms : 0.0);
  }
  if (save && tuned > 0) {
    std::string error;
    if (!db.save(path, &error)) {
      std::fprintf(stderr, "hal-tune: %s\n", error.c_str());
      return 1;
    }
    std::printf("\nsaved to %s\n", path.c_str());
  }
  return status;
}
