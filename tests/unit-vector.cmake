# The vector index tests once more with the SIMD kernels capped at AVX2 and at scalar
# (RAGPP_SIMD), so every dispatch path of the index runs the brute-force oracles, not
# only the best one this CPU has; and capped at AVX-512 (the transformer kernels without
# AMX's tiles: the cap's own test checks that).
foreach(_isa scalar avx2 avx512)
  add_test(NAME "unit-vector: all cases with RAGPP_SIMD=${_isa}" COMMAND ${RAGPP_TEST_TARGET})
  set_tests_properties("unit-vector: all cases with RAGPP_SIMD=${_isa}" PROPERTIES ENVIRONMENT "RAGPP_SIMD=${_isa}")
endforeach()
