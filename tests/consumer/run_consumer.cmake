# The consumer test: install hal into a fresh prefix, then build and run a small C program
# against it twice, once found with find_package(hal) and once with pkg-config.
# Variables: BUILD_DIR (hal's build), WORK_DIR (scratch), SOURCE_DIR (this folder), CC, PKG_CONFIG,
# LINK_FLAGS (hal's own programs' linker flags: a sanitizer build's libhal.so needs the program to
# bring the sanitizer runtime).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(rc EQUAL 77)
    message("consumer: skipped: no device taking SPIR-V")
    return()
  endif()
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/hal/hal.h lib/libhal.so.0 lib/cmake/hal/halConfig.cmake
          lib/cmake/hal/halConfigVersion.cmake lib/pkgconfig/hal.pc
          share/hal/kernels/manifest.json share/hal/kernels/vector_add_f32.spv bin/hal-info
          bin/hal-spirv-entry lib/cmake/hal/ptx_isa.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()

# 1. find_package(hal)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${CC} "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
run(${WORK_DIR}/cmake/consumer ${prefix}/share/hal/kernels)

# 2. pkg-config --cflags --libs hal
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs hal OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs hal failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(link_flags UNIX_COMMAND "${LINK_FLAGS}")
run(${CC} -std=c99 -Wall -Wextra -Werror ${SOURCE_DIR}/consumer.c ${flags} ${link_flags}
    -Wl,-rpath,${prefix}/lib -o ${WORK_DIR}/consumer-pc)
run(${WORK_DIR}/consumer-pc ${prefix}/share/hal/kernels)
