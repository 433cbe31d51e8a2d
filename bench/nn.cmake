# Transformer kernels (detail/nn.hpp): GFLOP/s of the fp32 and int8 linear layers on
# the MiniLM-L6 shapes, attention products, the core's FMA peak, and OpenBLAS's sgemm
# on the same shapes in the same run when its library is found (Debian's libopenblas0
# ships only libopenblas.so.0; the bench declares the two functions it calls).
add_executable(bench_nn ${CMAKE_CURRENT_LIST_DIR}/bench_nn.cpp)
target_link_libraries(bench_nn PRIVATE ragpp::ragpp)
ragpp_target_options(bench_nn)
find_library(RAGPP_NN_OPENBLAS_LIBRARY NAMES openblas libopenblas.so.0)
if(RAGPP_NN_OPENBLAS_LIBRARY)
  message(VERBOSE "bench_nn: OpenBLAS found (${RAGPP_NN_OPENBLAS_LIBRARY}), sgemm compared in the same run")
  target_compile_definitions(bench_nn PRIVATE RAGPP_BENCH_OPENBLAS=1)
  target_link_libraries(bench_nn PRIVATE ${RAGPP_NN_OPENBLAS_LIBRARY})
else()
  message(VERBOSE "bench_nn: OpenBLAS not found, its sgemm figures are skipped")
endif()
