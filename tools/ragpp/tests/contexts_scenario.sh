#!/usr/bin/env bash
# Folder contexts and the context command on a real folder, through the ragpp binary:
# a .ragpp-contexts file (its words found by search, shown by ask), edits of it re-reading
# only the files whose contexts changed, a contexts file named with --contexts and
# remembered, a malformed rule refused with the index kept, and a context command asked
# once per new chunk (kept across an update and a rebuild; a failing one refused).
# Usage: contexts_scenario.sh RAGPP WORK
set -u
ragpp=$1
work=$2
rm -rf "$work" && mkdir -p "$work/c/contracts" "$work/c/guide" "$work/elsewhere"
source "$(dirname "$0")/expect.sh"
c=$work/c
i=$work/i
printf '# Notice period\n\nEither party may end the agreement with three months notice.\n' > "$c/contracts/mx200.md"
printf '# Scope\n\nCovers the hydraulic press and its tooling.\n' > "$c/contracts/press.md"
printf '# Install\n\nRun the installer and restart the service.\n' > "$c/guide/install.md"
printf 'contracts/: maintenance agreements of Globex Corporation\nlegal/: the legal notes\n' > "$c/.ragpp-contexts"

expect 0 "note: the context rule .ragpp-contexts:2: legal/ applies to no file" index "$c" --out "$i" --quiet
# The description's words are in the lexical index, for the files it names only.
expect 0 '(?s)^(?!.*guide/install)(?=.*contracts/mx200.md:1)(?=.*contracts/press.md:1)' search "$i" Globex --mode bm25
expect 0 '\[1\] contracts/mx200.md:1, Notice period\nContext: maintenance agreements of Globex Corporation\n<<<SOURCE 1' \
  ask "$i" "Globex notice period" --min-confidence 0
expect 0 "or its file as it reads now, run \`ragpp get $i PATH:LINE\` with the path:line of its citation." \
  ask "$i" "Globex notice period" --min-confidence 0
expect 0 '"context": "maintenance agreements of Globex Corporation"' ask "$i" "Globex notice period" --min-confidence 0 --json

# Another description: the two contract files re-read, the guide not.
printf 'contracts/: maintenance agreements of Initech\n' > "$c/.ragpp-contexts"
expect 0 '^0 added, 2 changed \(2 for their contexts\), 0 removed, 1 unchanged\n' index "$c" --out "$i" --quiet
expect 0 '^0 added, 0 changed, 0 removed, 3 unchanged\n' index "$c" --out "$i" --quiet
expect 0 'Context: maintenance agreements of Initech' ask "$i" "Initech notice period" --min-confidence 0

# A contexts file named from another folder: recorded absolute, read again by a later
# update run from elsewhere; gone, the update refuses and says how to go on.
printf 'guide/: the user guide of the press line\n' > "$work/elsewhere/extra.ctx"
(cd "$work/elsewhere" && expect 0 '^0 added, 1 changed \(1 for their contexts\), 0 removed, 2 unchanged\n' \
  index "$c" --out "$i" --quiet --contexts extra.ctx) || exit 1
expect 0 '^0 added, 0 changed, 0 removed, 3 unchanged\n' index "$c" --out "$i" --quiet
expect 0 'guide/install.md:1' search "$i" "user guide press line" --mode bm25 --k 1
rm "$work/elsewhere/extra.ctx"
expect 2 "extra.ctx' the index was built with is gone: name one with --contexts FILE, or stop using one with --contexts none" \
  index "$c" --out "$i" --quiet
expect 0 '^0 added, 1 changed \(1 for their contexts\), 0 removed, 2 unchanged\n' index "$c" --out "$i" --quiet --contexts none
expect 2 "contexts file 'nowhere.ctx' not found" index "$c" --out "$i" --quiet --contexts nowhere.ctx

# A malformed rule: refused naming its line; the index keeps its generation.
before=$(cat "$i/CURRENT")
printf 'contracts/: fine\nguide the guide\n' > "$c/.ragpp-contexts"
expect 1 "\.ragpp-contexts:2: expected 'PATTERN: description'" index "$c" --out "$i" --quiet
[ "$(cat "$i/CURRENT")" = "$before" ] || fail "a refused update committed a generation"
printf 'contracts/: maintenance agreements of Initech\n' > "$c/.ragpp-contexts"

# The context command: asked once per chunk it has not seen, its line in the chunk.
cat > "$work/ctx.sh" <<EOF
#!/bin/sh
echo . >> "$work/asked"
sed -n 's/.*"first_line":\([0-9]*\).*"source":"\([^"]*\)".*/written at line \1 of \2/p'
EOF
count() { if [ -f "$work/asked" ]; then wc -l < "$work/asked" | tr -d ' '; else echo 0; fi; }
expect 0 '^0 added, 3 changed \(3 for their contexts\)' index "$c" --out "$i" --quiet --context-command "sh $work/ctx.sh"
[ "$(count)" = 3 ] || fail "the command was asked $(count) times for 3 chunks"
expect 0 'Context: maintenance agreements of Initech; written at line 3 of contracts/mx200.md\n' \
  ask "$i" "Initech notice period" --min-confidence 0
printf '# Install\n\nRun the new installer.\n\n# Remove\n\nDelete it.\n' > "$c/guide/install.md"
expect 0 '^0 added, 1 changed, 0 removed, 2 unchanged\n' index "$c" --out "$i" --quiet
[ "$(count)" = 5 ] || fail "after an edit of a two-section file: asked $(count) times, not 5"
expect 0 "rebuilding it" index "$c" --out "$i" --quiet --embedder hashing:128
[ "$(count)" = 5 ] || fail "a rebuild asked the command again ($(count) times)"
before=$(cat "$i/CURRENT")
expect 1 "context command 'echo no >&2; exit 3' for 'contracts/mx200.md:1' failed \(exit status 3\): no" \
  index "$c" --out "$i" --quiet --context-command 'echo no >&2; exit 3'
expect 1 "did not answer within 0.2 s" index "$c" --out "$i" --quiet --context-command 'sleep 3' --context-timeout 0.2
[ "$(cat "$i/CURRENT")" = "$before" ] || fail "a failed context command committed a generation"
expect 2 "context-timeout" index "$c" --out "$i" --quiet --context-timeout 0

# Contexts are for a folder of files: a .jsonl corpus refuses them as a usage error.
printf '{"id": "a", "text": "alpha"}\n' > "$work/docs.jsonl"
printf "a/: x\n" > "$work/elsewhere/extra2.ctx"
expect 2 "is a single file of documents: contexts .* apply to a folder of files" \
  index "$work/docs.jsonl" --out "$work/j" --quiet --contexts "$work/elsewhere/extra2.ctx"
[ ! -e "$work/j" ] || fail "a refused request wrote an index folder"

# eval builds in memory with the root's contexts (a word only they hold is found) and
# the options' (which name the guide's).
printf '[{"id": "q1", "question": "Initech", "relevant": ["contracts/mx200.md", "contracts/press.md"]},
  {"id": "q2", "question": "Hooli", "relevant": ["guide/install.md"]}]\n' > "$work/q.json"
printf 'guide/: written for Hooli\n' > "$work/elsewhere/hooli.ctx"
expect 0 '\n  q1 +ok #1 .*\n  q2 +MISS retr' eval "$c" "$work/q.json" --mode bm25
expect 0 '\n  q1 +ok #1 .*\n  q2 +ok #1' eval "$c" "$work/q.json" --mode bm25 --contexts "$work/elsewhere/hooli.ctx"
echo "contexts scenario: all steps passed"
