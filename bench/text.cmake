# Text analysis benchmark: analyzer throughput (MB/s, one core) on the shared
# collections, with Xapian's TermGenerator as a peer when installed; with the BM25
# index merged in, also the nDCG@10 of BM25 on SciFact for each english variant.
add_executable(bench_analyze ${CMAKE_CURRENT_SOURCE_DIR}/bench_analyze.cpp)
target_link_libraries(bench_analyze PRIVATE ragpp::ragpp)
ragpp_target_options(bench_analyze)
find_path(RAGPP_XAPIAN_INCLUDE_DIR xapian.h)
find_library(RAGPP_XAPIAN_LIBRARY xapian)
if(RAGPP_XAPIAN_INCLUDE_DIR AND RAGPP_XAPIAN_LIBRARY)
  target_include_directories(bench_analyze SYSTEM PRIVATE ${RAGPP_XAPIAN_INCLUDE_DIR})
  target_link_libraries(bench_analyze PRIVATE ${RAGPP_XAPIAN_LIBRARY})
  target_compile_definitions(bench_analyze PRIVATE RAGPP_BENCH_XAPIAN=1)
endif()
