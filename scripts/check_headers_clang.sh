#!/usr/bin/env bash
# Every public header parses with clang (syntax only), one header per run, so a
# GCC-only construct cannot slip in. Used by ctest (test clang.headers) when clang++ is
# installed. Usage: scripts/check_headers_clang.sh [CLANGXX]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${1:-clang++}
fail=0
count=0
while IFS= read -r h; do
  count=$((count + 1))
  if ! out=$(printf '#include <%s>\n' "$h" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra \
      -I"$root/include" -I/usr/include/eigen3 -x c++ - 2>&1); then
    echo "FAIL $h"; echo "$out" | head -20; fail=$((fail + 1))
  fi
done < <(cd "$root/include" && find ragpp -name '*.hpp' ! -path 'ragpp/ext/*' | sort)
echo "clang: $((count - fail)) of $count headers parse"
[ "$fail" -eq 0 ] && [ "$count" -gt 0 ]
