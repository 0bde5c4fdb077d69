# The driver SDK test: an installed hal is all a hardware team needs to bring up a device.
#
#  1. hal's build is installed into a fresh prefix, which must hold hal_driver.h, the CMake
#     package and the built-in driver modules;
#  2. samples/driver_skeleton is configured and built against that prefix, found through
#     CMAKE_PREFIX_PATH alone, with warnings as errors; the module exports hal_driver_query only;
#  3. the installed hal-info, with HAL_DRIVER_PATH naming the module's directory, lists the
#     backend "skeleton" as available with the module's path, and its device as skeleton:0;
#  4. the installed hal-cts runs in full on skeleton:0 and writes its JSON report and its
#     one-page summary: it exits 0; every test of DeviceInfo (but the binary-IR check), Memory,
#     Copies, Streams and Errors passed; the kernel tests of fill_f32, copy_f32, vector_add_f32
#     and saxpy passed; the tests that need a SPIR-V or PTX module, and the kernels the skeleton
#     does not bring, are skipped with a reason; the reports name the skeleton backend and its
#     module, and the run is submittable;
#  5. skeleton_checks (this folder), built against the prefix, checks what the suite cannot
#     see: unknown kernel names, a kernel's fault, host addresses. It finds the module through
#     HAL_DRIVER_PATH naming the file, with HAL_BACKENDS=skeleton.
#
#   cmake -DBUILD_DIR=<hal's build> -DWORK_DIR=<scratch> -DSKELETON_DIR=<samples/driver_skeleton>
#         -DSOURCE_DIR=<this folder> -DCC=<C compiler> [-DDRIVERS=vulkan,cuda]
#         [-DLINK_FLAGS=<flags>] [-DPYTHON=<python3>] -P run_driver_sdk.cmake
#
# DRIVERS names the built-in drivers the build has; LINK_FLAGS are the linker flags hal's own
# programs get (a sanitizer build's libhal.so needs the program to bring the sanitizer runtime).
foreach(var BUILD_DIR WORK_DIR SKELETON_DIR SOURCE_DIR CC)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_driver_sdk.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(skeleton_build ${WORK_DIR}/skeleton)
set(module ${skeleton_build}/libhal_driver_skeleton.so)

# Runs a command; fails with its output unless it exits 0. The output is left in <var>_out.
function(run var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${var}_out "${out}${err}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message("${out}${err}")
    message(FATAL_ERROR "failed (exit status ${rc}): ${cmd}")
  endif()
endfunction()

function(expect_contains text part what)
  string(FIND "${text}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: '${part}' is missing")
  endif()
endfunction()

# 1. The install.
run(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(needed include/hal/hal.h include/hal/hal_driver.h lib/libhal.so.0
    lib/cmake/hal/halConfig.cmake lib/cmake/hal/halTargets.cmake bin/hal-info bin/hal-cts)
string(REPLACE "," ";" drivers "${DRIVERS}")
foreach(driver ${drivers})
  list(APPEND needed lib/hal/drivers/libhal_driver_${driver}.so)
endforeach()
foreach(f ${needed})
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()

# 2. The skeleton, built against the install alone.
run(configure ${CMAKE_COMMAND} -S ${SKELETON_DIR} -B ${skeleton_build}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${CC} -DCMAKE_C_FLAGS=-Werror
    -DCMAKE_BUILD_TYPE=Release)
run(build ${CMAKE_COMMAND} --build ${skeleton_build})
if(NOT EXISTS ${module})
  message(FATAL_ERROR "building samples/driver_skeleton gave no ${module}")
endif()
find_program(NM nm)
if(NM)
  run(symbols ${NM} -D --defined-only ${module})
  string(REGEX MATCHALL "[^\n]+" lines "${symbols_out}")
  set(exported "")
  foreach(line ${lines})
    if(line MATCHES " [TDBRVW] ([A-Za-z_][A-Za-z0-9_@.]*)$")
      list(APPEND exported ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(NOT exported STREQUAL "hal_driver_query")
    message(FATAL_ERROR "the module should export hal_driver_query only, but exports: ${exported}")
  endif()
else()
  message(WARNING "nm not found: the skeleton's exported symbols are not checked")
endif()

# 3. hal-info finds it through HAL_DRIVER_PATH (a directory).
run(info ${CMAKE_COMMAND} -E env HAL_DRIVER_PATH=${skeleton_build} ${prefix}/bin/hal-info)
message("${info_out}")
if(NOT info_out MATCHES "\n  skeleton +available, 1 device")
  message(FATAL_ERROR "hal-info does not list the backend skeleton as available with 1 device")
endif()
expect_contains("${info_out}" "${module}" "hal-info names the skeleton's module")
expect_contains("${info_out}" "] skeleton:0  hal skeleton device (host memory)"
                "hal-info lists the device with its selector")

# 4. The conformance suite, full, with both reports.
set(report ${WORK_DIR}/hal-cts-skeleton.json)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env HAL_DRIVER_PATH=${skeleton_build} HAL_LOG_LEVEL=warn
          ${prefix}/bin/hal-cts --device skeleton:0 --json ${report} --report-md ${report}.md
  RESULT_VARIABLE rc OUTPUT_VARIABLE cts_out ERROR_VARIABLE cts_err)
message("${cts_out}${cts_err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hal-cts --device skeleton:0 failed (exit status ${rc})")
endif()
expect_contains("${cts_out}" "submittable: yes" "a full run without failures is submittable")
string(FIND "${cts_err}" "leak report at exit" leak_at)
if(NOT leak_at EQUAL -1)
  message(FATAL_ERROR "hal-cts left objects alive on the skeleton device: see the leak report")
endif()
if(PYTHON)
  run(json_tool ${PYTHON} -m json.tool ${report})
endif()
file(READ ${report} json)
foreach(field "backend=skeleton" "module=${module}" "label=skeleton_0")
  string(REPLACE "=" ";" pair "${field}")
  list(GET pair 0 key)
  list(GET pair 1 want)
  string(JSON got GET "${json}" devices 0 ${key})
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "the report's devices[0].${key} is '${got}', not '${want}'")
  endif()
endforeach()

# Every test's result, by name (without the device suffix) and by area.
string(JSON ntests LENGTH "${json}" tests)
math(EXPR last "${ntests} - 1")
foreach(area DeviceInfo Memory Copies Streams Errors Modules Launch Numerics)
  set(passed_${area} 0)
endforeach()
foreach(i RANGE ${last})
  string(JSON area GET "${json}" tests ${i} area)
  string(JSON test GET "${json}" tests ${i} test)
  string(JSON result GET "${json}" tests ${i} result)
  string(JSON text GET "${json}" tests ${i} message)
  set(result_${area}.${test} ${result})
  if(result STREQUAL "passed")
    math(EXPR passed_${area} "${passed_${area}} + 1")
  elseif(result STREQUAL "skipped")
    if(text STREQUAL "")
      message(FATAL_ERROR "${area}.${test} was skipped without a reason")
    endif()
    if(area MATCHES "^(Memory|Copies|Streams|Errors)$")
      message(FATAL_ERROR "${area}.${test} was skipped (${text}); every ${area} test must run")
    endif()
    if(area STREQUAL "DeviceInfo" AND NOT test STREQUAL "BinaryIrsClaimed")
      message(FATAL_ERROR "DeviceInfo.${test} was skipped (${text})")
    endif()
  else()
    message(FATAL_ERROR "${area}.${test} is '${result}': ${text}")
  endif()
endforeach()
foreach(area DeviceInfo Memory Copies Streams Errors Modules Launch Numerics)
  if(passed_${area} EQUAL 0)
    message(FATAL_ERROR "no ${area} test passed on skeleton:0")
  endif()
endforeach()
# The skeleton's kernels run: fill_f32 (the launch tests, blocks at the limits too), copy_f32 (pointers at offsets),
# saxpy (ordering on a stream), each of the four checked against the reference on its own
# (Numerics.Smoke*).
foreach(test Numerics.SmokeFill Numerics.SmokeCopy Numerics.SmokeVectorAdd Numerics.SmokeSaxpy
             Modules.EveryPackKernelLoads Modules.Unload Launch.GridAtDeviceLimits
             Launch.BlockRules Launch.BlockAtDeviceLimits Launch.ArgumentValidation
             Launch.RawAddressesAtFourByteOffsets Streams.KernelOrderWithinStream
             DeviceInfo.AcceptedIrsLoad)
  if(NOT "${result_${test}}" STREQUAL "passed")
    message(FATAL_ERROR "${test} is '${result_${test}}' on skeleton:0, not passed")
  endif()
endforeach()
# What needs a SPIR-V or PTX module, and kernels the skeleton does not bring, is skipped.
foreach(test Modules.SeveralEntryPoints Modules.SpecializationConstants Modules.WorkgroupSizeBySpecialization
             Modules.SpecializedSharedMemoryOverLimit Numerics.MatmulNaiveF32
             Numerics.AttentionFusedF32D64)
  if(NOT "${result_${test}}" STREQUAL "skipped")
    message(FATAL_ERROR "${test} is '${result_${test}}' on skeleton:0, not skipped")
  endif()
endforeach()

# The one-page summary to publish.
file(READ ${report}.md summary)
foreach(part "# hal conformance report" "| submittable | yes |" "| skeleton_0 | hal skeleton device"
        "| skeleton (module `${module}`) |" "| Memory | skeleton_0 |")
  expect_contains("${summary}" "${part}" "the Markdown summary")
endforeach()

# 5. skeleton_checks, with the module named as a file and only its backend enabled.
separate_arguments(link_flags UNIX_COMMAND "${LINK_FLAGS}")
run(checks_build ${CC} -std=c99 -Wall -Wextra -Werror ${SOURCE_DIR}/skeleton_checks.c
    -I${prefix}/include -L${prefix}/lib -lhal ${link_flags} -Wl,-rpath,${prefix}/lib
    -o ${WORK_DIR}/skeleton_checks)
run(checks ${CMAKE_COMMAND} -E env HAL_DRIVER_PATH=${module} HAL_BACKENDS=skeleton
    ${WORK_DIR}/skeleton_checks skeleton:0)
message("${checks_out}")
message("driver SDK: the skeleton driver built against ${prefix} and passed hal-cts")
