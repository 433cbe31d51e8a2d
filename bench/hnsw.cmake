# HNSW benchmark (docs/hnsw.md): ragpp's VectorIndex<E, Hnsw> beside Debian's hnswlib
# (libhnswlib-dev, header-only: /usr/include/hnswlib) on GloVe 6B 100d; without hnswlib
# it runs ragpp alone. hnswlib picks its SIMD at compile time (USE_AVX / USE_AVX512 from
# the -m flags), ragpp at run time: RAGPP_BENCH_HNSW_ARCH (e.g. "native") compiles this
# benchmark with -march=<value>, so hnswlib gets the machine's vector width too.
set(RAGPP_BENCH_HNSW_ARCH "" CACHE STRING "-march value for bench_hnsw (empty: the default flags)")
add_executable(bench_hnsw ${CMAKE_CURRENT_LIST_DIR}/bench_hnsw.cpp)
target_link_libraries(bench_hnsw PRIVATE ragpp::ragpp)
ragpp_target_options(bench_hnsw)
find_path(RAGPP_HNSWLIB_INCLUDE_DIR hnswlib/hnswlib.h)
if(RAGPP_HNSWLIB_INCLUDE_DIR)
  message(VERBOSE "bench_hnsw: hnswlib found (${RAGPP_HNSWLIB_INCLUDE_DIR}), compared in the same run")
  target_include_directories(bench_hnsw SYSTEM PRIVATE ${RAGPP_HNSWLIB_INCLUDE_DIR})
else()
  message(VERBOSE "bench_hnsw: hnswlib not found, ragpp runs alone")
endif()
if(RAGPP_BENCH_HNSW_ARCH)
  target_compile_options(bench_hnsw PRIVATE -march=${RAGPP_BENCH_HNSW_ARCH})
endif()
