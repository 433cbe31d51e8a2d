# Issue 25 (F10, F11, F12): hostile inputs in linear time, on the real binary
# (hostile_linear_run.cmake).
add_test(NAME cli.hostile.linear
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> -DDATA=${_eval_data} -DIDX=${_eval_out}/index
    -DWORK=${_eval_out}/hostile-linear -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/hostile_linear_run.cmake)
set_tests_properties(cli.hostile.linear PROPERTIES FIXTURES_REQUIRED cli_small_index TIMEOUT 120
  PASS_REGULAR_EXPRESSION "hostile linear: filters of 64 levels")
