# bench_save: peak RSS and time of VectorIndex::save with the streaming writer against
# the in-memory writer it replaced, on the same index in one run (docs/benchmarks.md).
add_executable(bench_save ${CMAKE_CURRENT_LIST_DIR}/bench_save.cpp)
target_link_libraries(bench_save PRIVATE ragpp::ragpp)
ragpp_target_options(bench_save)
