# hal-cts on a driver whose vector_add_f32 computes B + B and which has no saxpy
# (fault_driver.c's FAULT_WRONG_KERNEL): the run must fail, naming the wrong kernel's own test,
# with saxpy's test skipped for its absence and not hiding the other failure.
#   cmake -DHAL_CTS=<hal-cts> -DMODULE_DIR=<dir> -DREPORT=<file> -P this
execute_process(COMMAND ${CMAKE_COMMAND} -E env HAL_DRIVER_PATH=${MODULE_DIR}
                        HAL_BACKENDS=wrong_kernel HAL_LOG_LEVEL=off
                        ${HAL_CTS} --device wrong_kernel:0 --quick --json ${REPORT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "hal-cts exited ${rc} on a driver with a wrong kernel, not 1:\n${err}")
endif()
file(READ ${REPORT} report)
string(JSON count LENGTH "${report}" tests)
foreach(i RANGE 0 ${count})
  if(i EQUAL count)
    break()
  endif()
  string(JSON name GET "${report}" tests ${i} name)
  string(JSON result GET "${report}" tests ${i} result)
  set(result_${name} ${result})
endforeach()
foreach(pair "Numerics.SmokeVectorAdd/wrong_kernel_0:failed" "Numerics.SmokeSaxpy/wrong_kernel_0:skipped"
        "Numerics.SmokeFill/wrong_kernel_0:passed" "Numerics.SmokeCopy/wrong_kernel_0:passed")
  string(REPLACE ":" ";" parts "${pair}")
  list(GET parts 0 test)
  list(GET parts 1 want)
  if(NOT "${result_${test}}" STREQUAL "${want}")
    message(FATAL_ERROR "${test} is '${result_${test}}', not ${want}")
  endif()
endforeach()
if(NOT out MATCHES "submittable: no")
  message(FATAL_ERROR "a run with a wrong kernel was not reported as not submittable")
endif()
message("hal-cts failed the wrong vector_add_f32 by name, with saxpy missing")
