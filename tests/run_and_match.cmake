# cmake -DCOMMAND="prog|arg|arg" -DMATCH=regex [-DNO_MATCH=regex] [-DCLEAN=dir] -P run_and_match.cmake
# Removes CLEAN (when given), runs COMMAND ("|"-separated) and fails unless it exits with
# 0, its stdout + stderr match MATCH and, when NO_MATCH is given, do not match NO_MATCH.
if(DEFINED CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
string(REPLACE "|" ";" _command "${COMMAND}")
execute_process(COMMAND ${_command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "'${COMMAND}' exited with ${rc}\n${all}")
endif()
if(NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "the output of '${COMMAND}' does not match '${MATCH}':\n${all}")
endif()
if(DEFINED NO_MATCH AND all MATCHES "${NO_MATCH}")
  message(FATAL_ERROR "the output of '${COMMAND}' matches '${NO_MATCH}':\n${all}")
endif()
message(STATUS "'${COMMAND}': exit 0, output matches '${MATCH}'")
