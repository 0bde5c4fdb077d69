// The structurizer (structurize.h), after Ramsey's "Beyond Relooper: recursive translation of
// unstructured control flow to structured control flow".
//
// The steps, each linear or near-linear:
//  1. Number the reachable blocks in reverse postorder (RPO) of a depth-first search from the
//     entry. An edge u->v is forward when v comes later than u, retreating otherwise.
//  2. Dominators, in one pass over the blocks in RPO using only the forward edges, with
//     O(log n) common-ancestor queries (see nearest_common_dominator()). This gives the true
//     dominators whenever every retreating edge is a back edge (its target dominates its
//     source): a path through a back edge u->v already passed v before reaching u, so cutting
//     out that cycle leaves a path with fewer retreating edges that passes no new block. When
//     some retreating edge is not a back edge the graph is irreducible and we stop, so the
//     dominators are only used where they are exact.
//  3. Loop headers are the targets of back edges, and the loop nesting forest follows from
//     them. Merge nodes are the blocks with two or more forward in-edges: a block with one can
//     be translated right where that edge leaves, but a block with more is reached from
//     several places, so it goes after a construct that they all break out of.
//  4. Placement: a block goes with its immediate dominator D, unless some loop contains D but
//     not the block (the block is an exit of that loop; one that only returns and has one way
//     in is left alone). Then it goes right after the kLoop of the outermost such loop L.
//     Placed with D, as the paper does, it would sit inside L's body: the rest of the function
//     would nest a level deeper for every loop before it, and its branches to joins outside L
//     would cross the kLoop for nothing (a break across levels costs the emitter a flag).
//  5. Translation walks the placement. Block X becomes
//       kScope { ... kScope { kLoop { kScope { ... kScope { kBlock X; terminator } M1 ... } Mk
//       } E1 } E2 ... } Ej
//     where M1..Mk are the merge nodes placed with X and, when X heads a loop, E1..Ej its exits
//     placed after its kLoop; each list runs from the earliest in RPO, innermost, to the latest.
//     The kLoop is E1's construct (a kBreak to it goes on after it); each other block there
//     gets a kScope, and without a loop there is no kLoop. Each branch X->T of the terminator
//     becomes kContinue when it is a back edge, kBreak to the construct in front of T when T
//     is a merge node or a loop exit, and otherwise (X is T's only forward predecessor, hence
//     its immediate dominator, and T stays with it) T's own translation, in place. Every path
//     through the tree therefore ends in kBreak, kContinue or kReturn: nothing falls off the
//     end of a kScope or kLoop body, and every block lands in the tree exactly once.
//
// Why the kBreak always finds its construct. A merge node T placed with D = idom(T): D
// dominates every predecessor P of T, so P lies under D in the dominator tree, and either is D,
// or lies under a child of D translated in place (inside all of D's kScopes), or under a merge
// node M placed with D with RPO(M) <= RPO(P) < RPO(T), whose code is emitted inside T's kScope
// because the kScopes are ordered by RPO. None of these was moved out as a loop exit: that
// would put P outside a loop that contains T, and P->T would be a second way into the loop. A
// loop exit E of loop L: each predecessor P is either inside L (inside the kLoop) or outside,
// and then it lies under an earlier exit of L (with the same RPO argument), since a block
// outside L with an edge into an enclosing loop other than through its header would make that
// loop irreducible. A kContinue to loop header H comes from a block inside H's loop, all of
// which stays inside H's kLoop.
#include "ptx_spirv/structurize.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace hal::ptx_spirv {
namespace {

constexpr uint32_t kUnreached = UINT32_MAX;

Stmt make_stmt(Stmt::Kind kind, uint32_t block = 0, uint32_t depth = 0) {
  Stmt stmt;
  stmt.kind = kind;
  stmt.block = block;
  stmt.depth = depth;
  return stmt;
}

// Whether a block's terminator goes to one place whatever it decides: a kJump, or a kBranch or
// kSwitch whose successors are all the same block. Such a block is translated as a jump, with
// no kIf or kSwitch: a decision that changes nothing needs no construct.
bool goes_to_one_block(const CfgBlock& block) {
  if (block.exit == CfgBlock::Exit::kReturn) return false;
  for (uint32_t successor : block.successors) {
    if (successor != block.successors[0]) return false;
  }
  return true;
}

// What each terminator requires of |successors|; the header states it as a precondition, but a
// malformed graph from a caller's bug must not index out of range.
bool well_formed(const CfgBlock& block, size_t block_count) {
  for (uint32_t successor : block.successors) {
    if (successor >= block_count) return false;
  }
  switch (block.exit) {
    case CfgBlock::Exit::kReturn:
      return block.successors.empty();
    case CfgBlock::Exit::kJump:
      return block.successors.size() == 1;
    case CfgBlock::Exit::kBranch:
      return block.successors.size() == 2;
    case CfgBlock::Exit::kSwitch:
      return !block.successors.empty();
  }
  return false;
}

class Structurizer {
 public:
  explicit Structurizer(const std::vector<CfgBlock>& blocks) : blocks_(blocks) {}

  bool run(std::vector<Stmt>* out, StructureError* error) {
    if (!check_input(error)) return false;
    number_in_reverse_postorder();
    find_dominators();
    number_dominator_tree();
    if (!find_loop_headers(error)) return false;
    find_loops();
    place_blocks();
    translate(out);
    return true;
  }

 private:
  // A pending piece of translation; see translate() for why a work list and not recursion.
  struct Work {
    bool close_level = false;  // true: a kScope or kLoop ends here; false: translate |block|
    uint32_t block = 0;
    std::vector<Stmt>* list = nullptr;  // where |block|'s translation is appended
  };

  bool check_input(StructureError* error) const {
    if (blocks_.empty()) {
      error->block = 0;
      error->message = "the function has no entry block";
      return false;
    }
    for (size_t b = 0; b < blocks_.size(); ++b) {
      if (!well_formed(blocks_[b], blocks_.size())) {
        error->block = static_cast<uint32_t>(b);
        error->message = "block " + std::to_string(b) +
                         " has successors that do not fit its terminator (internal error)";
        return false;
      }
    }
    return true;
  }

  bool is_forward(uint32_t from, uint32_t to) const { return rpo_[from] < rpo_[to]; }

  // Whether |a| dominates |b| (both reachable): |b|'s preorder number in the dominator tree
  // falls inside |a|'s subtree.
  bool dominates(uint32_t a, uint32_t b) const {
    return dom_enter_[a] <= dom_enter_[b] && dom_enter_[b] < dom_leave_[a];
  }

  // Depth-first search from the entry with an explicit stack (graphs may be deep), filling
  // order_ with the reachable blocks in reverse postorder and rpo_ with each one's position.
  void number_in_reverse_postorder() {
    const size_t n = blocks_.size();
    rpo_.assign(n, kUnreached);
    std::vector<bool> visited(n, false);
    std::vector<uint32_t> postorder;
    postorder.reserve(n);
    struct Frame {
      uint32_t block;
      size_t next_successor;
    };
    std::vector<Frame> stack;
    stack.push_back({0, 0});
    visited[0] = true;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const std::vector<uint32_t>& successors = blocks_[frame.block].successors;
      if (frame.next_successor == successors.size()) {
        postorder.push_back(frame.block);
        stack.pop_back();
        continue;
      }
      const uint32_t successor = successors[frame.next_successor++];
      if (!visited[successor]) {
        visited[successor] = true;
        stack.push_back({successor, 0});  // |frame| is not used after this
      }
    }
    order_.assign(postorder.rbegin(), postorder.rend());
    for (size_t i = 0; i < order_.size(); ++i) rpo_[order_[i]] = static_cast<uint32_t>(i);
  }

  // Each block's immediate dominator is the nearest common ancestor, in the dominator tree
  // built so far, of its forward predecessors (Cooper, Harvey and Kennedy's intersection, over
  // the forward edges only; see step 2 at the top for why they suffice). In RPO every forward
  // predecessor of a block comes before it, so one pass settles each block before any later
  // block reads it.
  void find_dominators() {
    const size_t n = blocks_.size();
    idom_.assign(n, kUnreached);
    dom_depth_.assign(n, 0);
    jump_.assign(n, 0);
    idom_[0] = 0;
    for (uint32_t block : order_) {
      if (block != 0) attach_to_dominator_tree(block);
      for (uint32_t successor : blocks_[block].successors) {
        if (!is_forward(block, successor)) continue;
        uint32_t& idom = idom_[successor];
        idom = idom == kUnreached ? block : nearest_common_dominator(idom, block);
      }
    }
  }

  // Walking up the tree one step at a time costs O(n) per query, O(n^2) in all for a common
  // shape: a chain of blocks that each may leave early to one shared exit. Each block keeps,
  // besides its parent, a jump pointer to an ancestor further up, laid out in the skew-binary
  // pattern of Myers' "An applicative random-access stack": it depends only on the depth, is
  // set in O(1) from the parent's, and lets any ancestor or common ancestor be found in
  // O(log depth) steps.
  void attach_to_dominator_tree(uint32_t block) {
    const uint32_t parent = idom_[block];
    const uint32_t up = jump_[parent];
    dom_depth_[block] = dom_depth_[parent] + 1;
    const bool equal_spans =
        dom_depth_[parent] - dom_depth_[up] == dom_depth_[up] - dom_depth_[jump_[up]];
    jump_[block] = equal_spans ? jump_[up] : parent;
  }

  uint32_t nearest_common_dominator(uint32_t a, uint32_t b) const {
    if (dom_depth_[a] < dom_depth_[b]) std::swap(a, b);
    while (dom_depth_[a] > dom_depth_[b]) {  // lift |a| to |b|'s depth
      a = dom_depth_[jump_[a]] >= dom_depth_[b] ? jump_[a] : idom_[a];
    }
    // At equal depths the jump pointers reach equal depths too, so the two walks stay level;
    // jump while that keeps them apart, then step.
    while (a != b) {
      if (jump_[a] != jump_[b]) {
        a = jump_[a];
        b = jump_[b];
      } else {
        a = idom_[a];
        b = idom_[b];
      }
    }
    return a;
  }

  // Preorder intervals of the dominator tree for dominates(), and each block's children that
  // are merge nodes (filled in later). Children are listed in RPO because order_ is.
  void number_dominator_tree() {
    const size_t n = blocks_.size();
    std::vector<std::vector<uint32_t>> children(n);
    for (uint32_t block : order_) {
      if (block != 0) children[idom_[block]].push_back(block);
    }
    dom_enter_.assign(n, 0);
    dom_leave_.assign(n, 0);
    uint32_t counter = 0;
    struct Frame {
      uint32_t block;
      size_t next_child;
    };
    std::vector<Frame> stack;
    stack.push_back({0, 0});
    dom_enter_[0] = counter++;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_child == children[frame.block].size()) {
        dom_leave_[frame.block] = counter;
        stack.pop_back();
        continue;
      }
      const uint32_t child = children[frame.block][frame.next_child++];
      dom_enter_[child] = counter++;
      stack.push_back({child, 0});  // |frame| is not used after this
    }
  }

  // Every retreating edge must be a back edge; its target is then a loop header. One that is
  // not closes a cycle that can be entered without passing its target: irreducible.
  bool find_loop_headers(StructureError* error) {
    loop_header_.assign(blocks_.size(), false);
    for (uint32_t block : order_) {
      for (uint32_t successor : blocks_[block].successors) {
        if (is_forward(block, successor)) continue;
        if (!dominates(successor, block)) {
          // |successor| is an ancestor of |block| in the search, so both lie on the cycle.
          error->block = block;
          error->message = "irreducible control flow: block " + std::to_string(block) +
                           " branches back to block " + std::to_string(successor) +
                           ", but the loop through them can be entered without passing block " +
                           std::to_string(successor) + " (a loop with more than one entry)";
          return false;
        }
        loop_header_[successor] = true;
      }
    }
    return true;
  }

  // The loop nesting forest: for each block the header of the innermost loop that contains it
  // (a header's is itself), and for each header the header of the loop around it. Headers are
  // taken innermost first (latest in RPO first); each walks backwards from its back edges,
  // which in a reducible graph never leaves its loop. A finished loop is collapsed into its
  // header (union-find), so an enclosing loop's walk crosses it in one step and every block is
  // collapsed once: near-linear in all.
  void find_loops() {
    const size_t n = blocks_.size();
    // Predecessor lists: those of block b are predecessors[first[b]] .. predecessors[first[b+1]].
    std::vector<uint32_t> first(n + 1, 0);
    for (uint32_t block : order_) {
      for (uint32_t successor : blocks_[block].successors) ++first[successor + 1];
    }
    for (size_t b = 0; b < n; ++b) first[b + 1] += first[b];
    std::vector<uint32_t> predecessors(first[n]);
    std::vector<uint32_t> filled(first.begin(), first.end() - 1);
    for (uint32_t block : order_) {
      for (uint32_t successor : blocks_[block].successors) {
        predecessors[filled[successor]++] = block;
      }
    }

    innermost_loop_.assign(n, kUnreached);
    loop_parent_.assign(n, kUnreached);
    std::vector<uint32_t> collapsed_into(n);  // union-find: a block is a root when its own
    for (size_t b = 0; b < n; ++b) collapsed_into[b] = static_cast<uint32_t>(b);
    std::vector<uint32_t> walk;
    for (size_t i = order_.size(); i-- > 0;) {
      const uint32_t header = order_[i];
      if (!loop_header_[header]) continue;
      innermost_loop_[header] = header;
      for (uint32_t p = first[header]; p < first[header + 1]; ++p) {
        if (!is_forward(predecessors[p], header)) walk.push_back(predecessors[p]);
      }
      while (!walk.empty()) {
        const uint32_t block = find_root(&collapsed_into, walk.back());
        walk.pop_back();
        if (block == header) continue;  // the header itself, or a block already collapsed
        if (innermost_loop_[block] == kUnreached) {
          innermost_loop_[block] = header;
        } else {
          loop_parent_[block] = header;  // |block| heads a loop nested in this one
        }
        collapsed_into[block] = header;
        for (uint32_t p = first[block]; p < first[block + 1]; ++p) walk.push_back(predecessors[p]);
      }
    }
  }

  static uint32_t find_root(std::vector<uint32_t>* parent, uint32_t block) {
    std::vector<uint32_t>& up = *parent;
    while (up[block] != block) {
      up[block] = up[up[block]];  // path halving
      block = up[block];
    }
    return block;
  }

  // Step 4 at the top, and the merge nodes. Forward in-edges are counted as the translation
  // will emit them: a terminator that goes to one block is one edge, and each case of a
  // kSwitch is its own edge, because each case must reach its target from inside the kSwitch
  // and only one of them could hold it in place.
  void place_blocks() {
    const size_t n = blocks_.size();
    std::vector<uint32_t> forward_in_edges(n, 0);
    for (uint32_t block : order_) {
      const CfgBlock& cfg = blocks_[block];
      const size_t edges = goes_to_one_block(cfg) ? 1 : cfg.successors.size();
      for (size_t i = 0; i < edges; ++i) {
        if (is_forward(block, cfg.successors[i])) ++forward_in_edges[cfg.successors[i]];
      }
    }
    merge_children_.assign(n, {});
    loop_exits_.assign(n, {});
    reached_by_break_.assign(n, false);
    for (uint32_t block : order_) {  // so each list is in RPO
      if (block == 0) continue;
      const uint32_t dominator = idom_[block];
      // The loops around |block| (not its own) are the outermost of those around |dominator|.
      const uint32_t enclosing = loop_header_[block] ? loop_parent_[block] : innermost_loop_[block];
      uint32_t exited = innermost_loop_[dominator];
      // A block that only returns, with one way in, stays in place even out of a loop: nothing
      // comes after it to nest, and reaching it by a break would cost a level for nothing.
      const bool lone_return =
          blocks_[block].exit == CfgBlock::Exit::kReturn && forward_in_edges[block] < 2;
      if (exited != enclosing && !lone_return) {
        // The guard against running off the forest cannot fire in a reducible graph.
        while (loop_parent_[exited] != enclosing && loop_parent_[exited] != kUnreached) {
          exited = loop_parent_[exited];
        }
        loop_exits_[exited].push_back(block);
        reached_by_break_[block] = true;
      } else if (forward_in_edges[block] >= 2) {
        merge_children_[dominator].push_back(block);
        reached_by_break_[block] = true;
      }
    }
  }

  // Builds the tree in document order from a work list rather than by recursion, so that a
  // long chain of blocks (dominator-tree depth in the thousands) costs heap, not stack.
  //
  // The work list holds raw pointers into the tree under construction. They stay valid because
  // the tree only ever grows at its frontier: a pending item's list belongs to a statement on
  // the path from the root to the statement being built, and such a list is appended to only
  // after every item pushed later (everything nested deeper) is done, LIFO order being
  // document order. Nothing is appended to a list while a pointer into one of its elements is
  // still pending.
  void translate(std::vector<Stmt>* out) {
    break_level_.assign(blocks_.size(), 0);
    loop_level_.assign(blocks_.size(), 0);
    levels_ = 0;
    std::vector<Work> work;
    work.push_back({false, 0, out});
    while (!work.empty()) {
      const Work item = work.back();
      work.pop_back();
      if (item.close_level) {
        --levels_;
      } else {
        translate_block(item.block, item.list, &work);
      }
    }
  }

  // Appends block |x|'s translation (see step 5 at the top) to |list|; the parts that come
  // after nested code are pushed onto |work|, in reverse, so they run once that code is done.
  void translate_block(uint32_t x, std::vector<Stmt>* list, std::vector<Work>* work) {
    const std::vector<uint32_t>& exits = loop_exits_[x];  // empty unless |x| heads a loop
    for (size_t i = exits.size(); i-- > 1;) list = open_scope(exits[i], list, work);
    if (loop_header_[x]) {
      if (!exits.empty()) work->push_back({false, exits[0], list});
      work->push_back({true, 0, nullptr});
      list->push_back(make_stmt(Stmt::Kind::kLoop));
      loop_level_[x] = levels_;
      if (!exits.empty()) break_level_[exits[0]] = levels_;
      ++levels_;
      list = &list->back().body;
    }
    const std::vector<uint32_t>& merges = merge_children_[x];
    for (size_t i = merges.size(); i-- > 0;) list = open_scope(merges[i], list, work);
    list->push_back(make_stmt(Stmt::Kind::kBlock, x));
    const CfgBlock& cfg = blocks_[x];
    if (cfg.exit == CfgBlock::Exit::kReturn) {
      list->push_back(make_stmt(Stmt::Kind::kReturn));
    } else if (goes_to_one_block(cfg)) {
      branch(x, cfg.successors[0], list, work);
    } else if (cfg.exit == CfgBlock::Exit::kBranch) {
      list->push_back(make_stmt(Stmt::Kind::kIf, x));
      Stmt& decision = list->back();
      // Pushed in reverse, so the taken side is built first, as it comes first in the tree.
      branch(x, cfg.successors[1], &decision.else_body, work);
      branch(x, cfg.successors[0], &decision.body, work);
    } else {
      list->push_back(make_stmt(Stmt::Kind::kSwitch, x));
      Stmt& decision = list->back();
      decision.cases.resize(cfg.successors.size());  // before any pointer into it is taken
      for (size_t i = cfg.successors.size(); i-- > 0;) {
        branch(x, cfg.successors[i], &decision.cases[i], work);
      }
    }
  }

  // Appends to |list| the kScope that |block| goes after, queues |block|'s translation for
  // when it closes, and returns the kScope's body.
  std::vector<Stmt>* open_scope(uint32_t block, std::vector<Stmt>* list, std::vector<Work>* work) {
    work->push_back({false, block, list});
    work->push_back({true, 0, nullptr});
    list->push_back(make_stmt(Stmt::Kind::kScope));
    break_level_[block] = levels_++;
    return &list->back().body;
  }

  // The edge |from|->|to| as a statement in |list|. Depths are computed now: the levels open
  // at this point are the ones open when the statement runs, since everything nested in a
  // sibling closes its own levels before the next sibling is built.
  void branch(uint32_t from, uint32_t to, std::vector<Stmt>* list, std::vector<Work>* work) {
    if (!is_forward(from, to)) {
      list->push_back(make_stmt(Stmt::Kind::kContinue, 0, levels_ - 1 - loop_level_[to]));
    } else if (reached_by_break_[to]) {
      list->push_back(make_stmt(Stmt::Kind::kBreak, 0, levels_ - 1 - break_level_[to]));
    } else {
      work->push_back({false, to, list});  // |from| is |to|'s only forward predecessor
    }
  }

  const std::vector<CfgBlock>& blocks_;
  std::vector<uint32_t> order_;      // the reachable blocks in reverse postorder
  std::vector<uint32_t> rpo_;        // block -> position in order_, or kUnreached
  std::vector<uint32_t> idom_;       // block -> immediate dominator (the entry: itself)
  std::vector<uint32_t> dom_depth_;  // block -> depth in the dominator tree (the entry: 0)
  std::vector<uint32_t> jump_;       // block -> an ancestor, for nearest_common_dominator()
  std::vector<uint32_t> dom_enter_;  // block -> preorder number in the dominator tree
  std::vector<uint32_t> dom_leave_;  // block -> one past the last preorder number under it
  std::vector<bool> loop_header_;
  std::vector<uint32_t> innermost_loop_;  // block -> header of its innermost loop, or kUnreached
  std::vector<uint32_t> loop_parent_;     // header -> header of the loop around it, or kUnreached
  std::vector<std::vector<uint32_t>> merge_children_;  // block -> merge nodes placed with it
  std::vector<std::vector<uint32_t>> loop_exits_;      // header -> exits placed after its kLoop
  std::vector<bool> reached_by_break_;                 // merge nodes and loop exits
  // While the construct in front of a block (break_level_) or the kLoop around it
  // (loop_level_) is open: how many levels were open outside it. A branch's depth is the levels
  // open now, less one, less that.
  std::vector<uint32_t> break_level_;
  std::vector<uint32_t> loop_level_;
  uint32_t levels_ = 0;
};

}  // namespace

bool structurize(const std::vector<CfgBlock>& blocks, std::vector<Stmt>* out,
                 StructureError* error) {
  out->clear();
  Structurizer structurizer(blocks);
  if (structurizer.run(out, error)) return true;
  out->clear();
  return false;
}

}  // namespace hal::ptx_spirv
