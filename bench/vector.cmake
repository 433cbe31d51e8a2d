# Vector search benchmarks (see docs/benchmarks-vector.md).
#   bench_vector          flat search over synthetic vectors: float32 / int8 / float16
#                         against the memory's sequential read speed and FAISS IndexFlatIP
#   bench_vector_store    bytes per vector and recall@10 of float16 / int8 (GloVe), open
#                         time and RSS of a mapped index (bench_vector_store.cpp)
#   bench_vector_scifact  nDCG@10 on SciFact with word vectors (GloVe from
#                         bench/glove_from_npm.sh) and the hashing embedder
add_executable(bench_vector ${CMAKE_CURRENT_LIST_DIR}/bench_vector.cpp)
target_link_libraries(bench_vector PRIVATE ragpp::ragpp)
ragpp_target_options(bench_vector)

# FAISS (Debian's libfaiss-dev: a static library that needs OpenMP and a BLAS).
find_path(RAGPP_FAISS_INCLUDE_DIR faiss/IndexFlat.h)
find_library(RAGPP_FAISS_LIBRARY NAMES faiss)
find_library(RAGPP_OPENBLAS_LIBRARY NAMES openblas)
find_package(OpenMP COMPONENTS CXX QUIET)
if(RAGPP_FAISS_INCLUDE_DIR AND RAGPP_FAISS_LIBRARY AND RAGPP_OPENBLAS_LIBRARY AND OpenMP_CXX_FOUND)
  message(VERBOSE "bench_vector: FAISS found (${RAGPP_FAISS_LIBRARY}), compared in the same run")
  target_compile_definitions(bench_vector PRIVATE RAGPP_BENCH_FAISS=1)
  target_include_directories(bench_vector SYSTEM PRIVATE ${RAGPP_FAISS_INCLUDE_DIR})
  target_link_libraries(bench_vector PRIVATE ${RAGPP_FAISS_LIBRARY} ${RAGPP_OPENBLAS_LIBRARY} OpenMP::OpenMP_CXX)
else()
  message(VERBOSE "bench_vector: FAISS not found, its figures are skipped")
endif()

if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/bench_vector_scifact.cpp)
  add_executable(bench_vector_scifact ${CMAKE_CURRENT_LIST_DIR}/bench_vector_scifact.cpp)
  target_link_libraries(bench_vector_scifact PRIVATE ragpp::ragpp)
  ragpp_target_options(bench_vector_scifact)
endif()

# Quantized storage (bytes per vector, recall on GloVe) and mapped open (open time, RSS).
add_executable(bench_vector_store ${CMAKE_CURRENT_LIST_DIR}/bench_vector_store.cpp)
target_link_libraries(bench_vector_store PRIVATE ragpp::ragpp)
ragpp_target_options(bench_vector_store)
