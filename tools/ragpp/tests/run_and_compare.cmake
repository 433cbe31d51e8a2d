# cmake -DPROGRAM=... -DARGS="a|b|c" [-DEXPECTED=file] [-DEXPECT_RC=n] [-DEXPECT_STDERR=regex]
#       [-DPRINT=ON] -P run_and_compare.cmake
# Runs PROGRAM with ARGS ("|"-separated); fails unless the exit code is EXPECT_RC
# (default 0), stdout equals the file EXPECTED (when given) and stderr matches
# EXPECT_STDERR (when given). PRINT: stdout is printed, for the test's
# PASS_REGULAR_EXPRESSION.
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${_args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} exited with ${rc}, expected ${EXPECT_RC}\nstderr: ${err}")
endif()
if(DEFINED EXPECTED)
  file(READ ${EXPECTED} expected)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "output differs from ${EXPECTED}\n--- got ---\n${out}\n--- expected ---\n${expected}")
  endif()
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
if(PRINT)
  message("${out}")
endif()
