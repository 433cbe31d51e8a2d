#!/usr/bin/env bash
# kill -9 during `ragpp index CORPUS --out DIR` over an existing index, many times
# after each kill the folder must open and answer as the old or the new
# index, never a mix and never unloadable.
#   kill_index.sh RAGPP WORKDIR [FILES=3000] [KILLS=30]
# Each round writes "marker roundN" into round.md and changes a few other notes, starts
# an incremental index, kills it at a random instant within twice the time an
# uninterrupted run takes, then searches "marker" with the library's checks on open:
# the round seen must be between the last round seen and N (old or new).
set -u
ragpp=$1 dir=$2 files=${3:-3000} kills=${4:-30}
rm -rf "$dir" && mkdir -p "$dir/corpus" || exit 1
for ((i = 1; i <= files; i++)); do
    printf '# Note %d\n\n## Body\n\nitem%d shares common words with its neighbours, item%d and item%d.\n' \
        "$i" "$i" "$((i + 1))" "$((i + 2))" > "$dir/corpus/n$i.md"
done
marker() { printf '# Round\n\n## Marker\n\nmarker round%d\n' "$1" > "$dir/corpus/round.md"; }
marker 0
"$ragpp" index "$dir/corpus" --out "$dir/idx" --quiet > /dev/null || { echo "first index failed"; exit 1; }
now() { date +%s%N; }
marker 0
t0=$(now)
"$ragpp" index "$dir/corpus" --out "$dir/idx" --quiet > /dev/null || { echo "second index failed"; exit 1; }
run_ns=$(( $(now) - t0 ))
echo "an uninterrupted incremental index of $files files takes $((run_ns / 1000000)) ms"
RANDOM=14
last=0 old=0 new=0
for ((r = 1; r <= kills; r++)); do
    marker "$r"
    for ((j = 0; j < 20; j++)); do
        n=$(( (RANDOM % files) + 1 ))
        printf '# Note %d\n\n## Body\n\nitem%d rewritten in round %d.\n' "$n" "$n" "$r" > "$dir/corpus/n$n.md"
    done
    "$ragpp" index "$dir/corpus" --out "$dir/idx" --quiet > /dev/null 2>&1 &
    pid=$!
    delay_ns=$(( (RANDOM * 32768 + RANDOM) * (2 * run_ns / 1000000) / 1073741824 * 1000000 ))
    sleep "$(printf '%d.%09d' $((delay_ns / 1000000000)) $((delay_ns % 1000000000)))"
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    out=$("$ragpp" search "$dir/idx" --json --k 1 --check-sources off "marker" 2>&1) || {
        echo "round $r: the folder does not open after kill -9 at $((delay_ns / 1000000)) ms:"; echo "$out"; exit 1; }
    seen=$(printf '%s' "$out" | sed -n 's/.*marker round\([0-9]*\).*/\1/p' | head -1)
    id=$(printf '%s' "$out" | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -1)
    if [[ -z "$seen" || "$id" != round.md:* || "$seen" -lt "$last" || "$seen" -gt "$r" ]]; then
        echo "round $r: expected round $last..$r from round.md, got id '$id' round '$seen':"; echo "$out"; exit 1
    fi
    if [[ "$seen" -eq "$r" ]]; then new=$((new + 1)); else old=$((old + 1)); fi
    last=$seen
done
"$ragpp" index "$dir/corpus" --out "$dir/idx" --quiet > /dev/null || { echo "final index failed"; exit 1; }
out=$("$ragpp" search "$dir/idx" --json --k 1 "marker") || exit 1
[[ "$out" == *"marker round$kills"* ]] || { echo "final index does not answer round $kills"; exit 1; }
echo "$kills kills: $old left the old index, $new the new one; every folder opened and answered"
