# cmake -DPROGRAM=... -DEXPECTED=... -P CompareOutput.cmake
# Runs PROGRAM and fails unless its standard output equals the file EXPECTED.
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
file(READ ${EXPECTED} expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "output of ${PROGRAM} differs from ${EXPECTED}\n--- got ---\n${out}\n--- expected ---\n${expected}")
endif()
message(STATUS "output matches ${EXPECTED}")
