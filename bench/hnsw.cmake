# HNSW benchmark (docs/hnsw.md): ragpp's VectorIndex<E, Hnsw> beside Debian's hnswlib
# (libhnswlib-dev, header-only: /usr/include/hnswlib) on GloVe 6B 100d; without hnswlib
# it runs ragpp alone. hnswlib picks its SIMD at compile time (USE_AVX / USE_AVX512 from
# the -m flags), so its users compile it for their CPU (its Python package builds with
# -march=native): bench/hnswlib_peer.cpp, the only file that includes it, is compiled
# with RAGPP_BENCH_HNSWLIB_FLAGS, and the benchmark prints them. ragpp's side keeps the
# project's flags and picks its kernels at run time.
set(RAGPP_BENCH_HNSWLIB_FLAGS "-O3 -march=native" CACHE STRING "flags of hnswlib's translation unit in bench_hnsw")
add_executable(bench_hnsw ${CMAKE_CURRENT_LIST_DIR}/bench_hnsw.cpp ${CMAKE_CURRENT_LIST_DIR}/hnswlib_peer.cpp)
target_link_libraries(bench_hnsw PRIVATE ragpp::ragpp)
ragpp_target_options(bench_hnsw)
find_path(RAGPP_HNSWLIB_INCLUDE_DIR hnswlib/hnswlib.h)
if(RAGPP_HNSWLIB_INCLUDE_DIR)
  message(VERBOSE "bench_hnsw: hnswlib found (${RAGPP_HNSWLIB_INCLUDE_DIR}), compared in the same run")
  target_include_directories(bench_hnsw SYSTEM PRIVATE ${RAGPP_HNSWLIB_INCLUDE_DIR})
  if(NOT RAGPP_BENCH_CHECK_ONLY)
    separate_arguments(_hnswlib_flags UNIX_COMMAND "${RAGPP_BENCH_HNSWLIB_FLAGS}")
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/hnswlib_peer.cpp PROPERTIES
      COMPILE_OPTIONS "${_hnswlib_flags}"
      COMPILE_DEFINITIONS "RAGPP_PEER_FLAGS=\"${RAGPP_BENCH_HNSWLIB_FLAGS}\"")
  endif()
else()
  message(VERBOSE "bench_hnsw: hnswlib not found, ragpp runs alone")
endif()
