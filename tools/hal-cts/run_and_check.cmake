# Runs hal-cts on one device (with --quick unless FULL is set) with a JSON report, then checks the
# report: it parses (with
# python3 -m json.tool where Python is found, and with CMake's JSON reader), names the device and
# holds every test with a valid result. It also checks that the run released everything it got
# from hal: hal-cts runs with HAL_LOG_LEVEL=warn, the level that shows hal's leak report at exit,
# and the check fails when the report appears. Exits 0 with "hal-cts: skipped: no device" when
# the device does not exist (ctest's SKIP_REGULAR_EXPRESSION).
# With ALL_PASS=<area>, every test of that area must pass: a skip or a known failure there fails
# the check (the CPU PTX device runs every Numerics test; none may hide behind a skip).
#   cmake -DHAL_CTS=<hal-cts> -DDEVICE=<selector> -DREPORT=<file> [-DPYTHON=<python3>]
#         [-DFULL=ON] [-DALL_PASS=<area>] -P this
file(REMOVE ${REPORT})
set(mode --quick)
if(FULL)
  set(mode --perf)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HAL_LOG_LEVEL=warn
                        ${HAL_CTS} --device ${DEVICE} ${mode} --json ${REPORT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
message("${err}")
if(rc EQUAL 77)
  message("hal-cts: skipped: no device matches ${DEVICE}")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hal-cts --device ${DEVICE} ${mode} failed (exit status ${rc})")
endif()
string(FIND "${err}" "leak report at exit" leak_at)
if(NOT leak_at EQUAL -1)
  message(FATAL_ERROR "hal-cts --device ${DEVICE} ${mode} did not release everything it got "
                      "from hal: see the leak report above")
endif()
if(NOT EXISTS ${REPORT})
  message(FATAL_ERROR "hal-cts wrote no report at ${REPORT}")
endif()

if(PYTHON)
  execute_process(COMMAND ${PYTHON} -m json.tool ${REPORT} OUTPUT_QUIET
                  RESULT_VARIABLE py_rc ERROR_VARIABLE py_err)
  if(NOT py_rc EQUAL 0)
    message(FATAL_ERROR "the report does not parse as JSON: ${py_err}")
  endif()
endif()

file(READ ${REPORT} json)
string(JSON version ERROR_VARIABLE err GET "${json}" hal library_version)
if(err)
  message(FATAL_ERROR "the report has no hal.library_version: ${err}")
endif()
string(JSON ndevices LENGTH "${json}" devices)
string(JSON ntests LENGTH "${json}" tests)
if(ndevices LESS 1 OR ntests LESS 1)
  message(FATAL_ERROR "the report holds ${ndevices} device(s) and ${ntests} test(s)")
endif()
math(EXPR last "${ntests} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" tests ${i} name)
  string(JSON result GET "${json}" tests ${i} result)
  string(JSON ms GET "${json}" tests ${i} time_ms)
  string(JSON text GET "${json}" tests ${i} message)
  if(NOT result MATCHES "^(passed|failed|skipped|known-failure|unexpected-pass)$")
    message(FATAL_ERROR "test ${name} has the result '${result}'")
  endif()
  if(ALL_PASS AND name MATCHES "^${ALL_PASS}\\." AND NOT result STREQUAL "passed")
    message(FATAL_ERROR "test ${name} is '${result}' (${text}); every ${ALL_PASS} test must pass "
                        "on ${DEVICE}")
  endif()
endforeach()
string(JSON failed GET "${json}" summary failed)
if(NOT failed EQUAL 0)
  message(FATAL_ERROR "the report counts ${failed} failed test(s)")
endif()
message("report ${REPORT}: hal ${version}, ${ntests} tests, valid JSON")
