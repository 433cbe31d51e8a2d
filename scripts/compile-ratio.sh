#!/usr/bin/env bash
# scripts/compile-ratio.sh [RUNS=5] [FLAGS...]
# How long the README's first program (examples/03_hybrid_search.cpp) takes to compile,
# header-only and as a program linking ragpp::compiled (-DRAGPP_COMPILED: the library
# holds its indexes and Retriever, src/instances.cpp), against a program that includes
# only Eigen and nlohmann_json, with the same compiler and flags, alternating the three,
# RUNS times each: the median wall time of each and the ratios (docs/getting-started.md,
# "Build time"). Compilation only (-c), as for the baseline: linking libragpp.a adds a
# fraction of a second. FLAGS default to the release preset's (-O3 -DNDEBUG -std=c++20).
# A fourth program opens an index folder and searches it with the Engine, linking
# ragpp::compiled (-DRAGPP_COMPILED: it parses the engine's interface only).
# Nothing in a build folder is used or changed.
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
cat > "$tmp/engine.cpp" <<'CPP'
#include <ragpp/engine/engine.hpp>
#include <cstdio>
int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const auto engine = ragpp::Engine::open(argv[1]);
    ragpp::EngineQuery q;
    q.k = 5;
    for (const auto& r : engine.search(argv[2], q).results) std::printf("%s %.4f\n", r.document->id.c_str(), r.score);
}
CPP
compile() {  # compile FILE [FLAG...] -> seconds of wall time
  local start end file=$1
  shift
  start=$(date +%s.%N)
  "$cxx" "${flags[@]}" "$@" -Iinclude -isystem /usr/include/eigen3 -c "$file" -o "$tmp/out.o"
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", e - s }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: > "$tmp/base"
: > "$tmp/ragpp"
: > "$tmp/compiled"
: > "$tmp/engine"
for ((i = 0; i < runs; i++)); do
  compile "$tmp/baseline.cpp" >> "$tmp/base"
  compile examples/03_hybrid_search.cpp >> "$tmp/ragpp"
  compile examples/03_hybrid_search.cpp -DRAGPP_COMPILED >> "$tmp/compiled"
  compile "$tmp/engine.cpp" -DRAGPP_COMPILED >> "$tmp/engine"
done
b=$(median < "$tmp/base")
r=$(median < "$tmp/ragpp")
c=$(median < "$tmp/compiled")
e=$(median < "$tmp/engine")
echo "compiler: $("$cxx" --version | head -n 1); flags: ${flags[*]}; $runs runs each, alternating"
echo "Eigen + nlohmann_json only:                median $b s  ($(paste -sd' ' "$tmp/base"))"
echo "README program, header-only:               median $r s  ($(paste -sd' ' "$tmp/ragpp"))"
echo "README program, linking ragpp::compiled:   median $c s  ($(paste -sd' ' "$tmp/compiled"))"
echo "Engine open + search, ragpp::compiled:     median $e s  ($(paste -sd' ' "$tmp/engine"))"
awk -v r="$r" -v c="$c" -v b="$b" -v e="$e" 'BEGIN { printf "ratios: header-only %.1fx, with ragpp::compiled %.1fx; the Engine program %.1fx\n", r / b, c / b, e / b }'
