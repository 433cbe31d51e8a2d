# bench_concurrent: searches with and without a concurrent writer (Concurrent<T>, beside
# a std::shared_mutex), on 1 and 2 reader threads, and the cost of a write through
# Concurrent (applied to both copies) against add_document alone. One JSON line per
# configuration (docs/concurrency.md, docs/benchmarks.md).
add_executable(bench_concurrent ${CMAKE_CURRENT_LIST_DIR}/bench_concurrent.cpp)
target_link_libraries(bench_concurrent PRIVATE ragpp::ragpp)
ragpp_target_options(bench_concurrent)
