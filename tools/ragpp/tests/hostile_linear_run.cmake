# Hostile inputs in linear time through the real binary (question sets, filters): a
# filter of 64 levels is accepted alone and beside another --filter, the 65th level is
# refused quoting only what the user wrote; an or-chain of 30,000 conditions and a
# question set of 50,000 questions finish within a bound far above their linear cost
# (the old quadratic code took minutes); a JSONL metadata key repeated 40,000 times is
# refused within it. The exit codes are checked.
# -DPROGRAM=ragpp -DDATA=testdata -DIDX=an index of testdata/corpus -DWORK=scratch folder
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)
# timed(RC SECONDS OUT ARG...): run() that also fails past SECONDS.
function(timed rc seconds out_var)
  execute_process(COMMAND ${BOUNDED} ${PROGRAM} ${ARGN} RESULT_VARIABLE r OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT ${seconds})
  if(NOT r STREQUAL "${rc}")
    string(SUBSTRING "${o}${e}" 0 2000 shown)
    message(FATAL_ERROR "ragpp ${ARGV3} ...: '${r}', expected exit ${rc} within ${seconds} s\n${shown}")
  endif()
  set(${out_var} "${o}${e}" PARENT_SCOPE)
endfunction()

# 64 levels, as documented (max_filter_depth); the tool no longer wraps a --filter.
string(REPEAT "(" 64 open)
string(REPEAT ")" 64 close)
set(deep "${open}type=amendment${close}")
run(0 out search ${IDX} --filter "${deep}" "notice period")
expect("${out}" "1\\. contracts/amendment-2025.md:7" "search with a filter of 64 levels")
run(0 out search ${IDX} --filter "source?" --filter "${deep}" "notice period")
expect("${out}" "1\\. contracts/amendment-2025.md:7" "search with a second filter of 64 levels")
run(0 out ask ${IDX} --min-confidence 0 --filter "${deep}" "notice period")
expect("${out}" "amendment-2025.md" "ask with a filter of 64 levels")
# 65: refused as a usage error, quoting that filter as written, at its own column.
run(2 out search ${IDX} --filter "source?" --filter "(${deep})" "notice period")
expect("${out}" "filter '\\(\\(\\(\\(\\([(]*type=amendment[)]*': nested deeper than 64 levels at column 65"
       "a filter of 65 levels")
expect_not("${out}" "source\\?|\\) and \\(" "the error quotes only the filter at fault")

# An or-chain of 30,000 conditions (120 KB, one argument): about a second in all
# for the three parses of a search (the tool's check, the search, none for the hint);
# each took about 20 s when every new term moved the earlier ones.
string(REPEAT "a=1|" 29999 chain)
timed(0 20 out search ${IDX} --filter "${chain}type=amendment" "notice period")
expect("${out}" "1\\. contracts/amendment-2025.md:7" "search with an or-chain of 30,000 conditions")

# 50,000 questions, the last without 'relevant': the error names its line after
# reading them all (0.7 s; the line of each question was counted from the start of the
# file, about 70 s).
string(REPEAT "{\"question\": \"notice period\", \"relevant\": []},\n" 50000 questions)
file(WRITE ${WORK}/questions.json "[\n${questions}{\"question\": \"no labels\"}\n]\n")
timed(1 20 out eval ${DATA}/corpus ${WORK}/questions.json --mode bm25)
expect("${out}" "questions.json:50002: question 50001: field 'relevant' is missing" "a set of 50,000 questions")
# A JSONL document whose metadata repeats "groups" 40,000 times (640 KB in one line): refused
# naming the line and the key, after two linear parses of the line (0.09 s in all).
string(REPEAT ",\"groups\":[\"hr\"]" 39999 dup)
file(WRITE ${WORK}/dup.jsonl "{\"id\":\"ok\",\"text\":\"a public line\"}\n{\"id\":\"a\",\"text\":\"t\",\"metadata\":{\"groups\":[\"hr\"]${dup}}}\n")
timed(1 20 out index ${WORK}/dup.jsonl --out ${WORK}/idx-dup)
expect("${out}" "dup\\.jsonl:2: key 'groups' appears twice in one object" "a JSONL key repeated 40,000 times")
if(EXISTS ${WORK}/idx-dup/CURRENT)
  message(FATAL_ERROR "a JSONL key repeated 40,000 times: an index was written")
endif()
message("hostile linear: filters of 64 levels, an or-chain of 30,000, 50,000 questions, a key 40,000 times")
