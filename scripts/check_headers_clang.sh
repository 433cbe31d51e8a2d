#!/usr/bin/env bash
# Every public header (but ragpp/ext/) parses with clang (syntax only, -Wall -Wextra), so
# a GCC-only construct cannot slip in. Used by ctest (test clang.headers) when clang++ is
# installed. By default one clang run parses a translation unit that includes every
# header (that each header also compiles on its own is GCC's ragpp_header_check target);
# --per-header runs clang once per header, as a header's own translation unit (slow:
# minutes). Usage: scripts/check_headers_clang.sh [--per-header] [CLANGXX]
set -uo pipefail
per_header=0
if [ "${1:-}" = --per-header ]; then per_header=1; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
export CXX_CLANG=${1:-clang++} ROOT=$root
check() {  # check NAME: parses the #include lines on stdin
  if ! out=$("$CXX_CLANG" -std=c++20 -fsyntax-only -Wall -Wextra \
      -I"$ROOT/include" -I/usr/include/eigen3 -x c++ - 2>&1); then
    printf 'FAIL %s\n%s\n' "$1" "$(echo "$out" | head -20)"
    return 1
  fi
}
export -f check
headers=$(cd "$root/include" && find ragpp -name '*.hpp' ! -path 'ragpp/ext/*' | sort)
count=$(echo "$headers" | grep -c .)
if [ "$per_header" -eq 0 ]; then
  if report=$(printf '#include <%s>\n' $headers | check "the translation unit of all $count headers"); then
    echo "clang: the $count headers parse in one translation unit"
    [ "$count" -gt 0 ]
    exit
  fi
  echo "$report"
  exit 1
fi
report=$(echo "$headers" | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} bash -c 'printf "#include <%s>\n" "$1" | check "$1"' _ {})
[ -n "$report" ] && echo "$report"
failed=$(printf '%s\n' "$report" | grep -c '^FAIL ')
echo "clang: $((count - failed)) of $count headers parse"
[ "$failed" -eq 0 ] && [ "$count" -gt 0 ]
