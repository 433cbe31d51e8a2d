# Non-interference, as a user meets it: for a reader, every output of the real binary is
# the same whether or not notes it may not read exist. Folder A holds DATA/public and
# DATA/hidden (notes for hr and admins, one in French: A's index is bilingual, so even
# what a query's words mean must be the reader's), folder B only DATA/public; each query of
# DATA/queries.txt is searched (text and --json, with and without a lexical reranker) and
# asked (--json --seed-nonce) on both
# indexes, without --as and with --as sales, and eval's rankings (--run-out), metrics
# table and per-question confidences are compared: byte for byte. As a check that the
# comparison can fail, --as-all outputs must differ for some query.
# -DPROGRAM=ragpp -DDATA=testdata/noninterference -DWORK=scratch folder [-DSTRIDE=n]
# STRIDE (default 1): only every n-th (query, reader, command) combination is compared;
# with n prime to 14 (2 readers x 7 commands) every reader and command form still runs,
# and with n <= 14 every query (the sanitizer builds use 9: each run is slow there).
if(NOT STRIDE)
  set(STRIDE 1)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/a ${WORK}/b)
file(COPY ${DATA}/public/ DESTINATION ${WORK}/a/notes)
file(COPY ${DATA}/hidden/ DESTINATION ${WORK}/a/notes)
file(COPY ${DATA}/public/ DESTINATION ${WORK}/b/notes)
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
foreach(side a b)
  run(0 _ index ${WORK}/${side}/notes --out ${WORK}/${side}/idx --quiet)
endforeach()
file(STRINGS ${DATA}/queries.txt queries)
set(compared 0)
set(differ_all 0)
set(combination -1)
foreach(q IN LISTS queries)
  foreach(reader "--as=nobody" "--as=sales")
    foreach(cmd "search|--k|5" "search|--json|--k|5" "search|--mode|hybrid|--json" "ask|--json|--seed-nonce"
                "ask|--seed-nonce" "search|--json|--rerank|proximity" "ask|--json|--seed-nonce|--rerank|softmatch")
      math(EXPR combination "${combination} + 1")
      math(EXPR skip "${combination} % ${STRIDE}")
      if(NOT skip EQUAL 0)
        continue()
      endif()
      string(REPLACE "|" ";" args "${cmd}")
      list(GET args 0 sub)
      list(REMOVE_AT args 0)
      run(0 oa ${sub} ${WORK}/a/idx ${reader} ${args} "${q}")
      run(0 ob ${sub} ${WORK}/b/idx ${reader} ${args} "${q}")
      # ask's evidence names the index folder (how to reopen a source): each side's own.
      string(REPLACE "${WORK}/a/idx" "IDX" oa "${oa}")
      string(REPLACE "${WORK}/b/idx" "IDX" ob "${ob}")
      if(NOT oa STREQUAL ob)
        message(FATAL_ERROR "'${sub} ${reader} ${args} ${q}' differs between the folders:\n--- with hidden notes ---\n${oa}\n--- without ---\n${ob}")
      endif()
      math(EXPR compared "${compared} + 1")
    endforeach()
  endforeach()
  # (--as-all may be refused on one side: "est" is a French stop word once a French note is read.)
  execute_process(COMMAND ${PROGRAM} search ${WORK}/a/idx --as-all --json "${q}"
                  RESULT_VARIABLE ra OUTPUT_VARIABLE oa ERROR_VARIABLE ea)
  execute_process(COMMAND ${PROGRAM} search ${WORK}/b/idx --as-all --json "${q}"
                  RESULT_VARIABLE rb OUTPUT_VARIABLE ob ERROR_VARIABLE eb)
  if(NOT "${ra}${oa}${ea}" STREQUAL "${rb}${ob}${eb}")
    math(EXPR differ_all "${differ_all} + 1")
  endif()
endforeach()
if(differ_all EQUAL 0)
  message(FATAL_ERROR "--as-all gave the same output on both folders for every query: the test compares nothing")
endif()
# eval: the same rankings and scores (TREC runs), metrics and confidences.
foreach(side a b)
  run(0 table_${side} eval ${WORK}/${side}/notes ${DATA}/questions.json --quiet --mode bm25 --mode hybrid --k 1,3
      --run-out ${WORK}/${side}/run- --json-out ${WORK}/${side}/eval.json)
  string(REGEX REPLACE "\nlatency.*" "" table_${side} "${table_${side}}")  # wall times differ
  file(READ ${WORK}/${side}/run-bm25.run run_bm25_${side})
  file(READ ${WORK}/${side}/run-hybrid.run run_hybrid_${side})
  file(READ ${WORK}/${side}/eval.json json_${side})
  set(conf_${side} "")
  foreach(i RANGE 4)
    string(JSON c GET "${json_${side}}" pipelines 0 questions ${i} confidence)
    string(APPEND conf_${side} "${c} ")
  endforeach()
endforeach()
foreach(what table run_bm25 run_hybrid conf)
  if(NOT ${what}_a STREQUAL ${what}_b)
    message(FATAL_ERROR "eval's ${what} differs between the folders:\n${${what}_a}\n---\n${${what}_b}")
  endif()
endforeach()
message("non-interference: ${compared} outputs identical with and without the hidden notes (--as-all differs for ${differ_all} queries); eval identical")
