# bench_open: Engine::open of a large index folder (made from bench_open's synthetic
# corpus with `ragpp index`), read and checksummed, read, and mapped (the default),
# cold and warm page cache: open time, RSS after open and after 100 queries.
add_executable(bench_open ${CMAKE_CURRENT_SOURCE_DIR}/bench_open.cpp)
target_link_libraries(bench_open PRIVATE ragpp::compiled)
ragpp_target_options(bench_open)
