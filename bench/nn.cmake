# Transformer kernels (detail/nn.hpp): GFLOP/s of the fp32 and int8 linear layers on
# the MiniLM-L6 shapes, attention products, the core's FMA peak.
add_executable(bench_nn ${CMAKE_CURRENT_LIST_DIR}/bench_nn.cpp)
target_link_libraries(bench_nn PRIVATE ragpp::ragpp)
ragpp_target_options(bench_nn)
