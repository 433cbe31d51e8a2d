# bench_scale: BM25 + 384-d int8 vectors (+ HNSW up to --hnsw-max) over a synthetic
# collection of --docs chunks: build time, peak RSS, size on disk, mapped open time,
# top-10 p50/p99 at 1 and 2 threads (docs/benchmarks.md "Scale").
add_executable(bench_scale ${CMAKE_CURRENT_LIST_DIR}/bench_scale.cpp)
target_link_libraries(bench_scale PRIVATE ragpp::ragpp)
ragpp_target_options(bench_scale)
