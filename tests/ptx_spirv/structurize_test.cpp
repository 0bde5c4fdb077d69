// Tests of the structurizer (src/ptx_spirv/structurize.h).
//
// Every graph is checked two ways: the tree's shape against the header's rules (each reachable
// block exactly once, kIf and kSwitch right after their block, break and continue depths that
// name an enclosing kScope or kLoop), and its behaviour: an interpreter for the graph and one
// for the tree, given the same decisions, must visit the same blocks in the same order.
// Decisions are a hash of (seed, block, how many times the block was visited before), so both
// interpreters see the same one at the same point of the run without sharing any state.
//
// Graphs come from hand-written cases, from random nests of structured statements lowered to
// branches (the shapes compilers emit), and from random forward edges plus back edges (shapes
// no nesting produces). Whether a random graph is reducible is decided independently by
// Hecht and Ullman's T1/T2 reduction, which the structurizer's answer must match.
#include "ptx_spirv/structurize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hal::ptx_spirv {
namespace {

using Exit = CfgBlock::Exit;
using Kind = Stmt::Kind;
using Graph = std::vector<CfgBlock>;

constexpr uint32_t kNone = UINT32_MAX;

CfgBlock ret() {
  return {Exit::kReturn, {}};
}
CfgBlock jump(uint32_t to) {
  return {Exit::kJump, {to}};
}
CfgBlock branch(uint32_t taken, uint32_t not_taken) {
  return {Exit::kBranch, {taken, not_taken}};
}
CfgBlock switch_to(std::vector<uint32_t> targets) {
  return {Exit::kSwitch, std::move(targets)};
}

// A small, fast, seedable generator (splitmix64): the same seed gives the same graphs on every
// platform, which std::uniform_int_distribution does not promise.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t bound) { return static_cast<uint32_t>(next() % bound); }
  bool chance(uint32_t percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

// The decision at the |visit|th visit (from 0) of |block|, among |options|.
uint32_t decide(uint64_t seed, uint32_t block, uint32_t visit, size_t options) {
  Rng rng(seed ^ (uint64_t{block} << 32) ^ (uint64_t{visit} * 0x2545F4914F6CDD1Dull));
  return static_cast<uint32_t>(rng.next() % options);
}

std::vector<bool> reachable(const Graph& graph) {
  std::vector<bool> seen(graph.size(), false);
  std::vector<uint32_t> stack{0};
  seen[0] = true;
  while (!stack.empty()) {
    const uint32_t block = stack.back();
    stack.pop_back();
    for (uint32_t successor : graph[block].successors) {
      if (!seen[successor]) {
        seen[successor] = true;
        stack.push_back(successor);
      }
    }
  }
  return seen;
}

// Runs the graph from the entry, recording each block entered, until a kReturn or |limit|
// blocks.
std::vector<uint32_t> run_graph(const Graph& graph, uint64_t seed, size_t limit) {
  std::vector<uint32_t> trace;
  std::vector<uint32_t> visits(graph.size(), 0);
  uint32_t block = 0;
  while (trace.size() < limit) {
    trace.push_back(block);
    const CfgBlock& cfg = graph[block];
    const uint32_t visit = visits[block]++;
    if (cfg.exit == Exit::kReturn) break;
    block = cfg.successors[decide(seed, block, visit, cfg.successors.size())];
  }
  return trace;
}

// Runs the tree by the header's rules, recording each kBlock, until a kReturn or |limit|
// blocks. Sets |problem| when the tree does something the rules do not allow (a break past
// the outermost level, running off the end of the function, looping without blocks).
std::vector<uint32_t> run_tree(const std::vector<Stmt>& tree, size_t block_count, uint64_t seed,
                               size_t limit, std::string* problem) {
  enum class Frame : uint8_t { kArm, kScope, kLoop };
  struct Position {
    const std::vector<Stmt>* list;
    size_t next;
    Frame frame;
  };
  std::vector<uint32_t> trace;
  std::vector<uint32_t> visits(block_count, 0);
  std::vector<Position> stack{{&tree, 0, Frame::kArm}};
  size_t steps = 0;
  while (trace.size() < limit) {
    if (++steps > 100 * limit + 1000) {
      *problem = "runs on without entering blocks";
      break;
    }
    Position& top = stack.back();
    if (top.next == top.list->size()) {
      if (stack.size() == 1) {
        *problem = "falls off the end of the function";
        break;
      }
      stack.pop_back();  // off the end of a kLoop body too: that leaves the loop
      continue;
    }
    const Stmt& stmt = (*top.list)[top.next++];
    switch (stmt.kind) {
      case Kind::kBlock:
        trace.push_back(stmt.block);
        ++visits[stmt.block];
        break;
      case Kind::kIf: {
        const uint32_t visit = visits[stmt.block] - 1;  // its kBlock came just before
        const bool taken = decide(seed, stmt.block, visit, 2) == 0;
        stack.push_back({taken ? &stmt.body : &stmt.else_body, 0, Frame::kArm});
        break;
      }
      case Kind::kSwitch: {
        const uint32_t visit = visits[stmt.block] - 1;
        const uint32_t value = decide(seed, stmt.block, visit, stmt.cases.size());
        stack.push_back({&stmt.cases[value], 0, Frame::kArm});
        break;
      }
      case Kind::kScope:
        stack.push_back({&stmt.body, 0, Frame::kScope});
        break;
      case Kind::kLoop:
        stack.push_back({&stmt.body, 0, Frame::kLoop});
        break;
      case Kind::kBreak:
      case Kind::kContinue: {
        // Unwinds to the target level: kBreak leaves it, kContinue restarts its body.
        uint32_t levels_left = stmt.depth;
        for (;;) {
          if (stack.size() == 1) {
            *problem = "a break or continue past the outermost level";
            return trace;
          }
          const Frame frame = stack.back().frame;
          if (frame != Frame::kArm && levels_left == 0) break;
          if (frame != Frame::kArm) --levels_left;
          stack.pop_back();
        }
        if (stmt.kind == Kind::kBreak) {
          stack.pop_back();
        } else if (stack.back().frame == Frame::kLoop) {
          stack.back().next = 0;
        } else {
          *problem = "a continue to a kScope";
          return trace;
        }
        break;
      }
      case Kind::kReturn:
        return trace;
    }
  }
  return trace;
}

// One line per statement list, for failure messages: "B3" a block, "if3{...}{...}",
// "sw3{...|...}", "scope{...}", "loop{...}", "br1", "cont0", "ret".
std::string show(const std::vector<Stmt>& list) {
  std::string text;
  for (const Stmt& stmt : list) {
    if (!text.empty()) text += ' ';
    switch (stmt.kind) {
      case Kind::kBlock:
        text += "B";
        text += std::to_string(stmt.block);
        break;
      case Kind::kIf:
        text += "if";
        text += std::to_string(stmt.block);
        text += "{";
        text += show(stmt.body);
        text += "}{";
        text += show(stmt.else_body);
        text += "}";
        break;
      case Kind::kSwitch:
        text += "sw";
        text += std::to_string(stmt.block);
        text += "{";
        for (size_t i = 0; i < stmt.cases.size(); ++i) {
          if (i > 0) text += "|";
          text += show(stmt.cases[i]);
        }
        text += "}";
        break;
      case Kind::kScope:
        text += "scope{" + show(stmt.body) + "}";
        break;
      case Kind::kLoop:
        text += "loop{" + show(stmt.body) + "}";
        break;
      case Kind::kBreak:
        text += "br";
        text += std::to_string(stmt.depth);
        break;
      case Kind::kContinue:
        text += "cont";
        text += std::to_string(stmt.depth);
        break;
      case Kind::kReturn:
        text += "ret";
        break;
    }
  }
  return text;
}

std::string show(const Graph& graph) {
  std::string text;
  for (size_t b = 0; b < graph.size(); ++b) {
    text += std::to_string(b) + ":";
    if (graph[b].exit == Exit::kReturn) text += "ret";
    if (graph[b].exit == Exit::kSwitch) text += "sw";
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on '" " + to_string' at -O3.
    for (uint32_t successor : graph[b].successors) {
      text += ' ';
      text += std::to_string(successor);
    }
    text += "; ";
  }
  return text;
}

// Checks the tree against the header's rules; returns what is wrong, or "".
class TreeChecker {
 public:
  explicit TreeChecker(const Graph& graph) : graph_(graph), seen_(graph.size(), false) {}

  std::string check(const std::vector<Stmt>& tree) {
    check_list(tree);
    if (!problem_.empty()) return problem_;
    const std::vector<bool> live = reachable(graph_);
    for (size_t b = 0; b < graph_.size(); ++b) {
      if (live[b] && !seen_[b]) return "reachable block " + std::to_string(b) + " is missing";
      if (!live[b] && seen_[b]) return "unreachable block " + std::to_string(b) + " appears";
    }
    return "";
  }

 private:
  void fail(const std::string& what) {
    if (problem_.empty()) problem_ = what;
  }

  void check_list(const std::vector<Stmt>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Stmt& stmt = list[i];
      const bool has_body =
          stmt.kind == Kind::kScope || stmt.kind == Kind::kLoop || stmt.kind == Kind::kIf;
      if (!has_body && !stmt.body.empty()) fail("a body on a statement that has none");
      if (stmt.kind != Kind::kIf && !stmt.else_body.empty()) fail("a stray else body");
      if (stmt.kind != Kind::kSwitch && !stmt.cases.empty()) fail("stray switch cases");
      switch (stmt.kind) {
        case Kind::kBlock:
          if (stmt.block >= graph_.size()) {
            fail("a block out of range");
          } else if (seen_[stmt.block]) {
            fail("block " + std::to_string(stmt.block) + " appears twice");
          } else {
            seen_[stmt.block] = true;
          }
          break;
        case Kind::kIf:
        case Kind::kSwitch: {
          if (i == 0 || list[i - 1].kind != Kind::kBlock || list[i - 1].block != stmt.block) {
            fail("a decision on block " + std::to_string(stmt.block) + " not right after it");
            break;
          }
          const CfgBlock& cfg = graph_[stmt.block];
          if (stmt.kind == Kind::kIf) {
            if (cfg.exit != Exit::kBranch) fail("a kIf on a block that does not branch");
            check_list(stmt.body);
            check_list(stmt.else_body);
          } else {
            if (cfg.exit != Exit::kSwitch) fail("a kSwitch on a block that does not switch");
            if (stmt.cases.size() != cfg.successors.size()) fail("the wrong number of cases");
            for (const std::vector<Stmt>& arm : stmt.cases) check_list(arm);
          }
          break;
        }
        case Kind::kScope:
        case Kind::kLoop:
          levels_.push_back(stmt.kind == Kind::kLoop);
          check_list(stmt.body);
          levels_.pop_back();
          break;
        case Kind::kBreak:
          if (stmt.depth >= levels_.size()) fail("a break past the outermost level");
          break;
        case Kind::kContinue:
          if (stmt.depth >= levels_.size()) {
            fail("a continue past the outermost level");
          } else if (!levels_[levels_.size() - 1 - stmt.depth]) {
            fail("a continue to a kScope");
          }
          break;
        case Kind::kReturn:
          break;
      }
    }
  }

  const Graph& graph_;
  std::vector<bool> seen_;
  std::vector<bool> levels_;  // enclosing kScope (false) and kLoop (true), innermost last
  std::string problem_;
};

// Structurizes |graph|, which must be reducible, and checks the tree's shape and its runs
// under |runs| decision seeds. Returns the tree.
std::vector<Stmt> check_structured(const Graph& graph, int runs = 8, size_t limit = 2000) {
  std::vector<Stmt> tree;
  StructureError error;
  EXPECT_TRUE(structurize(graph, &tree, &error)) << error.message << "\n" << show(graph);
  const std::string problem = TreeChecker(graph).check(tree);
  EXPECT_EQ(problem, "") << show(graph) << "\n" << show(tree);
  if (!problem.empty()) return tree;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 0x5EED0000u + static_cast<uint64_t>(run);
    std::string tree_problem;
    const std::vector<uint32_t> expected = run_graph(graph, seed, limit);
    const std::vector<uint32_t> actual = run_tree(tree, graph.size(), seed, limit, &tree_problem);
    EXPECT_EQ(tree_problem, "") << show(graph) << "\n" << show(tree);
    EXPECT_EQ(actual, expected) << "run " << run << "\n" << show(graph) << "\n" << show(tree);
    if (actual != expected || !tree_problem.empty()) break;
  }
  return tree;
}

// Whether |block| lies on a cycle (reaches itself by at least one edge).
bool on_cycle(const Graph& graph, uint32_t block) {
  std::vector<bool> seen(graph.size(), false);
  std::vector<uint32_t> stack(graph[block].successors);
  while (!stack.empty()) {
    const uint32_t at = stack.back();
    stack.pop_back();
    if (at == block) return true;
    if (seen[at]) continue;
    seen[at] = true;
    for (uint32_t successor : graph[at].successors) stack.push_back(successor);
  }
  return false;
}

// Hecht and Ullman's test, independent of the code under test: a graph is reducible exactly
// when removing self-loops (T1) and folding each block with a single predecessor into it (T2)
// reduces its reachable part to the entry alone.
constexpr size_t kMaxOracleBlocks = 256;
using Set = std::bitset<kMaxOracleBlocks>;

bool reducible_by_t1_t2(const Graph& graph) {
  const size_t n = graph.size();
  if (n > kMaxOracleBlocks) {
    ADD_FAILURE() << "a graph too large for the oracle";
    return false;
  }
  const std::vector<bool> live = reachable(graph);
  std::vector<Set> successors(n);
  std::vector<Set> predecessors(n);
  Set alive;
  for (size_t b = 0; b < n; ++b) {
    if (!live[b]) continue;
    alive.set(b);
    for (uint32_t successor : graph[b].successors) {
      successors[b].set(successor);
      predecessors[successor].set(b);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < n; ++b) {
      if (!alive[b]) continue;
      if (successors[b][b]) {  // T1
        successors[b].reset(b);
        predecessors[b].reset(b);
        changed = true;
      }
      if (b == 0 || predecessors[b].count() != 1) continue;
      size_t into = 0;  // T2: fold b into its only predecessor
      while (!predecessors[b][into]) ++into;
      successors[into].reset(b);
      for (size_t s = 0; s < n; ++s) {
        if (!successors[b][s]) continue;
        successors[into].set(s);
        predecessors[s].reset(b);
        predecessors[s].set(into);
      }
      alive.reset(b);
      changed = true;
    }
  }
  return alive.count() == 1;
}

// The structurizer's answer must match the oracle's; a refusal must name a block of a cycle.
// Returns whether the graph was reducible.
bool check_against_oracle(const Graph& graph, int runs) {
  const bool reducible = reducible_by_t1_t2(graph);
  if (reducible) {
    check_structured(graph, runs);
    return true;
  }
  std::vector<Stmt> tree;
  StructureError error;
  EXPECT_FALSE(structurize(graph, &tree, &error)) << show(graph);
  EXPECT_TRUE(tree.empty());
  EXPECT_LT(error.block, graph.size());
  if (error.block < graph.size()) {
    EXPECT_TRUE(reachable(graph)[error.block]) << show(graph);
    EXPECT_TRUE(on_cycle(graph, error.block)) << error.block << ": " << show(graph);
  }
  EXPECT_NE(error.message, "");
  return false;
}

// Renumbers every block but the entry at random, so that block order says nothing about the
// order of the code (the structurizer must not rely on it).
Graph shuffle_blocks(const Graph& graph, Rng& rng) {
  std::vector<uint32_t> new_index(graph.size());
  for (size_t b = 0; b < graph.size(); ++b) new_index[b] = static_cast<uint32_t>(b);
  for (size_t b = graph.size(); b > 2; --b) {
    std::swap(new_index[b - 1], new_index[1 + rng.below(static_cast<uint32_t>(b - 1))]);
  }
  Graph shuffled(graph.size());
  for (size_t b = 0; b < graph.size(); ++b) {
    CfgBlock block = graph[b];
    for (uint32_t& successor : block.successors) successor = new_index[successor];
    shuffled[new_index[b]] = std::move(block);
  }
  return shuffled;
}

// Random nests of structured statements (sequences, if/else, while and do-while loops, breaks
// and continues to any enclosing loop, returns, switches with shared cases, self-loops),
// lowered to branches the way a compiler lowers them. Code after a break or return starts a
// block nothing reaches, as it does in real compiler output.
class NestBuilder {
 public:
  NestBuilder(uint64_t seed, size_t max_blocks) : rng_(seed), max_blocks_(max_blocks) {}

  Graph build() {
    const uint32_t entry = new_block();
    const uint32_t end = lower_list(entry, 0);
    if (end != kNone) graph_[end] = ret();
    return graph_;
  }

 private:
  struct Loop {
    uint32_t header;  // continue goes here
    uint32_t exit;    // break goes here
  };

  uint32_t new_block() {
    graph_.push_back(ret());  // every block is given its real terminator later
    return static_cast<uint32_t>(graph_.size() - 1);
  }
  bool room() const { return graph_.size() < max_blocks_; }

  // Lowers a few statements starting in the open block |at| (one still to be given its
  // terminator). Returns the open block at the end, or kNone when control left.
  uint32_t lower_list(uint32_t at, int nesting) {
    const uint32_t count = 1 + rng_.below(4);
    for (uint32_t i = 0; i < count && room(); ++i) {
      if (at == kNone) {
        if (rng_.chance(70)) break;
        at = new_block();  // dead code after a break or return
      }
      at = lower_statement(at, nesting);
    }
    return at;
  }

  // Joins the open ends |ends| (kNone skipped) in a new block, which is returned.
  uint32_t join(const std::vector<uint32_t>& ends) {
    const uint32_t joined = new_block();
    for (uint32_t end : ends) {
      if (end != kNone) graph_[end] = jump(joined);
    }
    return joined;
  }

  uint32_t lower_statement(uint32_t at, int nesting) {
    const bool nest = nesting < 6;
    switch (rng_.below(nest ? 12 : 4)) {
      case 0: {  // a plain block
        const uint32_t next = new_block();
        graph_[at] = jump(next);
        return next;
      }
      case 1:  // break or continue to any enclosing loop, maybe conditional, or a return
      case 2: {
        uint32_t target = kNone;
        if (!loops_.empty() && rng_.chance(80)) {
          const Loop& loop = loops_[rng_.below(static_cast<uint32_t>(loops_.size()))];
          target = rng_.chance(50) ? loop.exit : loop.header;
        }
        if (target == kNone && rng_.chance(15)) {
          graph_[at] = ret();
          return kNone;
        }
        const uint32_t next = new_block();
        if (target == kNone) {  // a conditional return
          const uint32_t leave = new_block();
          graph_[leave] = ret();
          target = leave;
        }
        if (rng_.chance(15)) {
          graph_[at] = jump(target);
          graph_[next] = ret();  // |next| is dead code
          return next;
        }
        graph_[at] = rng_.chance(50) ? branch(target, next) : branch(next, target);
        return next;
      }
      case 3: {  // a self-loop, or a branch whose two sides are the same block
        const uint32_t next = new_block();
        if (rng_.chance(50)) {
          graph_[at] = branch(next, next);
          return next;
        }
        const uint32_t spin = new_block();
        graph_[at] = jump(spin);
        graph_[spin] = rng_.chance(50) ? branch(spin, next) : branch(next, spin);
        return next;
      }
      case 4:
      case 5: {  // if, with or without else
        const uint32_t then_block = new_block();
        const bool has_else = rng_.chance(60);
        const uint32_t else_block = has_else ? new_block() : kNone;
        const uint32_t then_end = lower_list(then_block, nesting + 1);
        const uint32_t else_end = has_else ? lower_list(else_block, nesting + 1) : kNone;
        const uint32_t joined = join({then_end, else_end});
        graph_[at] = branch(then_block, has_else ? else_block : joined);
        return joined;
      }
      case 6:
      case 7: {  // while loop: the header tests, the body jumps back
        const uint32_t header = new_block();
        const uint32_t body = new_block();
        const uint32_t exit = new_block();
        graph_[at] = jump(header);
        graph_[header] = rng_.chance(50) ? branch(body, exit) : branch(exit, body);
        loops_.push_back({header, exit});
        const uint32_t end = lower_list(body, nesting + 1);
        loops_.pop_back();
        if (end != kNone) graph_[end] = jump(header);
        return exit;
      }
      case 8:
      case 9: {  // do-while loop, or an endless one left only by break
        const uint32_t header = new_block();
        const uint32_t exit = new_block();
        graph_[at] = jump(header);
        loops_.push_back({header, exit});
        const uint32_t end = lower_list(header, nesting + 1);
        loops_.pop_back();
        if (end != kNone) {
          graph_[end] = rng_.chance(90) ? branch(header, exit) : jump(header);
        }
        return exit;
      }
      default: {  // switch: some cases share an arm, some go straight to the join
        const uint32_t case_count = 1 + rng_.below(5);
        const uint32_t arm_count = 1 + rng_.below(case_count);
        std::vector<uint32_t> arms;
        std::vector<uint32_t> ends;
        for (uint32_t i = 0; i < arm_count; ++i) {
          arms.push_back(new_block());
          ends.push_back(lower_list(arms.back(), nesting + 1));
        }
        const uint32_t joined = join(ends);
        std::vector<uint32_t> targets = arms;  // each arm gets a case; the rest are random
        while (targets.size() < case_count) {
          targets.push_back(rng_.chance(30) ? joined : arms[rng_.below(arm_count)]);
        }
        for (uint32_t i = case_count; i > 1; --i) std::swap(targets[i - 1], targets[rng_.below(i)]);
        graph_[at] = switch_to(std::move(targets));
        return joined;
      }
    }
  }

  Rng rng_;
  size_t max_blocks_;
  Graph graph_;
  std::vector<Loop> loops_;
};

// Makes a block's terminator fit its successor list.
CfgBlock with_successors(std::vector<uint32_t> successors) {
  switch (successors.size()) {
    case 0:
      return ret();
    case 1:
      return jump(successors[0]);
    case 2:
      return branch(successors[0], successors[1]);
    default:
      return switch_to(std::move(successors));
  }
}

// Forward edges only: each block goes to up to four later blocks (repeats allowed), mostly
// near ones so that paths are long. Some blocks return. A block that nothing earlier reaches
// is usually given a way in from an earlier one, so that most blocks are live.
Graph random_dag(Rng& rng, size_t n) {
  Graph graph(n);
  std::vector<bool> live(n, false);
  live[0] = true;
  for (size_t b = 0; b + 1 < n; ++b) {
    if (!live[b] && rng.chance(95)) {
      std::vector<uint32_t> ways_in;
      for (size_t a = 0; a < b; ++a) {
        if (live[a] && graph[a].exit != Exit::kReturn) ways_in.push_back(static_cast<uint32_t>(a));
      }
      if (!ways_in.empty()) {
        const uint32_t from = ways_in[rng.below(static_cast<uint32_t>(ways_in.size()))];
        std::vector<uint32_t> successors = graph[from].successors;
        successors.push_back(static_cast<uint32_t>(b));
        graph[from] = with_successors(std::move(successors));
        live[b] = true;
      }
    }
    if (b > 0 && rng.chance(8)) continue;  // a return
    std::vector<uint32_t> successors;
    const uint32_t count = 1 + rng.below(rng.chance(20) ? 4 : 2);
    for (uint32_t i = 0; i < count; ++i) {
      const size_t span = std::min<size_t>(n - 1 - b, rng.chance(80) ? 4 : n);
      successors.push_back(static_cast<uint32_t>(b + 1 + rng.below(static_cast<uint32_t>(span))));
      if (live[b]) live[successors.back()] = true;
    }
    graph[b] = with_successors(std::move(successors));
  }
  return graph;
}

// Dominator sets by the textbook fixpoint, independent of the code under test.
std::vector<Set> dominator_sets(const Graph& graph) {
  const size_t n = graph.size();
  const std::vector<bool> live = reachable(graph);
  std::vector<std::vector<uint32_t>> predecessors(n);
  for (size_t b = 0; b < n; ++b) {
    if (!live[b]) continue;
    for (uint32_t successor : graph[b].successors) {
      predecessors[successor].push_back(static_cast<uint32_t>(b));
    }
  }
  std::vector<Set> dominators(n);
  for (size_t b = 0; b < n; ++b) {
    if (!live[b]) continue;
    if (b == 0) {
      dominators[b].set(0);
    } else {
      dominators[b].set();
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 1; b < n; ++b) {
      if (!live[b]) continue;
      Set meet;
      meet.set();
      for (uint32_t predecessor : predecessors[b]) meet &= dominators[predecessor];
      meet.set(b);
      if (meet != dominators[b]) {
        dominators[b] = meet;
        changed = true;
      }
    }
  }
  return dominators;
}

// Adds |count| back edges, each from a reachable block to one of its dominators: the result
// stays reducible, with loops that nest and share headers in ways no nesting produces.
void add_back_edges(Graph& graph, Rng& rng, uint32_t count) {
  const std::vector<Set> dominators = dominator_sets(graph);
  const std::vector<bool> live = reachable(graph);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t from = rng.below(static_cast<uint32_t>(graph.size()));
    if (!live[from]) continue;
    std::vector<uint32_t> choices;
    for (size_t b = 0; b < graph.size(); ++b) {
      if (dominators[from][b]) choices.push_back(static_cast<uint32_t>(b));
    }
    std::vector<uint32_t> successors = graph[from].successors;
    successors.insert(successors.begin() + rng.below(static_cast<uint32_t>(successors.size() + 1)),
                      choices[rng.below(static_cast<uint32_t>(choices.size()))]);
    graph[from] = with_successors(std::move(successors));
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-written cases.

TEST(Structurize, StraightLine) {
  const std::vector<Stmt> tree = check_structured({jump(1), jump(2), ret()});
  EXPECT_EQ(show(tree), "B0 B1 B2 ret");
}

TEST(Structurize, SingleBlock) {
  EXPECT_EQ(show(check_structured({ret()})), "B0 ret");
}

TEST(Structurize, IfElseDiamond) {
  const std::vector<Stmt> tree = check_structured({branch(1, 2), jump(3), jump(3), ret()});
  EXPECT_EQ(show(tree), "scope{B0 if0{B1 br0}{B2 br0}} B3 ret");
}

TEST(Structurize, IfWithoutElse) {
  const std::vector<Stmt> tree = check_structured({branch(1, 2), jump(2), ret()});
  EXPECT_EQ(show(tree), "scope{B0 if0{B1 br0}{br0}} B2 ret");
}

TEST(Structurize, ArmsThatReturnNeedNoMerge) {
  const std::vector<Stmt> tree = check_structured({branch(1, 2), ret(), ret()});
  EXPECT_EQ(show(tree), "B0 if0{B1 ret}{B2 ret}");
}

TEST(Structurize, WhileLoop) {
  // 0 -> 1 (header) -> 2 (body) -> 1; 1 -> 3 (exit).
  const std::vector<Stmt> tree = check_structured({jump(1), branch(2, 3), jump(1), ret()});
  EXPECT_EQ(show(tree), "B0 loop{B1 if1{B2 cont0}{B3 ret}}");
}

TEST(Structurize, SelfLoop) {
  const std::vector<Stmt> tree = check_structured({jump(1), branch(1, 2), ret()});
  EXPECT_EQ(show(tree), "B0 loop{B1 if1{cont0}{B2 ret}}");
}

TEST(Structurize, EntryIsALoopHeader) {
  const std::vector<Stmt> tree = check_structured({branch(0, 1), ret()});
  EXPECT_EQ(show(tree), "loop{B0 if0{cont0}{B1 ret}}");
}

TEST(Structurize, BranchWithBothSidesEqualIsAJump) {
  const std::vector<Stmt> tree = check_structured({branch(1, 1), ret()});
  EXPECT_EQ(show(tree), "B0 B1 ret");
}

TEST(Structurize, SwitchWithSharedTargets) {
  // 0 switches: cases 0 and 2 to 1, case 1 to 2, case 3 to 3 (the join); 1 and 2 join at 3.
  const Graph graph = {switch_to({1, 2, 1, 3}), jump(3), jump(3), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "scope{scope{B0 sw0{br0|B2 br1|br0|br1}} B1 br0} B3 ret");
}

TEST(Structurize, SwitchWhoseCasesAllGoToOneBlockIsAJump) {
  EXPECT_EQ(show(check_structured({switch_to({1, 1, 1}), ret()})), "B0 B1 ret");
  EXPECT_EQ(show(check_structured({switch_to({1}), ret()})), "B0 B1 ret");
}

TEST(Structurize, SwitchWithOneCasePerTarget) {
  EXPECT_EQ(show(check_structured({switch_to({1, 2, 3}), ret(), ret(), ret()})),
            "B0 sw0{B1 ret|B2 ret|B3 ret}");
}

TEST(Structurize, NestedLoopsWithMultiLevelBreakAndContinue) {
  // 0 -> 1 (outer header) -> 2 (inner header) -> 3; 3 -> 2 (continue inner) or 4;
  // 4 -> 1 (continue outer from inside the inner loop) or 5; 5 -> 6 (break out of both) or 2.
  // 6 returns.
  const Graph graph = {jump(1), jump(2), jump(3), branch(2, 4), branch(1, 5), branch(6, 2), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "B0 loop{B1 loop{B2 B3 if3{cont0}{B4 if4{cont1}{B5 if5{B6 ret}{cont0}}}}}");
}

TEST(Structurize, BreakOutOfTwoLoopsToAJoin) {
  // Outer loop 1..4, inner loop 2..3; 3 breaks out of both to 5, which 1 also reaches.
  // 1: -> 2 or 5; 2: -> 3; 3: -> 2, 4 or 5 (switch); 4: -> 1.
  const Graph graph = {jump(1), branch(2, 5), jump(3), switch_to({2, 4, 5}), jump(1), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "B0 loop{B1 if1{loop{B2 B3 sw3{cont0|br0|br1}} B4 cont0}{br0}} B5 ret");
}

TEST(Structurize, LoopWithSeveralBackEdgesAndExits) {
  // Header 1; 2 and 3 both go back to 1; exits from 1, 2 and 3 to 4 (a join), and 3 returns
  // through 5.
  const Graph graph = {jump(1), branch(2, 4), switch_to({1, 3, 4}), switch_to({1, 4, 5}),
                       ret(),   ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "B0 loop{B1 if1{B2 sw2{cont0|B3 sw3{cont0|br0|B5 ret}|br0}}{br0}} B4 ret");
}

TEST(Structurize, EarlyReturnInsideALoop) {
  // 1 header; 2 returns early through 3 or goes on to 4, which loops back or leaves to 5.
  const Graph graph = {jump(1), jump(2), branch(3, 4), ret(), branch(1, 5), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "B0 loop{B1 B2 if2{B3 ret}{B4 if4{cont0}{B5 ret}}}");
}

TEST(Structurize, LoopHeaderThatIsAlsoAJoin) {
  // 0 reaches the loop header 3 two ways, through 1 or 2.
  const Graph graph = {branch(1, 2), jump(3), jump(3), branch(3, 4), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "scope{B0 if0{B1 br0}{B2 br0}} loop{B3 if3{cont0}{B4 ret}}");
}

// The deepest kBreak or kContinue in |list|, for the tests of where loop exits go.
uint32_t deepest_exit(const std::vector<Stmt>& list) {
  uint32_t deepest = 0;
  for (const Stmt& stmt : list) {
    if (stmt.kind == Kind::kBreak || stmt.kind == Kind::kContinue) {
      deepest = std::max(deepest, stmt.depth);
    }
    for (const std::vector<Stmt>* inner : {&stmt.body, &stmt.else_body}) {
      deepest = std::max(deepest, deepest_exit(*inner));
    }
    for (const std::vector<Stmt>& arm : stmt.cases) deepest = std::max(deepest, deepest_exit(arm));
  }
  return deepest;
}

TEST(Structurize, CodeAfterALoopGoesAfterItsKLoop) {
  // Three loops in a row: each one's exit, and all that follows, comes after its kLoop rather
  // than inside its body, so the nesting does not grow with the number of loops.
  const Graph loops = {jump(1), branch(2, 3), jump(1), branch(4, 5),
                       jump(3), branch(6, 7), jump(5), ret()};
  EXPECT_EQ(show(check_structured(loops)),
            "B0 loop{B1 if1{B2 cont0}{br0}} loop{B3 if3{B4 cont0}{br0}} loop{B5 if5{B6 cont0}{B7 "
            "ret}}");
  // if (a) { while (c) {2} 3 } else {4} 5: the code after the loop reaches the join with a
  // one-level break, not one that crosses the kLoop.
  const Graph nested = {branch(1, 4), branch(2, 3), jump(1), jump(5), jump(5), ret()};
  const std::vector<Stmt> tree = check_structured(nested);
  EXPECT_EQ(show(tree), "scope{B0 if0{loop{B1 if1{B2 cont0}{br0}} B3 br0}{B4 br0}} B5 ret");
  EXPECT_EQ(deepest_exit(tree), 0u);
}

TEST(Structurize, LoopExitsThatJoinEachOther) {
  // Loop {1, 2}; 2 leaves it for 3 or 4, and 3 goes on to 4 or returns through 5. 3 and 4 both
  // go after the kLoop, 4 (later) outermost, so that 3 can break to it.
  const Graph graph = {jump(1), jump(2), switch_to({1, 3, 4}), branch(4, 5), ret(), ret()};
  EXPECT_EQ(show(check_structured(graph)),
            "B0 scope{loop{B1 B2 sw2{cont0|br0|br1}} B3 if3{br0}{B5 ret}} B4 ret");
}

TEST(Structurize, InfiniteLoop) {
  check_structured({jump(1), jump(2), jump(1)});
  check_structured({jump(0)});
}

TEST(Structurize, UnreachableBlocksAreLeftOut) {
  // 2 and 3 are unreachable; 3 even branches into the reachable join 4, which must not count
  // it as a way in.
  const Graph graph = {branch(1, 4), jump(4), jump(3), branch(4, 1), ret()};
  const std::vector<Stmt> tree = check_structured(graph);
  EXPECT_EQ(show(tree), "scope{B0 if0{B1 br0}{br0}} B4 ret");
  // An unreachable block that is the only other way into a block does not make it a join.
  EXPECT_EQ(show(check_structured({jump(1), ret(), jump(1)})), "B0 B1 ret");
}

TEST(Structurize, JoinsOrderedByLateness) {
  // Two joins immediately dominated by 0: 0 -> 1, 2 or 3; 1 -> 3 or 4; 2 -> 4; 3 -> 4. The
  // later join, 4, must be outside the earlier one's kScope, since 3 goes on to it.
  const Graph graph = {switch_to({1, 2, 3}), branch(3, 4), jump(4), jump(4), ret()};
  EXPECT_EQ(show(check_structured(graph)),
            "scope{scope{B0 sw0{B1 if1{br0}{br1}|B2 br1|br0}} B3 br0} B4 ret");
  // Nested diamonds: the inner join 4 is under 1, the outer join 5 under 0.
  // 0 -> 1 or 5; 1 -> 2 or 3; 2, 3 -> 4; 4 -> 5.
  EXPECT_EQ(show(check_structured({branch(1, 5), branch(2, 3), jump(4), jump(4), jump(5), ret()})),
            "scope{B0 if0{scope{B1 if1{B2 br0}{B3 br0}} B4 br0}{br0}} B5 ret");
}

TEST(Structurize, DeepGraphsDoNotExhaustTheStack) {
  // A long chain, a long chain of diamonds, and deeply nested loops.
  const uint32_t n = 20000;
  Graph chain;
  for (uint32_t b = 0; b + 1 < n; ++b) chain.push_back(jump(b + 1));
  chain.push_back(ret());
  check_structured(chain, 1, n + 1);

  Graph diamonds;
  for (uint32_t b = 0; b + 3 < n; b += 3) {
    diamonds.push_back(branch(b + 1, b + 2));
    diamonds.push_back(jump(b + 3));
    diamonds.push_back(jump(b + 3));
  }
  diamonds.push_back(ret());
  check_structured(diamonds, 2, n);

  // A chain of blocks that each may leave early to one shared exit, as compilers lower early
  // returns: the exit's immediate dominator is the nearest common one of 2000 predecessors at
  // every depth of the dominator tree. (The tree nests 2000 kIfs deep, hence the modest size.)
  const uint32_t rungs = 2000;
  Graph ladder;
  for (uint32_t b = 0; b < rungs; ++b) ladder.push_back(branch(b + 1, rungs + 1));
  ladder.push_back(jump(rungs + 1));
  ladder.push_back(ret());
  check_structured(ladder, 2, 5000);

  // 1000 nested loops: block b is header of loop b, and block 2000 - b its latch.
  const uint32_t depth = 1000;
  Graph loops(2 * depth + 2);
  for (uint32_t b = 0; b < depth; ++b) loops[b] = jump(b + 1);
  loops[depth] = jump(depth + 1);
  for (uint32_t latch = depth + 1; latch <= 2 * depth; ++latch) {
    loops[latch] = branch(2 * depth + 1 - latch, latch + 1);
  }
  loops[2 * depth + 1] = ret();
  check_structured(loops, 2, 5000);
}

// ---------------------------------------------------------------------------------------------
// Irreducible graphs.

void expect_refused(const Graph& graph, std::vector<uint32_t> cycle) {
  std::vector<Stmt> tree;
  StructureError error;
  ASSERT_FALSE(structurize(graph, &tree, &error)) << show(graph) << "\n" << show(tree);
  EXPECT_TRUE(tree.empty());
  EXPECT_NE(std::find(cycle.begin(), cycle.end(), error.block), cycle.end()) << error.block;
  EXPECT_NE(error.message.find("irreducible"), std::string::npos) << error.message;
}

TEST(Structurize, RefusesTheTwoEntryCycle) {
  expect_refused({branch(1, 2), jump(2), jump(1)}, {1, 2});
  expect_refused({branch(2, 1), jump(2), jump(1)}, {1, 2});
}

TEST(Structurize, RefusesACycleEnteredInTheMiddle) {
  // A loop 1 -> 2 -> 3 -> 1 that 0 also enters at 3, behind a diamond and a reducible loop.
  expect_refused(
      {branch(4, 5), jump(2), jump(3), branch(1, 7), jump(6), jump(6), branch(1, 3), ret()},
      {1, 2, 3});
}

TEST(Structurize, RefusesAnIrreducibleCycleInsideALoop) {
  // Outer loop at 1; inside it, 2 enters the cycle 3 <-> 4 at either block.
  expect_refused({jump(1), jump(2), branch(3, 4), branch(4, 5), branch(3, 5), branch(1, 6), ret()},
                 {3, 4});
}

TEST(Structurize, RefusesMalformedBlocks) {
  std::vector<Stmt> tree;
  StructureError error;
  EXPECT_FALSE(structurize({}, &tree, &error));
  EXPECT_FALSE(structurize({jump(1), {Exit::kBranch, {0}}}, &tree, &error));
  EXPECT_EQ(error.block, 1u);
  EXPECT_FALSE(structurize({jump(5)}, &tree, &error));
  EXPECT_FALSE(structurize({{Exit::kSwitch, {}}}, &tree, &error));
}

// ---------------------------------------------------------------------------------------------
// Generated graphs.

TEST(Structurize, GeneratedStructuredNests) {
  size_t total_blocks = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Rng rng(seed * 7919 + 1);
    const size_t max_blocks = 2 + rng.below(60);
    Graph graph = NestBuilder(seed, max_blocks).build();
    if (rng.chance(50)) graph = shuffle_blocks(graph, rng);
    total_blocks += graph.size();
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_TRUE(reducible_by_t1_t2(graph)) << show(graph);
    check_structured(graph, 3);
    if (testing::Test::HasFailure()) return;
  }
  EXPECT_GT(total_blocks, 2000u * 20);  // the generator makes graphs of real size
}

TEST(Structurize, RandomForwardEdgesWithBackEdgesToDominators) {
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    Rng rng(seed ^ 0xB4C0FFEEull);
    Graph graph = random_dag(rng, 2 + rng.below(60));
    add_back_edges(graph, rng, rng.below(8));
    if (rng.chance(50)) graph = shuffle_blocks(graph, rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_TRUE(reducible_by_t1_t2(graph)) << show(graph);
    check_structured(graph, 3);
    if (testing::Test::HasFailure()) return;
  }
}

TEST(Structurize, RandomRetreatingEdgesMatchTheReducibilityOracle) {
  size_t refused = 0;
  size_t accepted = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    Rng rng(seed ^ 0x1DEAull);
    const uint32_t n = 3 + rng.below(40);
    Graph graph = random_dag(rng, n);
    // Edges from a block to any earlier one: some close loops with one entry, some do not.
    const uint32_t extra = 1 + rng.below(4);
    for (uint32_t i = 0; i < extra; ++i) {
      const uint32_t from = 1 + rng.below(n - 1);
      std::vector<uint32_t> successors = graph[from].successors;
      successors.push_back(rng.below(from + 1));
      graph[from] = with_successors(std::move(successors));
    }
    if (rng.chance(50)) graph = shuffle_blocks(graph, rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    (check_against_oracle(graph, 2) ? accepted : refused) += 1;
    if (testing::Test::HasFailure()) return;
  }
  // Both answers must be well represented for the comparison to mean anything.
  EXPECT_GT(refused, 200u);
  EXPECT_GT(accepted, 200u);
}

TEST(Structurize, StructuredNestsWithAnExtraEntryAreRefused) {
  // A jump from a block the loop does not contain into the middle of a loop's body makes the
  // loop irreducible; the oracle confirms each case.
  size_t refused = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(seed + 424242);
    Graph graph = NestBuilder(seed + 10000, 10 + rng.below(50)).build();
    if (graph.size() < 2) continue;
    const uint32_t from = rng.below(static_cast<uint32_t>(graph.size()));
    const uint32_t to = 1 + rng.below(static_cast<uint32_t>(graph.size() - 1));
    std::vector<uint32_t> successors = graph[from].successors;
    successors.push_back(to);
    graph[from] = with_successors(std::move(successors));
    SCOPED_TRACE("seed " + std::to_string(seed));
    if (!check_against_oracle(graph, 2)) ++refused;
    if (testing::Test::HasFailure()) return;
  }
  EXPECT_GT(refused, 20u);
}

}  // namespace
}  // namespace hal::ptx_spirv
