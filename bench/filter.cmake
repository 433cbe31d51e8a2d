# bench_filter: MetadataIndex over 1,000,000 documents: build time, memory, and the
# median time to compile filters (equality, range, access, a conjunction) to an
# allowed set, beside a brute-force scan with Filter::matches. One JSON line.
add_executable(bench_filter ${CMAKE_CURRENT_SOURCE_DIR}/bench_filter.cpp)
target_link_libraries(bench_filter PRIVATE ragpp::ragpp)
ragpp_target_options(bench_filter)
