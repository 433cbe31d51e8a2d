# The steps of the tool's scenario scripts (check_scenario.cmake, walk_scenario.cmake):
# run(RC OUT ARG...) runs ${PROGRAM} ARG..., fails unless it exits RC, and puts its
# stdout then stderr in OUT; expect(TEXT REGEX WHAT) and expect_not(...) fail naming WHAT.
# -DBOUNDED=ragpp_bounded_run|--max-rss-mb|N|--max-seconds|S|-- (the hostile tests,
# ragpp_hostile_bounds in cli.cmake): every run goes through it, within those bounds.
string(REPLACE "|" ";" BOUNDED "${BOUNDED}")
function(run expect_rc out_var)
  execute_process(COMMAND ${BOUNDED} ${PROGRAM} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "ragpp ${ARGN}: exit ${rc}, expected ${expect_rc}\n${o}\n${e}")
  endif()
  set(${out_var} "${o}${e}" PARENT_SCOPE)
endfunction()
function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected /${regex}/ in:\n${text}")
  endif()
endfunction()
function(expect_not text regex what)
  if(text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: did not expect /${regex}/ in:\n${text}")
  endif()
endfunction()
# step(RC REGEX ARG...): ragpp ARG... exits RC and prints something matching REGEX.
function(step rc regex)
  run(${rc} _step_out ${ARGN})
  expect("${_step_out}" "${regex}" "ragpp ${ARGN}")
endfunction()
