#!/usr/bin/env bash
# ragpp get on a real folder: a section, lines, a whole file; a note the reader may not
# read answered as a path that is no source; an edit (printed as it is now, with a
# warning) and a deletion (exit 1). Usage: get_scenario.sh RAGPP WORK
set -u
ragpp=$1
work=$2
rm -rf "$work" && mkdir -p "$work/c/hr"
source "$(dirname "$0")/expect.sh"
printf '# Guide\r\n\r\nIntro line.\r\n\r\n## Reset\r\n\r\nHold the button.\r\nCount to five.\r\n' > "$work/c/guide.md"
printf -- '---\ngroups: [hr]\n---\n# Pay\n\nSalaries are secret.\n' > "$work/c/hr/pay.md"
"$ragpp" index "$work/c" --out "$work/i" > /dev/null 2>&1 || fail "ragpp index"
i=$work/i
expect 0 '^guide.md:5-8  \(section guide.md:5\)\n## Reset\n\nHold the button.\nCount to five.$' get "$i" guide.md:5
expect 0 '^guide.md:5-8  \(section guide.md:5\)\n' get "$i" guide.md:7
expect 0 '^guide.md:5-8  \(section guide.md:5\)\n' get "$i" guide.md:6
expect 0 '^guide.md:1-3\n# Guide\n\nIntro line.$' get "$i" guide.md:1-3
expect 0 '^guide.md\n# Guide\n' get "$i" guide.md
expect 0 '"citation": "guide.md:5-8"' get "$i" guide.md:5 --json
expect 1 "no source 'hr/pay.md' that this reader may read" get "$i" hr/pay.md
expect 1 "no source 'hr/pax.md' that this reader may read" get "$i" hr/pax.md
expect 1 "no source '../guide.md' that this reader may read" get "$i" ../guide.md
expect 0 'Salaries are secret' get "$i" hr/pay.md --as hr
expect 2 'past its end \(8 lines\)' get "$i" guide.md:9-12
expect 2 'numbered from 1' get "$i" guide.md:3-2
expect 0 '^guide.md:1-3  \(section guide.md:1\)\n# Guide\n\nIntro line.$' get "$i" guide.md:2
printf '# Guide\n\nNew line.\n\nIntro line.\n\n## Reset\n\nHold it.\n' > "$work/c/guide.md"
expect 0 "warning: 'guide.md' changed after it was indexed.*\n.*changed since it was indexed.*\nIntro line.\n\n## Reset\n\nHold it.$" get "$i" guide.md:5-9
rm "$work/c/guide.md"
expect 1 "error: 'guide.md' is gone" get "$i" guide.md:5
expect 1 '"deleted": true' get "$i" guide.md:5 --json
echo "get scenario: all steps passed"
