# Checks that a library holds none of the backends' code: its full symbol table (not only what it
# exports) names nothing of hal::vulkan, hal::cuda or volk. With -DEXPECT_FOUND=1 it checks the
# opposite, so a run on a driver module shows the check can see backend code at all.
# Usage: cmake -DNM=<nm> -DLIBRARY=<lib.so> [-DEXPECT_FOUND=1] -P check_no_backend_code.cmake
cmake_policy(VERSION 3.25)
foreach(var NM LIBRARY)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_no_backend_code: -D${var}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${NM} -C ${LIBRARY}
  OUTPUT_VARIABLE nm_out RESULT_VARIABLE nm_rc ERROR_VARIABLE nm_err)
if(NOT nm_rc EQUAL 0)
  message(FATAL_ERROR "check_no_backend_code: ${NM} failed on ${LIBRARY}: ${nm_err}")
endif()
# A stripped library says nothing either way.
if(NOT nm_out MATCHES "hal::")
  message(FATAL_ERROR "check_no_backend_code: ${LIBRARY} has no symbol table to check (stripped?)")
endif()
string(REGEX MATCHALL "[^\n]*(hal::vulkan::|hal::cuda::|volk[A-Z])[^\n]*" found "${nm_out}")
list(LENGTH found count)
if(EXPECT_FOUND)
  if(count EQUAL 0)
    message(FATAL_ERROR "check_no_backend_code: found no backend code in ${LIBRARY}")
  endif()
  message(STATUS "check_no_backend_code: ${LIBRARY} holds backend code (${count} symbols)")
elseif(count GREATER 0)
  list(SUBLIST found 0 5 first)
  list(JOIN first "\n  " shown)
  message(FATAL_ERROR
    "check_no_backend_code: ${LIBRARY} holds backend code (${count} symbols), e.g.\n  ${shown}")
else()
  message(STATUS "check_no_backend_code: ${LIBRARY} holds no backend code")
endif()
