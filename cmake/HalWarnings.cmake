# hal_warnings(target): the warning set every target of ours builds with. Warnings are errors only
# with HAL_WARNINGS_AS_ERRORS=ON (tools/dev.sh and CI set it): a user's build with another
# compiler or build type must never fail on a warning.
option(HAL_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (tools/dev.sh and CI turn it on)"
       OFF)
function(hal_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wno-missing-field-initializers>
    $<$<AND:$<BOOL:${HAL_WARNINGS_AS_ERRORS}>,$<COMPILE_LANGUAGE:C,CXX>>:-Werror>
    $<$<OR:$<COMPILE_LANG_AND_ID:C,GNU>,$<COMPILE_LANG_AND_ID:CXX,GNU>>:-Wshadow=local>)
endfunction()
