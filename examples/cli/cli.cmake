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
add_test(NAME cli.chunk.bad_overlap
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|--max-tokens|10|--overlap|10|traps.md"
    -DEXPECT_RC=2 "-DEXPECT_STDERR=overlap 10 must be smaller than max_tokens 10" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
add_test(NAME cli.chunk.zero_tokens
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:ragpp_cli> "-DARGS=chunk|--max-tokens|0|traps.md"
    -DEXPECT_RC=2 "-DEXPECT_STDERR=max_tokens is 0" -P ${_chunk_run}
  WORKING_DIRECTORY ${_chunk_data})
# --- end ragpp chunk ---------------------------------------------------------------
