// The typed form of a PTX module, as the front end (parser.h) produces it.
//
// One front end serves two readers, so that they can never disagree about a kernel:
//  - hal's CUDA backend reads only the header and the signatures (reader.h parses with
//    ParseOptions::bodies = false and never looks at instructions);
//  - the CPU PTX driver reads everything, and hands the module to its interpreter
//    (src/ptx_vm), which decides what it can execute.
// The parser checks syntax and names (every register, variable, function and label that an
// instruction uses is declared); it does not judge whether an instruction's modifiers and
// operand types make sense together: that is the consumer's job, which names the line.
//
// Names are resolved at parse time: an operand refers to a register, a variable, a function or
// a label by index, never by text, and registers declared in nested { } scopes get their own
// indices (a name declared twice in one scope is an error; an inner scope may shadow).
//
// Ownership: a Module owns all of its data and does not point into the text it was parsed from.
// Thread-safety: immutable once parse() returns; share it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hal::ptx::ir {

// ===========================================================================================
// Types
// ===========================================================================================

// PTX fundamental types, as written after a dot.
enum class Type : uint8_t {
  kNone = 0,
  kPred,
  // clang-format off
  kB8, kB16, kB32, kB64, kB128,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2, kTF32, kF32, kF64,
  kE4M3, kE5M2, kE4M3x2, kE5M2x2,  // fp8 (cvt on sm_89 and later)
  // clang-format on
};

// Bytes the type occupies in memory and in a register; 0 for kNone and kPred.
uint32_t type_size(Type type);
// "f32", "b64", ... (no dot); "none" for kNone.
const char* type_name(Type type);
bool is_float(Type type);     // f16, f16x2, bf16, bf16x2, tf32, f32, f64, fp8 forms
bool is_signed(Type type);    // s8 .. s64
bool is_unsigned(Type type);  // u8 .. u64
bool is_bits(Type type);      // b8 .. b128

enum class Space : uint8_t {
  kNone,  // generic addressing, or not a memory operand
  kReg,
  kGlobal,
  kShared,
  kSharedCluster,  // .shared::cluster: parsed, not executable on a one-CTA cluster device
  kLocal,
  kParam,
  kConst,
};
const char* space_name(Space space);  // "global", "shared", ... ("generic" for kNone)

// ===========================================================================================
// Instruction modifiers
// ===========================================================================================

// Every dotted word after an instruction's mnemonic that is not a type, a vector width (.v2),
// a shape (.m16n8k16) or a fragment count (.x4) is one of these. The same word can mean
// different things to different instructions (.hi: the high half for mul, "unsigned greater
// than" for setp); the consumer interprets it by opcode.
// clang-format off
#define HAL_PTX_MODIFIERS(X)                                                                    \
  /* rounding */                                                                                \
  X(kRn, "rn") X(kRz, "rz") X(kRm, "rm") X(kRp, "rp") X(kRna, "rna") X(kRs, "rs")              \
  X(kRni, "rni") X(kRzi, "rzi") X(kRmi, "rmi") X(kRpi, "rpi")                                   \
  /* floating point */                                                                          \
  X(kFtz, "ftz") X(kNoftz, "noftz") X(kSat, "sat") X(kSatfinite, "satfinite")                   \
  X(kApprox, "approx") X(kFull, "full") X(kRelu, "relu") X(kNaN, "NaN") X(kXorsign, "xorsign") \
  X(kAbs, "abs") X(kOob, "oob")                                                                 \
  /* integer */                                                                                 \
  X(kHi, "hi") X(kLo, "lo") X(kWide, "wide") X(kCc, "cc") X(kShiftamt, "shiftamt")             \
  X(kClamp, "clamp") X(kWrap, "wrap") X(kL, "l") X(kR, "r")                                     \
  X(kF4e, "f4e") X(kB4e, "b4e") X(kRc8, "rc8") X(kEcl, "ecl") X(kEcr, "ecr") X(kRc16, "rc16")  \
  /* comparisons (lo/hi above double as unsigned < and >) */                                    \
  X(kEq, "eq") X(kNe, "ne") X(kLt, "lt") X(kLe, "le") X(kGt, "gt") X(kGe, "ge")                \
  X(kLs, "ls") X(kHs, "hs") X(kEqu, "equ") X(kNeu, "neu") X(kLtu, "ltu") X(kLeu, "leu")         \
  X(kGtu, "gtu") X(kGeu, "geu") X(kNum, "num") X(kNan, "nan")                                   \
  /* boolean and atomic operations */                                                           \
  X(kAnd, "and") X(kOr, "or") X(kXor, "xor") X(kNot, "not") X(kAdd, "add") X(kMin, "min")      \
  X(kMax, "max") X(kInc, "inc") X(kDec, "dec") X(kExch, "exch") X(kCas, "cas")                  \
  X(kPopc, "popc")                                                                              \
  /* state spaces and addressing (.shared::cta is kShared, .param::entry kParam) */             \
  X(kGlobal, "global") X(kShared, "shared") X(kSharedCluster, "shared::cluster")               \
  X(kLocal, "local") X(kParam, "param") X(kConst, "const") X(kTo, "to")                        \
  /* warp and block synchronisation */                                                          \
  X(kSync, "sync") X(kAligned, "aligned") X(kUni, "uni") X(kAll, "all") X(kAny, "any")          \
  X(kBallot, "ballot") X(kUp, "up") X(kDown, "down") X(kBfly, "bfly") X(kIdx, "idx")            \
  X(kArrive, "arrive") X(kRed, "red") X(kWarp, "warp") X(kTrans, "trans") X(kRow, "row")        \
  X(kCol, "col") X(kAsync, "async") X(kCommitGroup, "commit_group")                            \
  X(kWaitGroup, "wait_group") X(kWaitAll, "wait_all") X(kProxy, "proxy") X(kBulk, "bulk")        \
  /* memory order and scope (membar's gl is kGl) */                                             \
  X(kWeak, "weak") X(kRelaxed, "relaxed") X(kAcquire, "acquire") X(kRelease, "release")         \
  X(kAcqRel, "acq_rel") X(kSc, "sc") X(kVolatile, "volatile") X(kMmio, "mmio") X(kCta, "cta")   \
  X(kCluster, "cluster") X(kGpu, "gpu") X(kSys, "sys") X(kGl, "gl")                             \
  /* cache behaviour: accepted, no effect on results (kCacheHint adds an operand) */            \
  X(kCa, "ca") X(kCg, "cg") X(kCs, "cs") X(kLu, "lu") X(kCv, "cv") X(kWb, "wb") X(kWt, "wt")    \
  X(kNc, "nc") X(kL1, "L1") X(kL2, "L2") X(kL1EvictNormal, "L1::evict_normal")                 \
  X(kL1EvictUnchanged, "L1::evict_unchanged") X(kL1EvictFirst, "L1::evict_first")               \
  X(kL1EvictLast, "L1::evict_last") X(kL1NoAllocate, "L1::no_allocate")                         \
  X(kL2EvictNormal, "L2::evict_normal") X(kL2EvictFirst, "L2::evict_first")                     \
  X(kL2EvictLast, "L2::evict_last") X(kL2EvictUnchanged, "L2::evict_unchanged")                 \
  X(kL2_64B, "L2::64B") X(kL2_128B, "L2::128B") X(kL2_256B, "L2::256B")                         \
  X(kCacheHint, "L2::cache_hint") X(kFractional, "fractional")                                  \
  /* testp */                                                                                   \
  X(kFinite, "finite") X(kInfinite, "infinite") X(kNumber, "number")                            \
  X(kNotanumber, "notanumber") X(kNormal, "normal") X(kSubnormal, "subnormal")
// clang-format on

enum class Mod : uint8_t {
#define HAL_PTX_MOD_ENUM(name, text) name,
  HAL_PTX_MODIFIERS(HAL_PTX_MOD_ENUM)
#undef HAL_PTX_MOD_ENUM
      kCount
};
const char* mod_name(Mod mod);  // the word without its dot, e.g. "L2::cache_hint"

// A set of modifiers: membership only (order matters only for types, kept separately).
class ModSet {
 public:
  void add(Mod mod) { bits_[index(mod)] |= bit(mod); }
  void remove(Mod mod) { bits_[index(mod)] &= ~bit(mod); }
  bool has(Mod mod) const { return (bits_[index(mod)] & bit(mod)) != 0; }
  bool empty() const { return (bits_[0] | bits_[1] | bits_[2] | bits_[3]) == 0; }

 private:
  static size_t index(Mod mod) { return static_cast<size_t>(mod) / 64; }
  static uint64_t bit(Mod mod) { return uint64_t{1} << (static_cast<size_t>(mod) % 64); }
  uint64_t bits_[4] = {0, 0, 0, 0};
};
static_assert(static_cast<size_t>(Mod::kCount) <= 256, "ModSet holds 256 modifiers");

// ===========================================================================================
// Opcodes
// ===========================================================================================

// Every PTX mnemonic the parser knows: the first dotted component of an instruction
// ("cp.async.wait_group" is kCp with the modifiers async and wait_group). A mnemonic outside
// this list is a parse error; one inside it may still be refused by a consumer that cannot
// execute it (wgmma, tex, ...), which then names it.
// clang-format off
#define HAL_PTX_OPCODES(X)                                                                       \
  X(kAbs, "abs") X(kActivemask, "activemask") X(kAdd, "add") X(kAddc, "addc") X(kAnd, "and")     \
  X(kApplypriority, "applypriority") X(kAtom, "atom") X(kBar, "bar") X(kBarrier, "barrier")      \
  X(kBfe, "bfe") X(kBfi, "bfi") X(kBfind, "bfind") X(kBmsk, "bmsk") X(kBra, "bra")               \
  X(kBrev, "brev") X(kBrkpt, "brkpt") X(kBrx, "brx") X(kCall, "call") X(kClz, "clz")             \
  X(kCnot, "cnot") X(kCopysign, "copysign") X(kCos, "cos") X(kCp, "cp")                         \
  X(kCreatepolicy, "createpolicy") X(kCvt, "cvt") X(kCvta, "cvta") X(kDiscard, "discard")        \
  X(kDiv, "div") X(kDp2a, "dp2a") X(kDp4a, "dp4a") X(kElect, "elect") X(kEx2, "ex2")             \
  X(kExit, "exit") X(kFence, "fence") X(kFma, "fma") X(kFns, "fns") X(kGetctarank, "getctarank") \
  X(kGriddepcontrol, "griddepcontrol") X(kIsspacep, "isspacep") X(kLd, "ld")                     \
  X(kLdmatrix, "ldmatrix") X(kLdu, "ldu") X(kLg2, "lg2") X(kLop3, "lop3") X(kMad, "mad")         \
  X(kMad24, "mad24") X(kMadc, "madc") X(kMapa, "mapa") X(kMatch, "match") X(kMax, "max")         \
  X(kMbarrier, "mbarrier") X(kMembar, "membar") X(kMin, "min") X(kMma, "mma") X(kMov, "mov")     \
  X(kMovmatrix, "movmatrix") X(kMul, "mul") X(kMul24, "mul24") X(kMultimem, "multimem")          \
  X(kNanosleep, "nanosleep") X(kNeg, "neg") X(kNot, "not") X(kOr, "or") X(kPmevent, "pmevent")   \
  X(kPopc, "popc") X(kPrefetch, "prefetch") X(kPrefetchu, "prefetchu") X(kPrmt, "prmt")          \
  X(kRcp, "rcp") X(kRed, "red") X(kRedux, "redux") X(kRem, "rem") X(kRet, "ret")                 \
  X(kRsqrt, "rsqrt") X(kSad, "sad") X(kSelp, "selp") X(kSet, "set") X(kSetmaxnreg, "setmaxnreg") \
  X(kSetp, "setp") X(kShf, "shf") X(kShfl, "shfl") X(kShl, "shl") X(kShr, "shr") X(kSin, "sin")  \
  X(kSlct, "slct") X(kSqrt, "sqrt") X(kSt, "st") X(kStackrestore, "stackrestore")                \
  X(kStacksave, "stacksave") X(kStmatrix, "stmatrix") X(kSub, "sub") X(kSubc, "subc")            \
  X(kSuld, "suld") X(kSured, "sured") X(kSust, "sust") X(kSuq, "suq") X(kSzext, "szext")         \
  X(kTanh, "tanh") X(kTensormap, "tensormap") X(kTestp, "testp") X(kTex, "tex")                 \
  X(kTld4, "tld4") X(kTrap, "trap") X(kTxq, "txq") X(kVabsdiff2, "vabsdiff2")                  \
  X(kVabsdiff4, "vabsdiff4") X(kVadd2, "vadd2") X(kVadd4, "vadd4") X(kVavrg2, "vavrg2")          \
  X(kVavrg4, "vavrg4") X(kVmax2, "vmax2") X(kVmax4, "vmax4") X(kVmin2, "vmin2")                 \
  X(kVmin4, "vmin4") X(kVote, "vote") X(kVsub2, "vsub2") X(kVsub4, "vsub4") X(kWgmma, "wgmma")  \
  X(kWmma, "wmma") X(kXor, "xor")
// clang-format on

enum class Opcode : uint8_t {
#define HAL_PTX_OPCODE_ENUM(name, text) name,
  HAL_PTX_OPCODES(HAL_PTX_OPCODE_ENUM)
#undef HAL_PTX_OPCODE_ENUM
      kCount
};
const char* opcode_name(Opcode opcode);  // the mnemonic, e.g. "ldmatrix"

// ===========================================================================================
// Special registers
// ===========================================================================================

// clang-format off
#define HAL_PTX_SPECIALS(X)                                                                      \
  X(kTid, "%tid") X(kNtid, "%ntid") X(kCtaid, "%ctaid") X(kNctaid, "%nctaid")                  \
  X(kLaneid, "%laneid") X(kWarpid, "%warpid") X(kNwarpid, "%nwarpid") X(kSmid, "%smid")         \
  X(kNsmid, "%nsmid") X(kGridid, "%gridid") X(kLanemaskEq, "%lanemask_eq")                      \
  X(kLanemaskLe, "%lanemask_le") X(kLanemaskLt, "%lanemask_lt") X(kLanemaskGe, "%lanemask_ge")  \
  X(kLanemaskGt, "%lanemask_gt") X(kClock, "%clock") X(kClockHi, "%clock_hi")                   \
  X(kClock64, "%clock64") X(kGlobaltimer, "%globaltimer") X(kGlobaltimerLo, "%globaltimer_lo")  \
  X(kGlobaltimerHi, "%globaltimer_hi") X(kDynamicSmemSize, "%dynamic_smem_size")                \
  X(kTotalSmemSize, "%total_smem_size") X(kAggrSmemSize, "%aggr_smem_size")                     \
  X(kClusterid, "%clusterid") X(kNclusterid, "%nclusterid") X(kClusterCtaid, "%cluster_ctaid")  \
  X(kClusterNctaid, "%cluster_nctaid") X(kClusterCtarank, "%cluster_ctarank")                   \
  X(kClusterNctarank, "%cluster_nctarank") X(kIsExplicitCluster, "%is_explicit_cluster")        \
  X(kEnvreg, "%envreg") X(kPm, "%pm") X(kPm64, "%pm64") X(kReserved, "%reserved_smem")
// clang-format on

enum class Special : uint8_t {
#define HAL_PTX_SPECIAL_ENUM(name, text) name,
  HAL_PTX_SPECIALS(HAL_PTX_SPECIAL_ENUM)
#undef HAL_PTX_SPECIAL_ENUM
      kCount
};
const char* special_name(Special special);  // "%tid"

// ===========================================================================================
// Operands
// ===========================================================================================

// What a symbol operand or an address base names.
enum class SymbolKind : uint8_t {
  kModuleVariable,    // Module::variables[index]
  kFunctionVariable,  // Function::variables[index] (.local, .shared, .param declared in a body)
  kParam,             // Function::params[index] (of the function being parsed)
  kReturn,            // Function::returns[index]
  kFunction,          // Module::functions[index]
  kLabel,             // Function::labels[index]
  kPrototype,         // Function::prototypes[index] (an indirect call's .callprototype)
  kTargetList,        // Function::target_lists[index] (.branchtargets / .calltargets)
};

struct SymbolRef {
  SymbolKind kind = SymbolKind::kModuleVariable;
  uint32_t index = 0;
};

enum class OperandKind : uint8_t {
  kRegister,  // reg (and reg2 after '|': "setp ... %p|%q"); negate for "!%p"
  kSpecial,   // special (and component: 0..2 for .x/.y/.z, or the N of %envregN / %pmN)
  kInteger,   // integer: as written, in 64-bit two's complement ("-1", "0xff", "7U")
  kFloat,     // float_bits: 0fXXXXXXXX (is_double false) or 0dXXXXXXXXXXXXXXXX and decimal
              // literals such as 1.5 (is_double true: the value as an IEEE double)
  kSymbol,    // symbol + offset: the address of a variable, a function, or a label
  kAddress,   // "[base + offset]": base is a register (reg), a symbol, or absent (absolute);
              // elements hold what follows the base after commas, as in a tensor or
              // texture address "[%rd1, {%r1, %r2}]" (empty for an ordinary address)
  kVector,    // "{a, b, ...}": elements
  kList,      // "(a, b, ...)": call's return and argument lists
  kSink,      // "_"
};

enum class AddressBase : uint8_t { kNone, kRegister, kSymbol };

struct Operand {
  OperandKind kind = OperandKind::kSink;
  bool negate = false;                    // "!%p"
  bool is_double = false;                 // kFloat: float_bits hold a double
  bool has_reg2 = false;                  // kRegister: "%p|%q"
  AddressBase base = AddressBase::kNone;  // kAddress
  Special special = Special::kTid;        // kSpecial
  uint32_t component = 0;                 // kSpecial (%reserved_smem_offset_begin, _end,
                                          // _cap, _0, _1: 0..4)
  uint32_t reg = 0;                       // kRegister, kAddress with a register base
  uint32_t reg2 = 0;                      // kRegister with has_reg2
  SymbolRef symbol;                       // kSymbol, kAddress with a symbol base
  int64_t integer = 0;                    // kInteger; the byte offset for kSymbol and kAddress
  uint64_t float_bits = 0;                // kFloat
  std::vector<Operand> elements;          // kVector, kList
};

// ===========================================================================================
// Declarations
// ===========================================================================================

// A register name: "%r5" from ".reg .b32 %r<10>;" or a plain ".reg .pred p;".
struct Register {
  std::string name;
  Type type = Type::kNone;
  uint32_t vector = 1;  // 2 or 4 for ".reg .v4 .f32 %v" (rare)
  uint32_t line = 0;
};

// One address inside a variable's initializer: the bytes at |offset| (8 of them for
// .address_size 64) hold the address of |symbol| plus |addend|; |generic| for generic(name).
struct Relocation {
  uint64_t offset = 0;
  SymbolRef symbol;
  int64_t addend = 0;
  bool generic = false;
  // mask(): 0 when the whole address is stored; else the one byte of the address (plus addend)
  // that the mask selects (0xFF, 0xFF00, ... 0xFF00000000000000), shifted down to bit 0, is
  // stored, zero-extended to |size| bytes ("0xFF00(generic(sym))" in a .b8 array).
  uint64_t mask = 0;
  // Bytes written at offset: the address size in bytes, or the element's size for mask().
  uint32_t size = 0;
};

enum class Linkage : uint8_t { kNone, kVisible, kExtern, kWeak, kCommon };

// A variable in a state space (module scope, a function body, or a parameter).
struct Variable {
  std::string name;
  Space space = Space::kNone;
  Linkage linkage = Linkage::kNone;
  Type type = Type::kNone;  // element type
  uint32_t vector = 1;      // .v2 / .v4 elements
  uint32_t align = 0;       // .align N, or 0 when not given (the element's size applies)
  // Elements: the product of the array dimensions, 1 for a scalar, 0 for an unsized array
  // ("[]", as in .extern .shared dynamic shared memory).
  uint64_t count = 1;
  bool unsized = false;
  // Parameters only: ".ptr" with the space pointed to and its alignment (a hint, not layout).
  bool is_ptr = false;
  Space ptr_space = Space::kNone;
  uint32_t ptr_align = 0;
  // Initializer, little-endian, element by element; empty when none (zeros for .global and
  // .const, undefined for others). relocations patch addresses into it at load (their bytes
  // are zero here). PTX allows incomplete initializers: init ends after the last element
  // written, so it may be shorter than size(); the bytes after it are zeros.
  std::vector<uint8_t> init;
  std::vector<Relocation> relocations;
  uint32_t line = 0;

  // Bytes: count * vector * type_size (0 when unsized).
  uint64_t size() const;
  // The alignment that applies: align, or the element size (vector included).
  uint32_t alignment() const;
};

// ===========================================================================================
// Instructions and functions
// ===========================================================================================

struct Instruction {
  Opcode opcode = Opcode::kAbs;
  std::string text;  // mnemonic and modifiers as written, e.g. "ld.global.nc.v4.f32"
  uint32_t line = 0;
  // "@%p" / "@!%p": the instruction runs only in threads where the predicate holds.
  bool guarded = false;
  bool guard_negated = false;
  uint32_t guard = 0;  // register index
  ModSet mods;
  std::vector<Type> types;  // in the order written (cvt: destination then source)
  uint32_t vector = 1;      // .v2 .v4 .v8
  uint32_t shape_m = 0, shape_n = 0, shape_k = 0;  // .m16n8k16 (k 0 for .m8n8)
  uint32_t fragments = 0;                          // .x1 .x2 .x4 (ldmatrix, stmatrix)
  // Modifier words the parser does not know, in order; a consumer refuses the instruction
  // naming the first. Kept rather than rejected so the message can say which instruction.
  std::vector<std::string> unknown_mods;
  std::vector<Operand> operands;
};

// "name: .callprototype (.param .b32 _) _ (.param .b64 _);": the signature an indirect call
// through a register promises (call's last operand names it).
struct Prototype {
  std::string name;
  std::vector<Variable> params;
  std::vector<Variable> returns;
  bool noreturn = false;
  uint32_t line = 0;
};

// "name: .branchtargets L1, L2;" (the labels brx.idx may jump to, by index) or
// "name: .calltargets f, g;" (the functions an indirect call may reach).
struct TargetList {
  std::string name;
  bool calls = false;              // .calltargets
  std::vector<SymbolRef> targets;  // kLabel (.branchtargets) or kFunction (.calltargets)
  uint32_t line = 0;
};

struct Label {
  std::string name;
  uint32_t instruction = 0;  // index of the instruction it precedes (== code.size() at the end)
  uint32_t line = 0;
};

struct Function {
  std::string name;
  bool is_entry = false;
  Linkage linkage = Linkage::kNone;
  bool has_body = false;  // false for a declaration ("... ;")
  bool noreturn = false;
  std::vector<Variable> params;   // in order; .param (or .reg for old-style .func parameters)
  std::vector<Variable> returns;  // .func only
  // Performance directives; zeros when absent (missing trailing dimensions are 1).
  uint32_t reqntid[3] = {0, 0, 0};
  uint32_t maxntid[3] = {0, 0, 0};
  uint32_t minnctapersm = 0;
  uint32_t maxnreg = 0;
  uint32_t line = 0;  // of .entry / .func

  // The body (empty unless has_body and ParseOptions::bodies).
  std::vector<Register> registers;
  std::vector<Variable> variables;  // .local, .shared, .param declared in the body, any scope
  std::vector<Label> labels;
  std::vector<Instruction> code;
  std::vector<Prototype> prototypes;     // ".callprototype" declarations in the body
  std::vector<TargetList> target_lists;  // ".branchtargets" / ".calltargets" in the body
};

struct Module {
  uint32_t version_major = 0;  // .version major.minor
  uint32_t version_minor = 0;
  std::string target;               // the architecture named first in .target, e.g. "sm_80"
  uint32_t target_sm = 0;           // its number: 80 for "sm_80", 90 for "sm_90a"
  char target_suffix = 0;           // 'a' or 'f' for sm_90a / sm_100f, else 0
  uint32_t address_size = 32;       // .address_size; PTX's default when the directive is absent
  std::vector<Variable> variables;  // module scope: .global, .const, .shared (incl. .extern)
  std::vector<Function> functions;  // .entry and .func, definitions and declarations, in order
};

// ===========================================================================================
// Parsing
// ===========================================================================================

struct ParseOptions {
  // false: function bodies are skipped by matching braces, so only the header, variables and
  // signatures are read (what hal's CUDA backend needs; instructions it does not know never
  // fail its load). true: every body is parsed into instructions.
  bool bodies = true;
};

struct ParseError {
  uint32_t line = 0;
  std::string message;  // what was expected and what was seen, quoting the token
};

// Caps that bound the work on hostile input. Inputs beyond them are errors, not truncations.
inline constexpr size_t kMaxIdentifierLength = 4096;
inline constexpr size_t kMaxFunctions = 65536;
inline constexpr size_t kMaxParams = 4096;
inline constexpr uint64_t kMaxParamBytes = 65536;         // per parameter and per entry
inline constexpr uint64_t kMaxVariableBytes = 1u << 30;   // per variable (shared, local, global)
inline constexpr size_t kMaxNesting = 256;                // nested { } and operand brackets
inline constexpr size_t kMaxRegisters = size_t{1} << 21;  // declared in one module ("%r<N>")
inline constexpr uint64_t kMaxInitializerBytes = uint64_t{1} << 26;  // init bytes, one module

// Parses |text|, which need not be NUL-terminated; reads nothing outside it. The work is linear
// in the input's size. On success fills |out| and returns true; on failure returns false and
// fills |error| (|out| is then unspecified). A missing .version or .target is an error;
// .address_size defaults to 32 as PTX says.
bool parse(const char* text, size_t size, const ParseOptions& options, Module* out,
           ParseError* error);

}  // namespace hal::ptx::ir
