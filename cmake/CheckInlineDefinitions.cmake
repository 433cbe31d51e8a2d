# cmake -DOBJECTS="a.o;b.o" -DNM=nm -P CheckInlineDefinitions.cmake
# Every header defines its functions and variables inline (or in a template), so that two
# translation units of a program can include it: the object of a translation unit that
# only includes a header (the header check's) then defines no strong global symbol (nm's
# T, D, B or R) but its own anchor. A definition without `inline` (in the engine's .ipp
# files: without RAGPP_FUNC) fails here, naming the header and the symbol, instead of at
# a user's link.
set(_bad "")
foreach(_o IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} --defined-only ${_o} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${_o}")
  endif()
  string(REPLACE "\n" ";" _lines "${_out}")
  foreach(_l IN LISTS _lines)
    if(_l MATCHES " [TDBR] " AND NOT _l MATCHES "_anchor$")
      get_filename_component(_name ${_o} NAME)
      string(APPEND _bad "  ${_name}: ${_l}\n")
    endif()
  endforeach()
endforeach()
list(LENGTH OBJECTS _n)
if(_bad)
  message(FATAL_ERROR "definitions that are not inline (a program including the header twice would not link):\n${_bad}")
endif()
message(STATUS "${_n} header objects: every definition inline")
