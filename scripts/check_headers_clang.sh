#!/usr/bin/env bash
# Every public header parses with clang (syntax only), one header per run, so a
# GCC-only construct cannot slip in. Used by ctest (test clang.headers) when clang++ is
# installed. Usage: scripts/check_headers_clang.sh [CLANGXX]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CXX_CLANG=${1:-clang++} ROOT=$root
check() {
  if ! out=$(printf '#include <%s>\n' "$1" | "$CXX_CLANG" -std=c++20 -fsyntax-only -Wall -Wextra \
      -I"$ROOT/include" -I/usr/include/eigen3 -x c++ - 2>&1); then
    printf 'FAIL %s\n%s\n' "$1" "$(echo "$out" | head -20)"
    return 1
  fi
}
export -f check
headers=$(cd "$root/include" && find ragpp -name '*.hpp' ! -path 'ragpp/ext/*' | sort)
count=$(echo "$headers" | grep -c .)
report=$(echo "$headers" | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} bash -c 'check "$1"' _ {})
[ -n "$report" ] && echo "$report"
failed=$(printf '%s\n' "$report" | grep -c '^FAIL ')
echo "clang: $((count - failed)) of $count headers parse"
[ "$failed" -eq 0 ] && [ "$count" -gt 0 ]
