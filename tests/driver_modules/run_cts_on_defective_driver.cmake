# hal-cts on a driver made from the skeleton with one deliberate defect (fault_driver.c), or on
# the renamed skeleton as a control: the run's results, its failures' root causes and its verdict
# must name the defect.
#   cmake -DHAL_CTS=<hal-cts> -DDRIVER_PATH=<dirs> -DBACKENDS=<names> -DDEVICE=<selector>
#         -DREPORT=<file> [-DFAILED=<tests>] [-DSKIPPED=<tests>] [-DPASSED=<tests>]
#         [-DROOT=<test>] [-DTEXT=<strings>] [-DREASON=<strings>] [-DKNOWN=<file>] -P this
# FAILED, SKIPPED and PASSED are ';'-separated "Area.Test/label" names that must have that result;
# ROOT the failure that must be reported as the root cause of the others; TEXT strings the output
# must hold; REASON strings the verdict's reasons must hold; KNOWN a vendor's known-failure list.
# Without FAILED and REASON the run must pass, with the quick run as the only reason it is not
# submittable. The run is quick: the verdict's other reasons are what is checked.
set(known_args)
if(KNOWN)
  set(known_args --known-failures ${KNOWN})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HAL_DRIVER_PATH=${DRIVER_PATH}
                        HAL_BACKENDS=${BACKENDS} HAL_LOG_LEVEL=off
                        ${HAL_CTS} --device ${DEVICE} --quick --json ${REPORT} ${known_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
set(want_rc 0)
if(FAILED)
  set(want_rc 1)
endif()
if(NOT rc EQUAL want_rc)
  message(FATAL_ERROR "hal-cts exited ${rc} on ${DEVICE}, not ${want_rc}:\n${err}")
endif()
file(READ ${REPORT} report)
string(JSON count LENGTH "${report}" tests)
math(EXPR last "${count} - 1")
foreach(i RANGE 0 ${last})
  string(JSON name GET "${report}" tests ${i} name)
  string(JSON result GET "${report}" tests ${i} result)
  set("result_${name}" ${result})
endforeach()
foreach(kind FAILED SKIPPED PASSED)
  string(TOLOWER ${kind} want)
  foreach(test IN LISTS ${kind})
    if(NOT "${result_${test}}" STREQUAL "${want}")
      message(FATAL_ERROR "${test} is '${result_${test}}', not ${want}")
    endif()
  endforeach()
endforeach()

string(JSON reasons GET "${report}" not_submittable_because)
string(JSON nreasons LENGTH "${report}" not_submittable_because)
foreach(text IN LISTS REASON)
  string(FIND "${reasons}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the verdict's reasons do not say \"${text}\": ${reasons}")
  endif()
endforeach()
if(REASON AND NOT FAILED)
  message("hal-cts passed ${DEVICE} but did not call it submittable, and says why")
  return()
endif()
if(NOT FAILED)
  if(NOT nreasons EQUAL 1 OR NOT reasons MATCHES "--quick")
    message(FATAL_ERROR "the control run is not submittable for more than being quick: ${reasons}")
  endif()
  message("hal-cts passed ${DEVICE}, its only flaw a quick run")
  return()
endif()
# Not submittable for the defect itself, not only for being a quick run.
if(nreasons LESS 2 OR NOT reasons MATCHES "failed, from")
  message(FATAL_ERROR "the verdict does not name the failures: ${reasons}")
endif()
if(ROOT)
  string(JSON root GET "${report}" root_causes 0 test)
  if(NOT root STREQUAL ROOT)
    message(FATAL_ERROR "the first root cause is ${root}, not ${ROOT}")
  endif()
endif()
foreach(text IN LISTS TEXT)
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the output does not say \"${text}\"")
  endif()
endforeach()
message("hal-cts failed ${DEVICE} by name, and the verdict says why")
