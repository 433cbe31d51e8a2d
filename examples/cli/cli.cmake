# Extra tests of the ragpp tool (included by examples/CMakeLists.txt after the
# ragpp_cli target exists). Each subcommand keeps its tests in its own section.

# --- ragpp analyze (text analysis, issue 3) ------------------------------------------
add_test(NAME cli.analyze.help COMMAND ragpp_cli analyze --help)
set_tests_properties(cli.analyze.help PROPERTIES PASS_REGULAR_EXPRESSION "usage: ragpp analyze.*--analyzer NAME")
add_test(NAME cli.analyze.standard COMMAND ragpp_cli analyze "Contrat MX-200" "ÉTÉ")
set_tests_properties(cli.analyze.standard PROPERTIES PASS_REGULAR_EXPRESSION "^contrat\nmx\n200\nmx200\nete\n$")
add_test(NAME cli.analyze.english COMMAND ragpp_cli analyze --analyzer english "The ponies' relational caresses")
set_tests_properties(cli.analyze.english PROPERTIES PASS_REGULAR_EXPRESSION "^poni\nrelat\ncaress\n$")
add_test(NAME cli.analyze.french COMMAND ragpp_cli analyze --analyzer french "l’avenant" "préavis")
set_tests_properties(cli.analyze.french PROPERTIES PASS_REGULAR_EXPRESSION "^avenant\nlavenant\npreavi\n$")
add_test(NAME cli.analyze.cjk COMMAND ragpp_cli analyze --analyzer=cjk "東京都")
set_tests_properties(cli.analyze.cjk PROPERTIES PASS_REGULAR_EXPRESSION "^東京\n京都\n$")
add_test(NAME cli.analyze.unknown_analyzer COMMAND ragpp_cli analyze --analyzer klingon "text")
set_tests_properties(cli.analyze.unknown_analyzer PROPERTIES WILL_FAIL ON)
add_test(NAME cli.analyze.unknown_analyzer_message COMMAND ragpp_cli analyze --analyzer klingon "text")
set_tests_properties(cli.analyze.unknown_analyzer_message PROPERTIES
  PASS_REGULAR_EXPRESSION "analyzer 'klingon' is unknown \\(valid: standard, english, french, cjk\\)")
add_test(NAME cli.analyze.missing_text COMMAND ragpp_cli analyze)
set_tests_properties(cli.analyze.missing_text PROPERTIES WILL_FAIL ON)

# --- ragpp chunk -------------------------------------------------------------------
set(_chunk_data ${CMAKE_CURRENT_SOURCE_DIR}/cli/testdata)
set(_chunk_run ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_and_compare.cmake)
# Markdown and reStructuredText traps (front matter, # in fences, setext, tables split
# with their header repeated, CRLF, overline titles): the JSON lines checked in.
add_test(NAME cli.chunk.traps
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli>
    "-DARGS=chunk|--max-tokens|12|--overlap|3|traps.md|traps.rst"
    -DEXPECTED=${_chunk_data}/traps.expected.jsonl -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
# Defaults: one chunk per non-empty section.
add_test(NAME cli.chunk.defaults
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|traps.md"
    -DEXPECTED=${_chunk_data}/traps.defaults.jsonl -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
# Bad input: exit 1 with the file and line; bad options: exit 2.
add_test(NAME cli.chunk.bad_utf8
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|bad-utf8.txt" -DEXPECT_RC=1
    "-DEXPECT_STDERR=bad-utf8.txt:1: invalid UTF-8 \\(byte 0xFF at column 5\\)" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
add_test(NAME cli.chunk.missing_file
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|no-such-file.md" -DEXPECT_RC=1
    "-DEXPECT_STDERR=cannot open 'no-such-file.md'" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
add_test(NAME cli.chunk.directory
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|." -DEXPECT_RC=1
    "-DEXPECT_STDERR='.' is a directory" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
add_test(NAME cli.chunk.bad_overlap
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|--max-tokens|10|--overlap|10|traps.md"
    -DEXPECT_RC=2 "-DEXPECT_STDERR=overlap 10 must be smaller than max_tokens 10" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
add_test(NAME cli.chunk.zero_tokens
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|--max-tokens|0|traps.md"
    -DEXPECT_RC=2 "-DEXPECT_STDERR=max_tokens is 0" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
# --- end ragpp chunk ---------------------------------------------------------------

# --- ragpp index / search / eval (the evaluation issue) -------------------------------
set(_eval_data ${CMAKE_CURRENT_SOURCE_DIR}/cli/testdata)
set(_eval_out ${CMAKE_CURRENT_BINARY_DIR}/cli-eval)
add_test(NAME cli.index.small
  COMMAND ragpp_cli index ${_eval_data}/corpus --out ${_eval_out}/index --quiet)
set_tests_properties(cli.index.small PROPERTIES FIXTURES_SETUP cli_small_index
  PASS_REGULAR_EXPRESSION "indexed 5 documents")
# The exact identifier: BM25 ranks the ORA-01555 section first, and the trace shows it.
add_test(NAME cli.search.identifier COMMAND ragpp_cli search ${_eval_out}/index --k 1 ORA-01555)
set_tests_properties(cli.search.identifier PROPERTIES FIXTURES_REQUIRED cli_small_index
  PASS_REGULAR_EXPRESSION "1\\. database.rst:4  Database errors > ORA-01555\n    fused [0-9.]+   bm25 #1")
add_test(NAME cli.search.json COMMAND ragpp_cli search ${_eval_out}/index --json --mode bm25 --k 2 "notice period MX200")
set_tests_properties(cli.search.json PROPERTIES FIXTURES_REQUIRED cli_small_index
  PASS_REGULAR_EXPRESSION "\"citation\": \"contracts/(mx200|amendment-2025).md:[37]")
# A filter applied before search: only the amendment (type = amendment) can come back.
add_test(NAME cli.search.filter COMMAND ragpp_cli search ${_eval_out}/index --filter type=amendment "notice period")
set_tests_properties(cli.search.filter PROPERTIES FIXTURES_REQUIRED cli_small_index
  PASS_REGULAR_EXPRESSION "1\\. contracts/amendment-2025.md:7" FAIL_REGULAR_EXPRESSION "mx200.md")
add_test(NAME cli.search.missing_index COMMAND ragpp_cli search ${_eval_out}/no-such-index "x")
set_tests_properties(cli.search.missing_index PROPERTIES PASS_REGULAR_EXPRESSION "cannot open '.*no-such-index/manifest.json'")
add_test(NAME cli.eval.small
  COMMAND ragpp_cli eval ${_eval_data}/corpus ${_eval_data}/questions.json --k 1,3 --passages 1
    --json ${_eval_out}/eval.json --svg ${_eval_out}/recall.svg --run-dir ${_eval_out}/runs)
set_tests_properties(cli.eval.small PROPERTIES PASS_REGULAR_EXPRESSION
  "bm25        1    1.0000  0.8333.*\\(3 answerable questions averaged; 1 without any relevant passage counted apart\\).*none +n/a +n/a +n/a")
add_test(NAME cli.eval.bad_questions COMMAND ragpp_cli eval ${_eval_data}/corpus ${_eval_data}/bad-questions.json)
set_tests_properties(cli.eval.bad_questions PROPERTIES
  PASS_REGULAR_EXPRESSION "bad-questions.json:3: question 2: field 'relevant' is missing")
add_test(NAME cli.eval.bad_mode COMMAND ragpp_cli eval ${_eval_data}/corpus ${_eval_data}/questions.json --mode bm26)
set_tests_properties(cli.eval.bad_mode PROPERTIES PASS_REGULAR_EXPRESSION "--mode 'bm26' is not bm25, vector or hybrid")
# --- end ragpp index / search / eval ---------------------------------------------------
