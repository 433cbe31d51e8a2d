# Out of memory while indexing (Release builds only: a sanitizer's shadow memory does not
# fit under `ulimit -v`). A folder is indexed, then a file of SECTIONS identical sections
# is added and `ragpp index` runs under `ulimit -v LIMIT_KB`: it must end within the test's
# timeout (the failed batch is taken back in one pass per posting list; one removal at a
# time took minutes) with exit 1 and an OutOfMemoryError naming the file, and the previous
# generation must still answer and check intact.
# -DPROGRAM=ragpp -DWORK=scratch folder -DSECTIONS=N -DLIMIT_KB=K [-DBOUNDED=...]
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
file(WRITE ${WORK}/corpus/memo.md "# Memo\n\nLunch menu: pasta.\n")
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
step(0 "indexed 1 chunks" index ${WORK}/corpus --out ${WORK}/idx)
string(REPEAT "# Part\n\nshared words of every part\n\n" ${SECTIONS} _big)
file(WRITE ${WORK}/corpus/big.md "${_big}")
execute_process(COMMAND bash -c "ulimit -v ${LIMIT_KB} && exec \"$@\""
                        bash ${BOUNDED} ${PROGRAM} index ${WORK}/corpus --out ${WORK}/idx
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "ragpp index under ulimit -v ${LIMIT_KB}: exit ${rc}, expected 1\n${o}\n${e}")
endif()
expect("${e}" "out_of_memory\\] out of memory while indexing 'big.md' \\([0-9]+ bytes\\)" "the error names the file")
step(0 "memo.md:1" search ${WORK}/idx pasta)
step(0 "is intact" check ${WORK}/idx)
message("out of memory: the file named, the previous generation kept")
