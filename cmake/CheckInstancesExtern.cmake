# cmake -DOBJECT=o -DNM=nm -P CheckInstancesExtern.cmake
# The README's program compiled as a program linking ragpp::compiled compiles (RAGPP_COMPILED):
# BM25Index<EnglishAnalyzer>, VectorIndex<HashingEmbedder> and their Retriever are
# instantiated in the library (src/instances.cpp) and declared extern template in their
# headers, so the program's object defines none of their members (their implicit
# destructors aside) and none of the kernels they call (ragpp::detail). A long member
# defined inside its class again (GCC instantiates it to consider inlining it) fails here,
# naming the symbol (docs/getting-started.md, "Build time").
execute_process(COMMAND ${NM} -C --defined-only ${OBJECT} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${OBJECT}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_bad "")
set(_classes "ragpp::(BM25Index<ragpp::EnglishAnalyzer>|VectorIndex<ragpp::HashingEmbedder, ragpp::Flat>|Retriever<ragpp::BM25Index<ragpp::EnglishAnalyzer>, ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Flat> >)::")
set(_functions 0)
foreach(_l IN LISTS _lines)
  if(NOT _l MATCHES " [TtWw] ")
    continue()
  endif()
  math(EXPR _functions "${_functions} + 1")
  if(_l MATCHES "${_classes}" AND NOT _l MATCHES "${_classes}~")
    string(APPEND _bad "  ${_l}\n")
  elseif(_l MATCHES " ragpp::detail::")
    string(APPEND _bad "  ${_l}\n")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "the program compiled code that ragpp::compiled holds:\n${_bad}")
endif()
if(_functions EQUAL 0)
  message(FATAL_ERROR "no function defined in ${OBJECT}: not the object of a program")
endif()
message(STATUS "${_functions} functions defined, none of the library's instances")
