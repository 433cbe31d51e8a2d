#!/usr/bin/env bash
# scripts/compile-ratio.sh [RUNS=5] [FLAGS...]
# How long the README's first program (examples/03_hybrid_search.cpp) takes to compile,
# against a program that includes only Eigen and nlohmann_json, with the same compiler
# and flags, alternating the two, RUNS times each: the median wall time of each and their
# ratio (docs/getting-started.md, "Build time"). FLAGS default to the release preset's
# (-O3 -DNDEBUG -std=c++20). Nothing in a build folder is used or changed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-O3 -DNDEBUG -std=c++20)
cxx=${CXX:-c++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/baseline.cpp" <<'CPP'
#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <cstdio>
int main() {
    Eigen::MatrixXf m = Eigen::MatrixXf::Identity(2, 2);
    nlohmann::json j{{"trace", m(0, 0)}};
    std::printf("%s\n", j.dump().c_str());
}
CPP
compile() {  # compile FILE -> seconds of wall time
  local start end
  start=$(date +%s.%N)
  "$cxx" "${flags[@]}" -Iinclude -isystem /usr/include/eigen3 -c "$1" -o "$tmp/out.o"
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", e - s }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: > "$tmp/base"
: > "$tmp/ragpp"
for ((i = 0; i < runs; i++)); do
  compile "$tmp/baseline.cpp" >> "$tmp/base"
  compile examples/03_hybrid_search.cpp >> "$tmp/ragpp"
done
b=$(median < "$tmp/base")
r=$(median < "$tmp/ragpp")
echo "compiler: $("$cxx" --version | head -n 1); flags: ${flags[*]}; $runs runs each, alternating"
echo "Eigen + nlohmann_json only:            median $b s  ($(paste -sd' ' "$tmp/base"))"
echo "README program (03_hybrid_search.cpp): median $r s  ($(paste -sd' ' "$tmp/ragpp"))"
awk -v r="$r" -v b="$b" 'BEGIN { printf "ratio: %.1fx\n", r / b }'
