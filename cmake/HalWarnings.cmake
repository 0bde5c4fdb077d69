# hal_warnings(target): the warning set every target of ours builds with, as errors.
function(hal_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Werror -Wshadow=local -Wno-missing-field-initializers>)
endfunction()
