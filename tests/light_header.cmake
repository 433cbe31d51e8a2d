# Lists the headers HEADER includes when compiled against ragpp::compiled (-DRAGPP_COMPILED,
# `-M`: preprocessing only, about a second) and fails naming any that matches FORBIDDEN:
# a program linking the compiled library must not parse what the library compiles.
#   cmake -DCXX=... -DFLAGS=a|b|c -DHEADER=ragpp/x.hpp -DFORBIDDEN=regex -P light_header.cmake
string(REPLACE "|" ";" _flags "${FLAGS}")
file(WRITE ${WORK}/light_header.cpp "#include <${HEADER}>\n")
execute_process(COMMAND ${CXX} ${_flags} -DRAGPP_COMPILED -M ${WORK}/light_header.cpp
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${HEADER} does not preprocess with -DRAGPP_COMPILED:\n${_err}")
endif()
string(REGEX MATCHALL "[^ \\\n]*include/ragpp/[^ \\\n]*" _headers "${_out}")
list(LENGTH _headers _n)
set(_bad "")
foreach(_h IN LISTS _headers)
  if(_h MATCHES "${FORBIDDEN}")
    list(APPEND _bad "${_h}")
  endif()
endforeach()
if(_bad)
  string(REPLACE ";" "\n  " _bad "${_bad}")
  message(FATAL_ERROR "${HEADER} with -DRAGPP_COMPILED includes what the compiled library holds:\n  ${_bad}")
endif()
if(_n LESS 5)
  message(FATAL_ERROR "${HEADER}: only ${_n} ragpp headers listed; the -M output was not understood:\n${_out}")
endif()
message(STATUS "${HEADER} with -DRAGPP_COMPILED: ${_n} ragpp headers, none matching '${FORBIDDEN}'")
