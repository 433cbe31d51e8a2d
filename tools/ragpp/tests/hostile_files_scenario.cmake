# cmake -DPROGRAM=ragpp -DDIR=work-folder -P hostile_files_scenario.cmake (registered by hostile_files.cmake)
# Special files and file-size limits against the real tool. Every
# run is bounded by a timeout (a hang fails the test instead of blocking CI):
#  1. a FIFO as IDX/CURRENT and as generation.json, /dev/zero (a link) as CURRENT,
#     generation.json and an index part: check and search end with a FormatError naming
#     the file, index rebuilds over the damaged folder and check then passes;
#  2. a FIFO and a link to /dev/zero as corpus files: skipped with a note naming them;
#  3. ulimit -f 200 (RLIMIT_FSIZE): index ends with an IoError naming the file (not
#     SIGXFSZ), the previous generation kept, no partial folder left; a killed run's
#     gen-N.partial folder and CURRENT.tmp file are removed by the next run that starts,
#     even one that fails before it saves.
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
# run() with a time bound: a run past TIMEOUT seconds fails the test (the test's own
# bounds, BOUNDED, are tighter).
function(run_bounded expect_rc out_var)
  execute_process(COMMAND ${BOUNDED} ${PROGRAM} ${ARGN} TIMEOUT 20 RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc STREQUAL expect_rc)
    message(FATAL_ERROR "ragpp ${ARGN}: exit '${rc}', expected ${expect_rc}\n${o}\n${e}")
  endif()
  set(${out_var} "${o}${e}" PARENT_SCOPE)
endfunction()
function(sh)
  execute_process(COMMAND sh -c "${ARGN}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sh -c '${ARGN}' failed: ${rc}")
  endif()
endfunction()

set(C ${DIR}/corpus)
foreach(i 1 2 3)
  file(WRITE ${C}/n${i}.md "# Note ${i}\n\nSome text about apples ${i}.\n")
endforeach()
set(I0 ${DIR}/idx0)
run_bounded(0 out index ${C} --out ${I0})

# 1. Damaged index folders: CURRENT, generation.json, a part.
set(n 0)
foreach(case "fifo|CURRENT|a FIFO" "fifo|gen-000001/generation.json|a FIFO"
             "zero|CURRENT|a character device" "zero|gen-000001/generation.json|a character device"
             "zero|gen-000001/sources.bin|not a regular file" "zero|gen-000001/bm25.idx|not a regular file")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 kind)
  list(GET case 1 part)
  list(GET case 2 said)
  math(EXPR n "${n} + 1")
  set(I ${DIR}/idx${n})
  file(COPY ${I0}/ DESTINATION ${I})
  file(REMOVE ${I}/${part})
  if(kind STREQUAL "fifo")
    sh("mkfifo '${I}/${part}'")
  else()
    file(CREATE_LINK /dev/zero ${I}/${part} SYMBOLIC)
  endif()
  string(REGEX REPLACE "([.+])" "\\\\\\1" part_re "${part}")
  foreach(cmd check search)
    if(cmd STREQUAL "search")
      run_bounded(1 out search ${I} apples)
    else()
      run_bounded(1 out check ${I})
    endif()
    expect("${out}" "format_error\\][^\n]*${part_re}'[^\n]*${said}" "${cmd} over ${kind} as ${part}")
  endforeach()
  run_bounded(0 out index ${C} --out ${I})
  expect("${out}" "cannot be updated .*${part_re}.*rebuilding it" "index over ${kind} as ${part}")
  run_bounded(0 out check ${I})
  expect("${out}" "generation 2 is intact" "check after rebuilding over ${kind} as ${part}")
endforeach()

# 2. Special files in the corpus: skipped with a note, never read.
set(C2 ${DIR}/corpus2)
file(COPY ${C}/ DESTINATION ${C2})
sh("mkfifo '${C2}/fifo.md'")
file(CREATE_LINK /dev/zero ${C2}/zero.md SYMBOLIC)
run_bounded(0 out index ${C2} --out ${DIR}/idx-c2 --follow-symlinks)
expect("${out}" "skipped 'fifo.md': not a regular file \\(a FIFO\\)" "a FIFO in the corpus")
expect("${out}" "skipped 'zero.md': not a regular file \\(a character device\\)" "/dev/zero in the corpus")
expect("${out}" "indexed 3 chunks from 3 files" "the regular files of the corpus")

# 3. RLIMIT_FSIZE: 200 KiB, less than documents.bin of a 300 KB corpus.
set(B ${DIR}/big)
set(para "")
foreach(j RANGE 119)
  string(APPEND para "Paragraph ${j} talks about apples, pears and the item number ${j} of this note.\n\n")
endforeach()
foreach(i RANGE 39)
  file(WRITE ${B}/n${i}.md "# Note ${i}\n\n${para}")
endforeach()
set(BI ${DIR}/idx-big)
run_bounded(0 out index ${C} --out ${BI})
execute_process(COMMAND sh -c "ulimit -f 200; exec \"$@\"" sh ${BOUNDED} ${PROGRAM} index ${B} --out ${BI}
  TIMEOUT 20 RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "index under ulimit -f 200: exit '${rc}', expected 1 (an IoError, not SIGXFSZ)\n${o}\n${e}")
endif()
expect("${e}" "ragpp index: \\[ragpp.io_error\\] cannot write '[^']*gen-000002.partial/[^']+': File too large" "index under ulimit -f")
file(GLOB left ${BI}/*.partial ${BI}/CURRENT.tmp-*)
expect_not("${left}" "." "leftovers of the failed run")
run_bounded(0 out check ${BI})
expect("${out}" "generation 1 is intact: 3 chunks" "the previous generation after the failed run")
# A killed run's leftovers go with the next run that starts, even one that fails.
file(WRITE ${BI}/gen-000005.partial/bm25.idx "half written")
file(WRITE ${BI}/CURRENT.tmp-12345 "half written")
run_bounded(1 out index ${DIR}/no-such-corpus --out ${BI})
file(GLOB left ${BI}/*.partial ${BI}/CURRENT.tmp-*)
expect_not("${left}" "." "leftovers of a killed run after the next run started")
run_bounded(0 out check ${BI})
expect("${out}" "generation 1 is intact" "the generation after the leftovers were removed")
message(STATUS "hostile files: all steps passed")
