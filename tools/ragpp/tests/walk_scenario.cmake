# cmake -DPROGRAM=ragpp -DDATA=testdata -DDIR=work-folder -P walk_scenario.cmake
# A company-wiki folder as a new user has it, indexed with the real tool:
#  1. the walk leaves out .trash/, .obsidian/, .git/, what .gitignore and .ragppignore
#     exclude, a binary file (a note) and a file not UTF-8 (a warning), and sums it up;
#     --verbose lists each; nothing of them is ever found;
#  2. each declaration slip (group:, Groups:, access:, an unterminated list, an unclosed
#     fence) locks its note: a warning names the file and the key, the run goes on; the
#     note is found by no search without --as, nor --as hr, only by --as-all; TOML front
#     matter, a BOM and a blank line before the fence are read (found by --as hr only);
#  3. --hidden and --no-ignore walk what they name, and are recorded: an update without
#     them walks as before (nothing removed), one with another walk flag walks as told,
#     --rebuild from the defaults; a file that becomes ignored leaves the index on the next
#     ragpp index;
#  4. --unlabelled private: a note without groups is for --as-all only, and is recorded
#     in the index (an update keeps it, another value rebuilds).
file(REMOVE_RECURSE ${DIR})
set(W ${DIR}/wiki)
string(ASCII 239 187 191 bom)
string(ASCII 233 e9)
function(note name text)
  file(WRITE ${W}/${name} "${text}")
endfunction()
note(pricing.md "# Pricing\n\nThe current price is 10 euros a seat.\n")
note(fr/conges.md "# Congés\n\nLes congés payés durent vingt-cinq jours ouvrés.\n")
note(zh/meeting.md "# 会议\n\n每周一上午开会。\n")
note(hr.md "---\ngroups: [hr]\n---\n# Salaries\n\nThe salary grid codeword is juliet.\n")
note(.trash/old.md "# Old pricing\n\nThe old secret price was 99 euros.\n")
note(.obsidian/workspace.md "secret price in the workspace\n")
note(.git/notes.md "secret price in git\n")
note(.hidden.md "secret price hidden\n")
note(.gitignore "drafts/\n*.bak.md\n")
note(drafts/plan.md "secret price draft\n")
note(notes.bak.md "secret price backup\n")
note(team/.ragppignore "private.md\n")
note(team/private.md "secret price of the team\n")
note(team/public.md "# Team\n\nThe team meets on Mondays.\n")
note(latin1.md "# Caf${e9}\n\nThe secret price in Latin-1.\n")
file(COPY ${DATA}/nul-byte.md DESTINATION ${W})
# Declaration slips, each with its own codeword.
note(slip-group.md "---\ngroup: [hr]\n---\n# Bonus\n\nThe bonus codeword is alpha.\n")
note(slip-Groups.md "---\nGroups: [hr]\n---\n# Bonus\n\nThe bonus codeword is bravo.\n")
note(slip-access.md "---\naccess: [hr]\n---\n# Bonus\n\nThe bonus codeword is charlie.\n")
note(slip-list.md "---\ngroups: [hr\n---\n# Bonus\n\nThe bonus codeword is foxtrot.\n")
note(slip-fence.md "---\ngroups: [hr]\n\n# Bonus\n\nThe bonus codeword is golf.\n")
# Right declarations in other spellings.
note(toml.md "+++\ntitle = \"Pay\"\ngroups = [\"hr\"]\n+++\n# Bonus\n\nThe bonus codeword is delta.\n")
note(blank.md "\n---\ngroups: [hr]\n---\n# Bonus\n\nThe bonus codeword is echo.\n")
note(bom.md "${bom}---\ngroups: [hr]\n---\n# Bonus\n\nThe bonus codeword is hotel.\n")

include(${CMAKE_CURRENT_LIST_DIR}/scenario_steps.cmake)

# 1. The walk.
run(0 o index ${W} --out ${DIR}/idx --quiet)
expect("${o}" "note: skipped 'nul-byte.md': binary" "binary note")
expect("${o}" "warning: skipped 'latin1.md': not valid UTF-8 \\(line 1, byte 0xE9\\)" "not UTF-8 warning")
expect("${o}" "note: skipped: 4 hidden, 3 ignored, 1 binary, 1 not UTF-8 \\(--verbose lists them\\)" "summary")
expect("${o}" "indexed 14 chunks from 13 files" "files indexed")  # slip-fence.md: 2 chunks
expect_not("${o}" "skipped '\\.trash/' \\(hidden\\)" "no list without --verbose")
run(0 o search ${DIR}/idx --as-all --k 20 "secret price")
foreach(hidden "\\.trash" "\\.obsidian" "\\.git/" "\\.hidden" "drafts" "bak" "team/private" "latin1" "nul-byte")
  expect_not("${o}" "${hidden}" "search for the hidden, ignored, binary or not UTF-8 ${hidden}")
endforeach()
expect("${o}" "pricing.md" "the public price is found")
run(0 o index ${W} --out ${DIR}/idx-verbose --quiet --verbose)
foreach(line "skipped '\\.trash/' \\(hidden\\)" "skipped '\\.obsidian/' \\(hidden\\)" "skipped '\\.git/' \\(hidden\\)"
             "skipped '\\.hidden\\.md' \\(hidden\\)" "skipped 'drafts/' \\(ignored\\)" "skipped 'notes\\.bak\\.md' \\(ignored\\)"
             "skipped 'team/private\\.md' \\(ignored\\)" "note: skipped: 4 hidden, 3 ignored, 1 binary, 1 not UTF-8\n")
  expect("${o}" "${line}" "--verbose")
endforeach()

# 2. Declarations: warned, locked, the run went on.
run(0 o index ${W} --out ${DIR}/idx --quiet)  # an update warns again
foreach(slip "slip-group.md' is readable by nobody but --as-all: slip-group.md: front matter key 'group'" "slip-Groups.md.*front matter key 'Groups'"
             "slip-access.md.*front matter key 'access'" "slip-list.md.*slip-list.md:2: front matter: unterminated flow list"
             "slip-fence.md.*slip-fence.md:1: front matter: the opening '---' is never closed")
  expect("${o}" "warning: '${slip}" "a warning per locked note")
endforeach()
foreach(word alpha bravo charlie foxtrot golf)
  run(0 o search ${DIR}/idx --k 5 "bonus codeword ${word}")
  expect_not("${o}" "slip-" "${word} without --as")
  run(0 o search ${DIR}/idx --as hr --k 5 "bonus codeword ${word}")
  expect_not("${o}" "slip-" "${word} with --as hr")
  run(0 o search ${DIR}/idx --as-all --k 1 "bonus codeword ${word}")
  expect("${o}" " 1\\. slip-" "${word} with --as-all")
endforeach()
foreach(pair "delta;toml.md" "echo;blank.md" "hotel;bom.md" "juliet;hr.md")
  list(GET pair 0 word)
  list(GET pair 1 file)
  run(0 o search ${DIR}/idx --k 5 "codeword ${word}")
  expect_not("${o}" "${file}" "${word} without --as")
  run(0 o search ${DIR}/idx --as hr --k 1 "codeword ${word}")
  expect("${o}" " 1\\. ${file}" "${word} with --as hr")
endforeach()
run(0 o ask ${DIR}/idx --min-confidence 0 "What is the bonus codeword alpha?")
expect_not("${o}" "alpha\\." "ask without --as")

# 3. --hidden, --no-ignore; an ignored file leaves the index.
run(0 o index ${W} --out ${DIR}/idx-all --quiet --hidden --no-ignore)
expect("${o}" "note: skipped: 1 hidden, 1 binary, 1 not UTF-8" "only .git stays hidden")
run(0 o search ${DIR}/idx-all --as-all --k 20 "secret price")
foreach(found "\\.trash/old\\.md" "\\.obsidian/workspace\\.md" "drafts/plan\\.md" "notes\\.bak\\.md" "team/private\\.md")
  expect("${o}" "${found}" "--hidden --no-ignore finds ${found}")
endforeach()
expect_not("${o}" "\\.git/" "never .git")
run(0 o index ${W} --out ${DIR}/idx-all --quiet)
expect("${o}" "^0 added, 0 changed, 0 removed, 19 unchanged\n" "an update without walk flags walks as recorded")
run(0 o index ${W} --out ${DIR}/idx-all --quiet --hidden)
expect("${o}" "^0 added, 0 changed, 3 removed, 16 unchanged\n" "a walk flag given: the set as given (ignore files read again)")
run(0 o index ${W} --out ${DIR}/idx-all --quiet)
expect("${o}" "^0 added, 0 changed, 0 removed, 16 unchanged\n" "then recorded in turn")
run(0 o index ${W} --out ${DIR}/idx-all --quiet --rebuild)
expect("${o}" "indexed 14 chunks from 13 files" "--rebuild: the default walk, as the first index (step 1)")
file(APPEND ${W}/.gitignore "fr/\n")
run(0 o index ${W} --out ${DIR}/idx --quiet)
expect("${o}" "^0 added, 0 changed, 1 removed, 12 unchanged\n" "fr/ now ignored: removed")
run(0 o search ${DIR}/idx --as-all "congés payés")
expect_not("${o}" "conges" "an ignored file is not served")

# 4. --unlabelled private.
run(0 o index ${W} --out ${DIR}/idx-private --quiet --unlabelled private)
run(0 o search ${DIR}/idx-private "current price seat")
expect_not("${o}" "pricing.md" "private: no reader without --as")
run(0 o search ${DIR}/idx-private --as hr "current price seat")
expect_not("${o}" "pricing.md" "private: not for --as hr")
run(0 o search ${DIR}/idx-private --as-all "current price seat")
expect("${o}" " 1\\. pricing.md" "private: --as-all reads it")
run(0 o index ${W} --out ${DIR}/idx-private --quiet)
expect("${o}" "^0 added, 0 changed, 0 removed" "an update keeps --unlabelled private")
run(0 o search ${DIR}/idx-private "current price seat")
expect_not("${o}" "pricing.md" "still private after the update")
run(0 o index ${W} --out ${DIR}/idx-private --quiet --unlabelled public)
expect("${o}" "other settings .*--unlabelled.* rebuilding it" "another value rebuilds")
run(0 o search ${DIR}/idx-private "current price seat")
expect("${o}" " 1\\. pricing.md" "public again")
run(2 o index ${W} --out ${DIR}/never --unlabelled secret)
expect("${o}" "--unlabelled must be public or private, not 'secret'" "a bad value is a usage error")
message("walk scenario: all steps passed")
