# cmake -DPROGRAM=ragpp -DDIR=work-folder -P check_scenario.cmake
# ragpp check and the opening of an index folder, with the real tool:
#  1. a fresh index passes `ragpp check` (exit 0, "intact");
#  2. two re-indexings of a changed corpus (each a new generation, the first one then
#     removed): search answers from the new one, check passes;
#  3. one byte of a chunk's text changed in place in documents.bin (same size): search
#     still opens it (sizes and structure only), check exits 1 naming documents.bin;
#  4. documents.bin truncated: search refuses it naming documents.bin;
#  5. ragpp index over the damaged folder rebuilds it (verified open: a note), check passes;
#  6. the same for places.bin (a byte changed: check) and metadata.bin (truncated: search).
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/notes)
function(note name text)
  file(WRITE ${DIR}/notes/${name} "# ${name}\n\n## Body\n\n${text}\n")
endfunction()
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)

note(a.md "The router reset takes five seconds.")
note(b.md "The printer warranty lasts two years.")
note(c.md "Backups run every night at two.")
run(0 o index ${DIR}/notes --out ${DIR}/idx --quiet)
run(0 o check ${DIR}/idx)
expect("${o}" "generation 1 is intact: 3 chunks from 3 sources" "check of a fresh index")

foreach(round 1 2)
  note(a.md "The router reset takes round${round} seconds.")
  run(0 o index ${DIR}/notes --out ${DIR}/idx --quiet)
endforeach()
if(EXISTS ${DIR}/idx/gen-000001)
  message(FATAL_ERROR "generation 1 should be removed after two commits")
endif()
run(0 o search ${DIR}/idx --k 1 "router reset")
expect("${o}" "round2 seconds" "search after two re-indexings")
run(0 o check ${DIR}/idx)
expect("${o}" "generation 3 is intact" "check after two re-indexings")

set(docs ${DIR}/idx/gen-000003/documents.bin)
file(READ ${docs} hex HEX)
string(FIND "${hex}" "7072696e746572" at)  # "printer", in a chunk's text
if(at LESS 0)
  message(FATAL_ERROR "no 'printer' in ${docs}")
endif()
math(EXPR offset "${at} / 2")
execute_process(COMMAND sh -c "printf q | dd of='${docs}' bs=1 seek=${offset} conv=notrunc status=none"
                RESULT_VARIABLE rc)  # 'p' -> 'q', in place, same size
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot change a byte of ${docs}")
endif()
run(0 o search ${DIR}/idx --k 1 "warranty two years")
run(1 o check ${DIR}/idx)
expect("${o}" "documents.bin.*checksum" "check of a damaged documents.bin")

execute_process(COMMAND truncate -s 100 ${docs})
run(1 o search ${DIR}/idx "printer")
expect("${o}" "documents.bin" "search of a truncated documents.bin")

run(0 o index ${DIR}/notes --out ${DIR}/idx --quiet)
expect("${o}" "cannot be updated.*rebuilding it" "index over a damaged folder")
run(0 o check ${DIR}/idx)
expect("${o}" "generation 4 is intact: 3 chunks from 3 sources" "check after the rebuild")

# 6. the parts opened in place (index version 4): a byte of places.bin changed in place is
#    found by check (naming the part); a truncated metadata.bin is refused by search.
set(places ${DIR}/idx/gen-000004/places.bin)
file(SIZE ${places} places_size)
math(EXPR offset "${places_size} - 1")
execute_process(COMMAND sh -c "printf '\\377' | dd of='${places}' bs=1 seek=${offset} conv=notrunc status=none"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot change a byte of ${places}")
endif()
run(1 o check ${DIR}/idx)
expect("${o}" "places.bin" "check of a damaged places.bin")
execute_process(COMMAND truncate -s 50 ${DIR}/idx/gen-000004/metadata.bin)
run(1 o search ${DIR}/idx "printer")
expect("${o}" "metadata.bin" "search of a truncated metadata.bin")
run(0 o index ${DIR}/notes --out ${DIR}/idx --quiet)
expect("${o}" "cannot be updated.*rebuilding it" "index over a damaged places.bin")
run(0 o check ${DIR}/idx)
expect("${o}" "generation 5 is intact: 3 chunks from 3 sources" "check after the second rebuild")
message(STATUS "check scenario: all steps passed")
