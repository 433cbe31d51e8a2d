# Loud when the world moved: an index whose corpus folder was moved away. search and ask
# exit 1 naming the missing corpus root (they would otherwise find every source deleted
# and answer nothing), check exits 1 although every byte is intact, and
# --check-sources off still answers from the index. The real binary, exit codes checked.
# -DPROGRAM=ragpp -DDATA=testdata/corpus -DWORK=scratch folder
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${DATA}/ DESTINATION ${WORK}/corpus)
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
step(0 "indexed" index ${WORK}/corpus --out ${WORK}/idx)
step(0 "ORA-01555" search ${WORK}/idx ORA-01555)
file(RENAME ${WORK}/corpus ${WORK}/moved)
set(_msg "corpus root '[^']*corpus' not found: every source looks deleted; re-index")
step(1 "${_msg}" search ${WORK}/idx ORA-01555)
step(1 "${_msg}" ask ${WORK}/idx ORA-01555)
step(1 "generation 1 is intact, but its corpus root '[^']*corpus' is not found" check ${WORK}/idx)
step(0 "database.rst:4" search ${WORK}/idx --check-sources off ORA-01555)
# Back in place: all is well again.
file(RENAME ${WORK}/moved ${WORK}/corpus)
step(0 "is intact" check ${WORK}/idx)
message("moved corpus: search, ask and check say so")
