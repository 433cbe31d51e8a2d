#!/usr/bin/env bash
# Writes docs/cli.md from the tool's own help texts, so the page lists exactly the
# commands and options of the binary it is given:
#   cmake --build --preset release --target ragpp_cli
#   scripts/gen-cli-doc.sh build/release/ragpp > docs/cli.md
set -euo pipefail
RAGPP=${1:?usage: scripts/gen-cli-doc.sh PATH/TO/ragpp}
commands=$("$RAGPP" --help | awk '/^[Cc]ommands?:/ {on = 1; next} on && /^  [a-z]+ / {print $1} on && /^$/ && seen {exit} on && /^  [a-z]/ {seen = 1}')
[ -n "$commands" ] || { echo "error: no command found in '$RAGPP --help'" >&2; exit 1; }
cat <<'HEAD'
# The `ragpp` command-line tool

Every command and option, as `ragpp --help` and `ragpp COMMAND --help` print them
(this page is generated from them: `scripts/gen-cli-doc.sh build/release/ragpp > docs/cli.md`).
The README's "The `ragpp` tool" section says what the tool is for and shows it at work;
[getting-started.md](getting-started.md) runs it on a small corpus; the index folder it
writes is [engine.md](engine.md).

Exit status, every command: 0 on success (a refusal of `ask` included), 2 on a usage
error (unknown option, missing argument, a value out of its range), 1 on an input or
runtime error; the message names the option or the file.

HEAD
echo "## ragpp --help"
echo
echo '```text'
"$RAGPP" --help
echo '```'
for c in $commands; do
  echo
  echo "## ragpp $c"
  echo
  echo '```text'
  "$RAGPP" "$c" --help
  echo '```'
done
