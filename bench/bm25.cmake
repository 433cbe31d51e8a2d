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
  message(STATUS "bench_bm25_scifact: libxapian not found, Xapian side skipped")
endif()

add_executable(bench_bm25_quality ${CMAKE_CURRENT_LIST_DIR}/bm25_quality.cpp)
target_link_libraries(bench_bm25_quality PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_quality)

add_executable(bench_bm25_synthetic ${CMAKE_CURRENT_LIST_DIR}/bm25_synthetic.cpp)
target_link_libraries(bench_bm25_synthetic PRIVATE ragpp::ragpp)
ragpp_target_options(bench_bm25_synthetic)
