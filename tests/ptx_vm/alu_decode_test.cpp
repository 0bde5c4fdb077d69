// Every arithmetic, comparison, conversion, move and warp instruction that nvcc (the kernel
// pack) and Triton (the CPU driver's test kernels) emit decodes. Each module is loaded with the
// instructions of the other families (memory, async copies, matrix, atomics, barriers,
// branches) blanked out, so that only these families are judged.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

// Opcodes outside the arithmetic, comparison, conversion, move and warp families.
const std::set<std::string>& other_families() {
  static const std::set<std::string> names = {"ld",
                                              "ldu",
                                              "st",
                                              "cp",
                                              "mma",
                                              "wmma",
                                              "wgmma",
                                              "ldmatrix",
                                              "stmatrix",
                                              "movmatrix",
                                              "atom",
                                              "red",
                                              "bar",
                                              "barrier",
                                              "bra",
                                              "brx",
                                              "call",
                                              "cvta",
                                              "isspacep",
                                              "prefetch",
                                              "prefetchu",
                                              "membar",
                                              "fence",
                                              "mbarrier",
                                              "tex",
                                              "tld4",
                                              "suld",
                                              "sust",
                                              "sured",
                                              "suq",
                                              "txq",
                                              "createpolicy",
                                              "discard",
                                              "applypriority",
                                              "griddepcontrol",
                                              "nanosleep",
                                              "trap",
                                              "brkpt",
                                              "pmevent",
                                              "multimem",
                                              "tensormap"};
  return names;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// The module with the other families' instructions blanked (line numbers kept), and the number
// of instructions left in.
std::string keep_alu_only(const std::string& text, int* kept) {
  std::istringstream in(text);
  std::string line, out;
  *kept = 0;
  bool in_body = false;
  while (std::getline(in, line)) {
    std::string code = line.substr(0, line.find("//"));
    std::string t = trim(code);
    if (t == "{") in_body = true;
    if (in_body && !t.empty() && t[0] != '.' && t[0] != '{' && t[0] != '}' && t[0] != '$' &&
        t.back() != ':' && t[0] != ')' && t[0] != '(') {
      std::string word = t;
      if (word[0] == '@') word = trim(word.substr(word.find_first_of(" \t")));
      const std::string opcode = word.substr(0, word.find_first_of(". \t;"));
      if (other_families().count(opcode) != 0) {
        line.clear();
      } else if (opcode != "ret" && opcode != "exit") {
        ++*kept;
      }
    }
    out += line + "\n";
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PtxVmAluDecode, NvccAndTritonInstructionsDecode) {
  const std::string pack = HAL_TEST_PACK_PTX_DIR;
#ifdef HAL_TEST_TRITON_PTX_DIR
  const std::string triton = HAL_TEST_TRITON_PTX_DIR;
#else
  const std::string triton = pack + "/../../tests/ptx_cpu/triton";
#endif
  const std::vector<std::string> files = {
      pack + "/smoke.ptx",
      pack + "/matmul.ptx",
      pack + "/attention.ptx",
      triton + "/vector_add.ptx",
      triton + "/softmax_rows.ptx",
      triton + "/histogram_atomic.ptx",
      triton + "/matmul_f16.ptx",
      triton + "/matmul_f16_bt.ptx",
      triton + "/flash_attention_fwd.ptx",
      triton + "/flash_attention_fwd_causal.ptx",
  };
  for (const std::string& path : files) {
    int kept = 0;
    const std::string ptx = keep_alu_only(read_file(path), &kept);
    EXPECT_GT(kept, 5) << path;
    hal::ptx_vm::LoadError error;
    hal::ptx_vm::LoadOptions options;
    options.sm = 90;
    const auto program = hal::ptx_vm::Program::load(ptx.data(), ptx.size(), options, &error);
    EXPECT_NE(program, nullptr) << path << ": " << error.log;
  }
}

}  // namespace
}  // namespace ptx_vm_test
