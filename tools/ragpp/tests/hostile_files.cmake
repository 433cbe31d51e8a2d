# Tool tests of special files and file-size limits, included from
# cli.cmake: hostile_files_scenario.cmake runs the real binary, every run under a timeout.
# Bounds (ragpp_hostile_bounds in cli.cmake): each run at most 8.4 MB and 0.27 s in
# Release (ASan: 112 MB, 3.7 s); a FIFO read would hang until the time bound.
ragpp_hostile_bounds(_bounds 100 5)
add_test(NAME cli.hostile.files
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> -DDIR=${_eval_out}/hostile-files ${_bounds}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/hostile_files_scenario.cmake)
set_tests_properties(cli.hostile.files PROPERTIES PASS_REGULAR_EXPRESSION "hostile files: all steps passed" TIMEOUT 300)
