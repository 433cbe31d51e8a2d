# Transformer encoder benchmark (embed/transformer.hpp): ragpp's float32 and int8
# forward pass on a MiniLM-L6-shaped model folder written by bench/torch_encoder_bench.py
# (branch neural-ref), which also prints torch's figures for the same passages.
add_executable(bench_transformer ${CMAKE_CURRENT_LIST_DIR}/bench_transformer.cpp)
target_link_libraries(bench_transformer PRIVATE ragpp::ragpp)
ragpp_target_options(bench_transformer)
