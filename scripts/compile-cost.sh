#!/usr/bin/env bash
# scripts/compile-cost.sh BUILD_DIR [OBJECT...]
# What each object of a configured Ninja build costs to compile cold: CPU seconds
# (user + sys, which other jobs on the machine change less than the wall time), one
# line per object, then the total. Without OBJECT, every object of the build. Nothing
# in the build changes: each command runs without ccache, writing to a temporary file.
# EXTRA_FLAGS="-g1" appends flags to every command (the last -g or -O wins), to weigh
# a flag before changing a preset. Example (docs/getting-started.md, "CI time"):
#   scripts/compile-cost.sh build/asan tests/CMakeFiles/unit-bm25.dir/unit-bm25.cpp.o
#   EXTRA_FLAGS=-g1 scripts/compile-cost.sh build/asan tests/CMakeFiles/unit-bm25.dir/unit-bm25.cpp.o
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [OBJECT...]" >&2; exit 2; }
dir=$1
shift
objects=("$@")
if [ ${#objects[@]} -eq 0 ]; then
  mapfile -t objects < <(ninja -C "$dir" -t targets all | sed -n 's/^\([^ ]*\.o\): .*/\1/p' | sort)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=0
for obj in "${objects[@]}"; do
  cmd=$(ninja -C "$dir" -t commands -s "$obj" | tail -n 1)
  [ -n "$cmd" ] || { echo "error: no command builds '$obj' in $dir" >&2; exit 1; }
  eval "set -- $cmd"
  [ "$1" = ccache ] && shift
  args=()
  while [ $# -gt 0 ]; do
    case $1 in
      -MD) ;;
      -MT | -MF) shift ;;
      -o) shift; args+=(-o "$tmp/out.o") ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  # shellcheck disable=SC2206
  extra=(${EXTRA_FLAGS:-})
  (cd "$dir" && CCACHE_DISABLE=1 /usr/bin/time -f '%U %S' -o "$tmp/time" "${args[@]}" "${extra[@]}")
  read -r user sys < "$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  total=$(awk -v t="$total" -v c="$cpu" 'BEGIN { printf "%.1f", t + c }')
  printf '%8s s  %s\n' "$cpu" "$obj"
done
printf '%8s s  total (%d objects%s)\n' "$total" "${#objects[@]}" "${EXTRA_FLAGS:+, with $EXTRA_FLAGS}"
