# cmake -DFILE=<file.ptx> -DVERSION=<major.minor> -P ptx_isa.cmake
#
# Rewrites the PTX ISA version a PTX file declares (its ".version" line) to VERSION. nvcc always
# declares the newest ISA it knows (9.0 for CUDA 13.0), which drivers older than that toolkit
# refuse; the pack's kernels use nothing newer than VERSION, which ptxas confirms for every build
# (test Kernels/PtxAssemble), so the lower version lets older drivers load them.
if(NOT FILE OR NOT VERSION)
  message(FATAL_ERROR "usage: cmake -DFILE=<file.ptx> -DVERSION=<major.minor> -P ptx_isa.cmake")
endif()
file(READ "${FILE}" ptx)
string(REGEX MATCH "\n\\.version [0-9]+\\.[0-9]+\n" declared "${ptx}")
if(NOT declared)
  message(FATAL_ERROR "${FILE}: no .version line")
endif()
string(REPLACE "${declared}" "\n.version ${VERSION}\n" ptx "${ptx}")
file(WRITE "${FILE}" "${ptx}")
