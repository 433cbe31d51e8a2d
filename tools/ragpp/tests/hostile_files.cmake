# Tool tests of issue 25's special files and file-size limits (F14, F1), included from
# cli.cmake: hostile_files_scenario.cmake runs the real binary, every run under a timeout.
add_test(NAME cli.hostile.files
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> -DDIR=${_eval_out}/hostile-files
    -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/hostile_files_scenario.cmake)
set_tests_properties(cli.hostile.files PROPERTIES PASS_REGULAR_EXPRESSION "hostile files: all steps passed" TIMEOUT 300)
