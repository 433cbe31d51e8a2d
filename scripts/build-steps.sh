#!/usr/bin/env bash
# scripts/build-steps.sh BUILD_DIR
# Where a build's compilation went, by kind of step: the seconds of every step in the
# build's own .ninja_log (each step's wall time; two run at a time on 2 cores), summed per
# kind (docs/getting-started.md, "Build time and CI time"). Run it after a cold build.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
log=$1/.ninja_log
[ -f "$log" ] || { echo "error: no $log (build first)" >&2; exit 1; }
awk -F'\t' 'NR > 1 {
  t = $4; k = "links and other steps"
  if (t ~ /ragpp_tests_/) k = "the test groups"
  else if (t ~ /header_check/) k = "header check"
  else if (t ~ /^bench\//) k = "benchmarks"
  else if (t ~ /^examples\//) k = "examples"
  else if (t ~ /ragpp_cli/) k = "the tool"
  else if (t ~ /engine_objects|ragpp_compiled/) k = "libragpp.a"
  else if (t ~ /^tests\/.*\.o$/) k = "unit tests, one file each"
  s[k] += ($2 - $1) / 1000; all += ($2 - $1) / 1000
} END {
  for (k in s) printf "%8.1f s  %s\n", s[k], k
  printf "%8.1f s  in all\n", all
}' "$log" | sort -rn
