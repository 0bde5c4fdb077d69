# hal_limit_exports(<target> <version script>): the shared library or module <target> exports
# only the symbols its version script lists, whatever its static dependencies would export, and
# every symbol it uses must resolve when it is linked. The exception is a clang sanitizer build:
# clang links the sanitizer runtime into executables only, so a sanitized library leaves
# __asan_*/__ubsan_* for the program that loads it.
function(hal_limit_exports target map)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${map})
  target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")
  if(NOT (CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND "${CMAKE_CXX_FLAGS}" MATCHES "-fsanitize="))
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
