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
