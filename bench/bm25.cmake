# BM25 benchmarks (one JSON line per configuration):
#   bench_bm25_scifact    SciFact build time, QPS top-10/top-100 (analysis excluded and
#                         included), nDCG@10 and recall@100; Xapian side by side when
#                         libxapian is installed.
#   bench_bm25_quality    nDCG@10 on SciFact, Cranfield (english), PIAF (french) and
#                         JaQuAD (cjk).
#   bench_bm25_synthetic  1,000,000 Zipfian documents: build time, bytes per posting,
#                         p50/p99 top-10 latency, exhaustive and MaxScore.
add_executable(bench_bm25_scifact ${CMAKE_CURRENT_LIST_DIR}/bm25_scifact.cpp)
target_link_libraries(bench_bm25_scifact PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_scifact)

find_library(RAGPP_XAPIAN_LIBRARY xapian)
find_path(RAGPP_XAPIAN_INCLUDE_DIR xapian.h)
if(RAGPP_XAPIAN_LIBRARY AND RAGPP_XAPIAN_INCLUDE_DIR)
  target_compile_definitions(bench_bm25_scifact PRIVATE RAGPP_BENCH_XAPIAN=1)
  target_include_directories(bench_bm25_scifact SYSTEM PRIVATE ${RAGPP_XAPIAN_INCLUDE_DIR})
  target_link_libraries(bench_bm25_scifact PRIVATE ${RAGPP_XAPIAN_LIBRARY})
else()
  message(VERBOSE "bench_bm25_scifact: libxapian not found, Xapian side skipped")
endif()

add_executable(bench_bm25_quality ${CMAKE_CURRENT_LIST_DIR}/bm25_quality.cpp)
target_link_libraries(bench_bm25_quality PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_quality)

add_executable(bench_bm25_synthetic ${CMAKE_CURRENT_LIST_DIR}/bm25_synthetic.cpp)
target_link_libraries(bench_bm25_synthetic PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_synthetic)

# Today's uncompressed postings side by side: the BM25 headers of format 3
# (commit 3829e73, 8-byte postings and a forward index) taken from git history at
# configure time, renamed into ragpp::detail::bm25_v3 and ragpp::BM25IndexV3 so both
# builds live in one program. Skipped with a message when the history is absent.
set(RAGPP_BM25_V3_COMMIT 3829e73)
set(_v3_dir ${CMAKE_CURRENT_BINARY_DIR}/bm25_v3)
set(_v3_files index/bm25.hpp index/detail/bm25_accumulate.hpp index/detail/bm25_exhaustive.hpp
    index/detail/bm25_file.hpp index/detail/bm25_maxscore.hpp index/detail/bm25_plan.hpp
    index/detail/bm25_postings.hpp)
find_package(Git QUIET)
set(_v3_ok ${GIT_FOUND})
foreach(_f IN LISTS _v3_files)
  if(_v3_ok)
    execute_process(COMMAND ${GIT_EXECUTABLE} show ${RAGPP_BM25_V3_COMMIT}:include/ragpp/${_f}
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _text RESULT_VARIABLE _rc ERROR_QUIET)
    if(NOT _rc EQUAL 0)
      set(_v3_ok FALSE)
    else()
      string(REGEX REPLACE "bm25::" "bm25_v3::" _text "${_text}")
      string(REPLACE "namespace ragpp::detail::bm25 {" "namespace ragpp::detail::bm25_v3 {" _text "${_text}")
      string(REPLACE "}  // namespace ragpp::detail::bm25\n" "}  // namespace ragpp::detail::bm25_v3\n" _text "${_text}")
      string(REPLACE "BM25Index" "BM25IndexV3" _text "${_text}")
      # Its per-query BM25 knobs were SearchOptions' then; they are BM25SearchOptions' now.
      string(REGEX REPLACE "([^A-Za-z0-9_:])SearchOptions([^A-Za-z0-9_])" "\\1BM25SearchOptions\\2" _text "${_text}")
      string(REPLACE "#include <ragpp/core/types.hpp>" "#include <ragpp/core/types.hpp>\n#include <ragpp/index/options.hpp>"
             _text "${_text}")
      string(REGEX REPLACE "#include <ragpp/index/detail/(bm25_[a-z]+\\.hpp)>" "#include \"bm25_v3/index/detail/\\1\""
             _text "${_text}")
      file(WRITE ${_v3_dir}/${_f}.new "${_text}")
      configure_file(${_v3_dir}/${_f}.new ${_v3_dir}/${_f} COPYONLY)  # rewritten only when it differs
    endif()
  endif()
endforeach()
if(_v3_ok)
  target_compile_definitions(bench_bm25_synthetic PRIVATE RAGPP_BENCH_BM25_V3=1)
  target_include_directories(bench_bm25_synthetic PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
else()
  message(VERBOSE "bench_bm25_synthetic: git history (commit ${RAGPP_BM25_V3_COMMIT}) not found, "
                 "the uncompressed format-3 side is skipped")
endif()

# bench_bm25_access: search as a reader with its own statistics (non-interference)
# against --as-all and against the reader with the whole index's statistics.
add_executable(bench_bm25_access ${CMAKE_CURRENT_LIST_DIR}/bm25_access.cpp)
target_link_libraries(bench_bm25_access PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_access)
