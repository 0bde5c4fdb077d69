# Runs hal-cts on one device (with --quick unless FULL is set) with a JSON report, then checks the
# report: it parses (with
# python3 -m json.tool where Python is found, and with CMake's JSON reader), names the device and
# holds every test with a valid result. It also checks that the run released everything it got
# from hal: hal-cts runs with HAL_LOG_LEVEL=warn, the level that shows hal's leak report at exit,
# and the check fails when the report appears. Exits 0 with "hal-cts: skipped: no device" when
# the device does not exist (ctest's SKIP_REGULAR_EXPRESSION).
# The report must also say what ran (hal's commit, the host, the start and end times, the
# known-failure list with its SHA-256, the driver's identification), and the Markdown summary
# (--report-md, next to the report) must be written; a quick run is never submittable, a full one
# without failures is.
# With ALL_PASS=<area>, every test of that area must pass: a skip or a known failure there fails
# the check (the CPU PTX device runs every Numerics test; none may hide behind a skip), except a
# skip whose reason matches the regular expression SKIP_ALLOWED, when given.
# IR=<spirv|ptx> runs with --ir (the kernel pack in that IR); the check is skipped when the
# device does not take it. FILTER=<pattern> runs with --filter.
#   cmake -DHAL_CTS=<hal-cts> -DDEVICE=<selector> -DREPORT=<file> [-DPYTHON=<python3>]
#         [-DFULL=ON] [-DIR=<spirv|ptx>] [-DFILTER=<pattern>] [-DALL_PASS=<area>]
#         [-DSKIP_ALLOWED=<regex>] -P this
file(REMOVE ${REPORT} ${REPORT}.md)
set(mode --quick)
if(FULL)
  set(mode --perf)
endif()
if(IR)
  list(APPEND mode --ir ${IR})
endif()
if(FILTER)
  list(APPEND mode --filter ${FILTER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HAL_LOG_LEVEL=warn
                        ${HAL_CTS} --device ${DEVICE} ${mode} --json ${REPORT}
                        --report-md ${REPORT}.md
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
if(IR)
  string(JSON asked GET "${json}" options ir)
  if(NOT asked STREQUAL IR)
    message(FATAL_ERROR "the report's options.ir is '${asked}', not '${IR}'")
  endif()
  string(JSON device_irs GET "${json}" devices 0 ir)
  string(FIND "${device_irs}" "\"${IR}\"" takes_ir)
  if(takes_ir EQUAL -1)
    message("hal-cts: skipped: no device matches ${DEVICE} that takes ${IR} (it takes ${device_irs})")
    return()
  endif()
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
    if(result STREQUAL "skipped" AND SKIP_ALLOWED AND text MATCHES "${SKIP_ALLOWED}")
      continue()
    endif()
    message(FATAL_ERROR "test ${name} is '${result}' (${text}); every ${ALL_PASS} test must pass "
                        "on ${DEVICE}")
  endif()
endforeach()
string(JSON failed GET "${json}" summary failed)
if(NOT failed EQUAL 0)
  message(FATAL_ERROR "the report counts ${failed} failed test(s)")
endif()

# What ran, and whether it may be published.
foreach(path "hal;commit" "host;os" "host;kernel" "host;machine" "known_failures;builtin;text"
        "devices;0;name" "devices;0;driver_info" "coverage;0;text")
  string(JSON value ERROR_VARIABLE err GET "${json}" ${path})
  if(err OR value STREQUAL "")
    message(FATAL_ERROR "the report's ${path} is missing or empty ${err}")
  endif()
endforeach()
foreach(stamp started_at finished_at)
  string(JSON value GET "${json}" ${stamp})
  if(NOT value MATCHES "^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]+Z$")
    message(FATAL_ERROR "the report's ${stamp} is '${value}', not an ISO 8601 UTC time")
  endif()
endforeach()
string(JSON sha GET "${json}" known_failures builtin sha256)
if(NOT sha MATCHES "^[0-9a-f]+$")
  message(FATAL_ERROR "the known-failure list's sha256 is '${sha}'")
endif()
string(LENGTH "${sha}" sha_length)
if(NOT sha_length EQUAL 64)
  message(FATAL_ERROR "the known-failure list's sha256 has ${sha_length} digits")
endif()
if(PYTHON)
  execute_process(
    COMMAND ${PYTHON} -c "import hashlib, json, sys; r = json.load(open(sys.argv[1])); k = r['known_failures']['builtin']; sys.exit(hashlib.sha256(k['text'].encode()).hexdigest() != k['sha256'])"
            ${REPORT}
    RESULT_VARIABLE sha_rc)
  if(NOT sha_rc EQUAL 0)
    message(FATAL_ERROR "the known-failure list's sha256 does not match its text")
  endif()
endif()
string(JSON submittable GET "${json}" submittable)
if(FULL AND NOT submittable)
  string(JSON why GET "${json}" not_submittable_because)
  message(FATAL_ERROR "a full run without failures is not submittable: ${why}")
endif()
if(NOT FULL AND submittable)
  message(FATAL_ERROR "a --quick run claims to be submittable")
endif()
if(NOT EXISTS ${REPORT}.md)
  message(FATAL_ERROR "hal-cts wrote no Markdown summary at ${REPORT}.md")
endif()
file(READ ${REPORT}.md summary)
foreach(part "# hal conformance report" "| submittable |" "## Devices" "## Results")
  string(FIND "${summary}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the Markdown summary lacks '${part}'")
  endif()
endforeach()
message("report ${REPORT}: hal ${version}, ${ntests} tests, valid JSON")
