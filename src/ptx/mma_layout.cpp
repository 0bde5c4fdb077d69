#include "ptx/mma_layout.h"

#include <cstddef>

namespace hal::ptx {

namespace {

struct RowCol {
  uint32_t row, col;
};

// Fills |f| with |count| elements per lane placed by at(groupID, threadID_in_group, i).
template <typename F>
void place(MatrixFragment& f, uint32_t count, uint32_t cols, F at) {
  f.count = static_cast<uint8_t>(count);
  for (uint32_t lane = 0; lane < kMatrixLanes; ++lane) {
    for (uint32_t i = 0; i < count; ++i) {
      const RowCol rc = at(lane >> 2, lane % 4, i);
      f.index[lane][i] = static_cast<uint16_t>(rc.row * cols + rc.col);
    }
  }
}

// The formulas are those of PTX ISA's "Matrix Fragments for mma.mXnYkZ" sections, with
// g = groupID and t = threadID_in_group.
MmaShape make_shape(MmaLayout layout) {
  MmaShape s;
  // The 16x8 accumulator of every m16n8 shape: c0, c1 in row g, c2, c3 in row g + 8.
  const auto c16x8 = [](uint32_t g, uint32_t t, uint32_t i) {
    return RowCol{g + (i >= 2 ? 8u : 0u), t * 2 + (i & 1)};
  };
  // The 8x8 accumulator of the m8n8 shapes.
  const auto c8x8 = [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{g, t * 2 + i}; };
  switch (layout) {
    case MmaLayout::kM16N8K16Half:
      s.m = 16, s.n = 8, s.k = 16;
      place(s.a, 8, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        const bool low_row = i < 2 || (i >= 4 && i < 6);
        return RowCol{low_row ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8u : 0u)};
      });
      place(s.b, 4, s.n, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{t * 2 + (i & 1) + (i >= 2 ? 8u : 0u), g};
      });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K8Half:
      s.m = 16, s.n = 8, s.k = 8;
      place(s.a, 4, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{i < 2 ? g : g + 8, t * 2 + (i & 1)};
      });
      place(s.b, 2, s.n, [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{t * 2 + i, g}; });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K8Tf32:
      s.m = 16, s.n = 8, s.k = 8;
      place(s.a, 4, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{(i & 1) == 0 ? g : g + 8, i < 2 ? t : t + 4};
      });
      place(s.b, 2, s.n, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{i == 0 ? t : t + 4, g};
      });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K4Tf32:
      s.m = 16, s.n = 8, s.k = 4;
      place(s.a, 2, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{i == 0 ? g : g + 8, t};
      });
      place(s.b, 1, s.n, [](uint32_t g, uint32_t t, uint32_t) { return RowCol{t, g}; });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K16F64:
      s.m = 16, s.n = 8, s.k = 16;
      place(s.a, 8, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        return (i & 1) == 0 ? RowCol{g, i * 2 + t} : RowCol{g + 8, i * 2 - 2 + t};
      });
      place(s.b, 4, s.n, [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{t + i * 4, g}; });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K16Int8:
      s.m = 16, s.n = 8, s.k = 16;
      place(s.a, 8, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{i < 4 ? g : g + 8, t * 4 + (i & 3)};
      });
      place(s.b, 4, s.n, [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{t * 4 + i, g}; });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM16N8K32Int8:
      s.m = 16, s.n = 8, s.k = 32;
      place(s.a, 16, s.k, [](uint32_t g, uint32_t t, uint32_t i) {
        const bool low_row = i < 4 || (i >= 8 && i < 12);
        return RowCol{low_row ? g : g + 8, t * 4 + (i & 3) + (i >= 8 ? 16u : 0u)};
      });
      place(s.b, 8, s.n, [](uint32_t g, uint32_t t, uint32_t i) {
        return RowCol{t * 4 + (i & 3) + (i >= 4 ? 16u : 0u), g};
      });
      place(s.c, 4, s.n, c16x8);
      break;
    case MmaLayout::kM8N8K16Int8:
      s.m = 8, s.n = 8, s.k = 16;
      place(s.a, 4, s.k, [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{g, t * 4 + i}; });
      place(s.b, 4, s.n, [](uint32_t g, uint32_t t, uint32_t i) { return RowCol{t * 4 + i, g}; });
      place(s.c, 2, s.n, c8x8);
      break;
    case MmaLayout::kM8N8K4F64:
      s.m = 8, s.n = 8, s.k = 4;
      place(s.a, 1, s.k, [](uint32_t g, uint32_t t, uint32_t) { return RowCol{g, t}; });
      place(s.b, 1, s.n, [](uint32_t g, uint32_t t, uint32_t) { return RowCol{t, g}; });
      place(s.c, 2, s.n, c8x8);
      break;
    case MmaLayout::kCount:
      break;
  }
  return s;
}

}  // namespace

const MmaShape& mma_shape(MmaLayout layout) {
  struct Table {
    MmaShape shapes[static_cast<size_t>(MmaLayout::kCount)];
    Table() {
      for (size_t i = 0; i < static_cast<size_t>(MmaLayout::kCount); ++i) {
        shapes[i] = make_shape(static_cast<MmaLayout>(i));
      }
    }
  };
  static const Table table;  // built once, immutable afterwards
  return table.shapes[static_cast<size_t>(layout)];
}

MmaLayout mma_layout(uint32_t m, uint32_t n, uint32_t k, ir::Type d, ir::Type a, ir::Type b,
                     ir::Type c) {
  using T = ir::Type;
  const auto shape_is = [&](uint32_t mm, uint32_t nn, uint32_t kk) {
    return m == mm && n == nn && k == kk;
  };
  const auto is_int8 = [](T t) { return t == T::kS8 || t == T::kU8; };
  const auto is_acc16 = [](T t) { return t == T::kF16 || t == T::kF32; };
  if (a == T::kF16 && b == T::kF16 && is_acc16(d) && is_acc16(c)) {
    if (shape_is(16, 8, 16)) return MmaLayout::kM16N8K16Half;
    if (shape_is(16, 8, 8) && d == c) return MmaLayout::kM16N8K8Half;
  } else if (a == T::kBF16 && b == T::kBF16 && d == T::kF32 && c == T::kF32) {
    if (shape_is(16, 8, 16)) return MmaLayout::kM16N8K16Half;
    if (shape_is(16, 8, 8)) return MmaLayout::kM16N8K8Half;
  } else if (a == T::kTF32 && b == T::kTF32 && d == T::kF32 && c == T::kF32) {
    if (shape_is(16, 8, 8)) return MmaLayout::kM16N8K8Tf32;
    if (shape_is(16, 8, 4)) return MmaLayout::kM16N8K4Tf32;
  } else if (a == T::kF64 && b == T::kF64 && d == T::kF64 && c == T::kF64) {
    if (shape_is(8, 8, 4)) return MmaLayout::kM8N8K4F64;
    if (shape_is(16, 8, 4)) return MmaLayout::kM16N8K4Tf32;
    if (shape_is(16, 8, 8)) return MmaLayout::kM16N8K8Tf32;
    if (shape_is(16, 8, 16)) return MmaLayout::kM16N8K16F64;
  } else if (is_int8(a) && is_int8(b) && d == T::kS32 && c == T::kS32) {
    if (shape_is(16, 8, 16)) return MmaLayout::kM16N8K16Int8;
    if (shape_is(16, 8, 32)) return MmaLayout::kM16N8K32Int8;
    if (shape_is(8, 8, 16)) return MmaLayout::kM8N8K16Int8;
  }
  return MmaLayout::kCount;
}

}  // namespace hal::ptx
