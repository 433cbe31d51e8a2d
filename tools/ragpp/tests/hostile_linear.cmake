# Hostile inputs in linear time (question sets, filters, JSONL metadata), on the real binary
# (hostile_linear_run.cmake).
# Bounds (ragpp_hostile_bounds in cli.cmake): each run at most 40 MB and 0.64 s in Release
# (eval of 50,000 questions; ASan: 157 MB, 1.9 s).
ragpp_hostile_bounds(_bounds 400 10)
add_test(NAME cli.hostile.linear
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> -DDATA=${_eval_data} -DIDX=${_eval_out}/index ${_bounds}
    -DWORK=${_eval_out}/hostile-linear -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/hostile_linear_run.cmake)
set_tests_properties(cli.hostile.linear PROPERTIES FIXTURES_REQUIRED cli_small_index TIMEOUT 120
  PASS_REGULAR_EXPRESSION "hostile linear: filters of 64 levels")
