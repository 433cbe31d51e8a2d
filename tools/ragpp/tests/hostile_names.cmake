# Against the real binary: names are data, one option parser,
# access metadata that fails closed. Included from cli.cmake, it registers the test;
# run with cmake -DPROGRAM=ragpp -DWORK=folder -P hostile_names.cmake, it is the test:
#  1. a file and a folder whose names are not UTF-8 are left out with a warning naming
#     them escaped (a corpus whose own path is not UTF-8 is refused); a file whose name holds newlines and an ESC is indexed, and its name
#     is escaped in search's and ask's text output (it forges no result line), while
#     search --json and ask --json stay valid JSON;
#  2. every number option is decimal only (0x10, inf, " 1" refused), the same mistake
#     exits 2 in every command (--overlap 100001 in index, eval and chunk), an empty
#     --field-weights or --weights is refused, --out inside the corpus is refused;
#  3. JSONL documents whose access metadata is null, of a wrong type, a look-alike key, a
#     top-level groups or a duplicated key are errors naming the line; front matter
#     groups: null / true / ~ / "hr, admins" lock the note, and --as null is refused.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  # Bounds (ragpp_hostile_bounds in cli.cmake): each run at most 6.7 MB and 0.08 s in
  # Release (ASan: 101 MB, 0.84 s).
  ragpp_hostile_bounds(_bounds 100 5)
  add_test(NAME cli.hostile.names
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> -DWORK=${_eval_out}/hostile-names ${_bounds}
      -P ${CMAKE_CURRENT_LIST_DIR}/hostile_names.cmake)
  set_tests_properties(cli.hostile.names PROPERTIES PASS_REGULAR_EXPRESSION "hostile names: all steps passed"
                                                    TIMEOUT 120)
  return()
endif()

cmake_policy(SET CMP0007 NEW)  # lists keep empty items
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
file(REMOVE_RECURSE ${WORK})
set(C ${WORK}/corpus)
string(ASCII 255 ff)
string(ASCII 233 e9)
string(ASCII 27 esc)
set(router "# Router\n\nThe router password is rotated every month by the network team.\n")
file(WRITE ${C}/ok.md "${router}")
file(WRITE "${C}/bad${ff}name.md" "${router}")
file(WRITE "${C}/caf${e9}/inside.md" "${router}")
# A name that tries to forge a second result line and colour the terminal.
set(forged "evil\n 2. forged.md:1  fused 9.9999${esc}[31m.md")
file(WRITE "${C}/${forged}" "${router}")

# --- 1. names ----------------------------------------------------------------------------
run(0 out index ${C} --out ${WORK}/idx --quiet)
expect("${out}" "warning: skipped 'bad\\\\xffname\\.md': not valid UTF-8 \\(its name, byte 0xFF\\)" "0xFF file named, escaped")
expect("${out}" "warning: skipped 'caf\\\\xe9/': not valid UTF-8 \\(its name, byte 0xE9\\)" "Latin-1 folder named")
expect("${out}" "indexed 2 chunks from 2 files" "the two good files indexed")
expect_not("${out}" "${ff}|${e9}|${esc}" "no raw byte printed")

# A corpus folder whose own path is not UTF-8: refused before any work, naming it.
file(WRITE "${WORK}/corpus${ff}/ok.md" "${router}")
run(1 out index "${WORK}/corpus${ff}" --out ${WORK}/idx-ff)
expect("${out}" "corpus\\\\xff': its path '[^']*corpus\\\\xff' is not valid UTF-8, which an index cannot record" "root not UTF-8")
if(EXISTS ${WORK}/idx-ff/CURRENT)
  message(FATAL_ERROR "an index of a corpus whose path is not UTF-8 was written")
endif()

run(0 out search ${WORK}/idx "router password" --k 5)
expect("${out}" "evil\\\\n 2\\. forged\\.md:1  fused 9\\.9999\\\\x1b\\[31m\\.md" "the newline and ESC escaped")
expect_not("${out}" "\n 2\\. forged" "no forged result line")
expect_not("${out}" "${esc}" "no raw ESC")
# Result lines start a line: " 1. citation"; count them (not as a CMake list: a '[' in
# the output would join its items).
string(REGEX MATCHALL "\n *[0-9]+\\. " starts "\n${out}")
list(LENGTH starts n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "search: expected 2 result lines, got ${n}:\n${out}")
endif()

foreach(cmd search ask)
  execute_process(COMMAND ${BOUNDED} ${PROGRAM} ${cmd} ${WORK}/idx "router password" --json --as-all
                  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${cmd} --json: exit ${rc}\n${err}")
  endif()
  string(JSON kind ERROR_VARIABLE bad TYPE "${json}")
  if(bad OR NOT kind STREQUAL "OBJECT")
    message(FATAL_ERROR "${cmd} --json: not a JSON object (${bad}):\n${json}")
  endif()
  expect("${json}" "evil\\\\n 2\\. forged" "${cmd} --json holds the name, JSON-escaped")
endforeach()
run(0 out ask ${WORK}/idx "router password" --min-confidence 1)  # a refusal names the best passage
expect_not("${out}" "${esc}|\n 2\\. forged" "ask's refusal escapes the name")

# --- 2. options ----------------------------------------------------------------------------
# Decimal only, in every command that takes a number.
foreach(case "search;--k1;0x10" "search;--rrf-k;inf" "search;--b; 1" "ask;--min-confidence;0x1p-1"
             "index;--delta;0x10" "eval;--k1;1e")
  list(GET case 0 cmd)
  list(GET case 1 option)
  list(GET case 2 value)
  if(cmd STREQUAL "index")
    set(args index ${C} --out ${WORK}/never)
  elseif(cmd STREQUAL "eval")
    set(args eval ${C} ${WORK}/no-questions.json)
  else()
    set(args ${cmd} ${WORK}/idx router)
  endif()
  run(2 out ${args} ${option} ${value})
  expect("${out}" "ragpp ${cmd}: ${option}: '${value}' is not a number" "${cmd} ${option} ${value}")
endforeach()
run(0 out search ${WORK}/idx router --k1 1.2e0 --b .5 --rrf-k 60. --weights 1,0.5 --field-weights 3,1,1e0)
# The same mistake, the same exit status and message, whatever the command.
run(2 out index ${C} --out ${WORK}/never --overlap 100001)
expect("${out}" "ragpp index: [^\n]*chunking: overlap 100001 must be smaller than max_tokens 400 \\(see ragpp index --help\\)" "index --overlap")
run(2 out eval ${C} ${WORK}/no-questions.json --overlap 100001)
expect("${out}" "ragpp eval: [^\n]*chunking: overlap 100001 must be smaller than max_tokens 400 \\(see ragpp eval --help\\)" "eval --overlap")
run(2 out chunk ${C}/ok.md --overlap 100001)
expect("${out}" "ragpp chunk: [^\n]*chunking: overlap 100001 must be smaller than max_tokens 400 \\(see ragpp chunk --help\\)" "chunk --overlap")
run(2 out index ${C} --out ${WORK}/idx --overlap 500)  # an update: against the saved max_tokens
expect("${out}" "overlap 500 must be smaller than max_tokens 400" "index update --overlap")
# Empty lists and empty items.
foreach(case "search;--field-weights;" "ask;--field-weights;" "search;--field-weights;1,,1" "ask;--weights;1,")
  list(GET case 0 cmd)
  list(GET case 1 option)
  list(GET case 2 value)
  run(2 out ${cmd} ${WORK}/idx router "${option}=${value}")  # (an empty argument would vanish)
  expect("${out}" "ragpp ${cmd}: ${option}: '' is not a number >= 0" "${cmd} ${option} '${value}'")
endforeach()
run(2 out eval ${C} ${WORK}/no-questions.json --k=1,5,)
expect("${out}" "ragpp eval: --k: '' is not an integer" "eval --k 1,5,")
# An index folder inside its corpus.
run(2 out index ${C} --out ${C})
expect("${out}" "ragpp index: [^\n]*index folder '[^']*' is the corpus folder" "--out C")
run(2 out index ${C} --out ${C}/sub/idx)
expect("${out}" "is inside the corpus folder" "--out C/sub/idx")
run(2 out index ${C}/ --out ${C}/./.ragpp)
expect("${out}" "is inside the corpus folder" "--out C/./.ragpp")
if(EXISTS ${C}/sub OR EXISTS ${C}/.ragpp)
  message(FATAL_ERROR "a refused --out was written")
endif()

# --- 3. access metadata ----------------------------------------------------------------------
set(J ${WORK}/jsonl)
foreach(case
    "null-metadata|{\"id\":\"a\",\"text\":\"router\",\"metadata\":null}|field 'metadata' must be an object, not null"
    "null-groups|{\"id\":\"a\",\"text\":\"router\",\"metadata\":{\"groups\":null}}|metadata field 'groups' must be a group name or a list of them, not null"
    "bool-groups|{\"id\":\"a\",\"text\":\"router\",\"metadata\":{\"groups\":true}}|metadata field 'groups' must be a group name or a list of them, not boolean"
    "Groups|{\"id\":\"a\",\"text\":\"router\",\"metadata\":{\"Groups\":[\"hr\"]}}|metadata key 'Groups' looks like an access declaration"
    "top-groups|{\"id\":\"a\",\"text\":\"router\",\"groups\":[\"hr\"]}|field 'groups' looks like an access declaration outside 'metadata'"
    "twice|{\"id\":\"a\",\"text\":\"router\",\"metadata\":{\"groups\":[\"hr\"]},\"metadata\":{}}|key 'metadata' appears twice in one object"
    "comma|{\"id\":\"a\",\"text\":\"router\",\"metadata\":{\"groups\":\"hr, admins\"}}|metadata field 'groups' holds 'hr, admins', which is no group name: it holds a ','")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 line)
  list(GET case 2 message)
  file(WRITE ${J}/${name}.jsonl "{\"id\":\"ok\",\"text\":\"a public line\"}\n${line}\n")
  run(1 out index ${J}/${name}.jsonl --out ${WORK}/idx-${name})
  expect("${out}" "${name}\\.jsonl:2: ${message}" "JSONL ${name}")
  if(EXISTS ${WORK}/idx-${name}/CURRENT)
    message(FATAL_ERROR "JSONL ${name}: an index was written")
  endif()
endforeach()
file(WRITE ${J}/right.jsonl "{\"id\":\"hr\",\"text\":\"router\",\"metadata\":{\"groups\":[\"hr\"]}}\n")
run(0 out index ${J}/right.jsonl --out ${WORK}/idx-right)

set(F ${WORK}/front)
set(n 0)
foreach(value "null" "true" "~" "hr, admins" "[hr, 'null']" "yes")
  math(EXPR n "${n} + 1")
  file(WRITE ${F}/note${n}.md "---\ngroups: ${value}\n---\n# Secret ${n}\n\nThe codeword is zulu${n}.\n")
endforeach()
file(WRITE ${F}/public.md "# Public\n\nThe public codeword is open.\n")
run(0 out index ${F} --out ${WORK}/idx-front --quiet)
foreach(i RANGE 1 6)
  expect("${out}" "warning: 'note${i}\\.md' is readable by nobody but --as-all" "note${i} locked")
endforeach()
foreach(as "" "--as=hr,admins")
  run(0 out search ${WORK}/idx-front "codeword zulu1 zulu2 zulu3 zulu4 zulu5 zulu6" ${as})
  expect_not("${out}" "note[0-9]\\.md" "a locked note found with '${as}'")
endforeach()
run(0 out search ${WORK}/idx-front "codeword zulu1 zulu2 zulu3 zulu4 zulu5 zulu6" --as-all)
expect("${out}" "note1\\.md" "--as-all reads the locked notes")
foreach(as "true" "~" "hr,NULL")
  run(2 out search ${WORK}/idx-front codeword --as ${as})
  expect("${out}" "is no group name" "--as ${as}")
endforeach()

message("hostile names: all steps passed")
