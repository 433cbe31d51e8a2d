# Compiles tests/compile_fail/misuse.cpp with -DRAGPP_MISUSE_<CASE>=1 and -fsyntax-only.
# CASE none must compile; every other case must fail with a diagnostic matching EXPECT
# (the concept or the message that names the misuse), so that a failure for another
# reason (a missing header, a typo) does not pass.
#   cmake -DCXX=... -DFLAGS=a|b|c -DSOURCE=... -DCASE=... [-DEXPECT=regex] -P compile_fail.cmake
string(REPLACE "|" ";" _flags "${FLAGS}")
execute_process(COMMAND ${CXX} ${_flags} -fsyntax-only -DRAGPP_MISUSE_${CASE}=1 ${SOURCE}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(CASE STREQUAL "none")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "the well-formed control case does not compile:\n${_out}")
  endif()
  message(STATUS "compile_fail none: compiles")
  return()
endif()
if(_rc EQUAL 0)
  message(FATAL_ERROR "misuse '${CASE}' compiled: the concepts no longer reject it")
endif()
if(NOT _out MATCHES "${EXPECT}")
  message(FATAL_ERROR "misuse '${CASE}' was rejected, but not with a diagnostic matching '${EXPECT}':\n${_out}")
endif()
message(STATUS "compile_fail ${CASE}: rejected, the diagnostic names '${CMAKE_MATCH_0}'")
