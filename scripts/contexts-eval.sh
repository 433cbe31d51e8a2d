#!/usr/bin/env bash
# What folder contexts do when files do not name their subject, measured with ragpp eval
# on a real question set (docs/contexts.md): the paragraphs of a BEIR corpus whose
# documents carry the title of their article (PIAF: French Wikipedia paragraphs; JaQuAD:
# Japanese ones) written one file a paragraph, without the title, in one folder per
# article (folders named a001, a002, ... so the path says nothing); then evaluated
# without contexts, and with a contexts file giving each folder its article's title.
#
#   scripts/contexts-eval.sh [RAGPP] [DATA...]
#
# RAGPP: the ragpp binary (default build/release/ragpp); DATA: BEIR folders (default
# ../shared/data/piaf-v1.0-fr and ../shared/data/jaquad-dev-ja). Prints ragpp eval's
# table (bm25, the default pipeline with the built-in embedder) for both runs of each
# set, and the questions found at k = 5 by one run and not the other; the work folder is
# removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ragpp=${1:-$here/build/release/ragpp}
shift || true
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=("$here/../shared/data/piaf-v1.0-fr" "$here/../shared/data/jaquad-dev-ja")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for data in "${sets[@]}"; do
  name=$(basename "$data")
  out=$work/$name
  mkdir -p "$out"
  python3 - "$data" "$out" <<'EOF'
import json, os, sys
data, out = sys.argv[1], sys.argv[2]
folders, contexts, place = {}, [], {}
for line in open(os.path.join(data, "corpus.jsonl"), encoding="utf-8"):
    d = json.loads(line)
    title = d.get("title", "").strip()
    if title not in folders:
        folders[title] = "a%03d" % (len(folders) + 1)
        contexts.append("%s/: %s" % (folders[title], " ".join(title.split())))
    folder = os.path.join(out, "corpus", folders[title])
    os.makedirs(folder, exist_ok=True)
    path = "%s/%s.txt" % (folders[title], d["_id"])
    with open(os.path.join(out, "corpus", path), "w", encoding="utf-8") as f:
        f.write(d["text"].strip() + "\n")
    place[d["_id"]] = path
with open(os.path.join(out, "contexts.txt"), "w", encoding="utf-8") as f:
    f.write("\n".join(contexts) + "\n")
queries = {}
for line in open(os.path.join(data, "queries.jsonl"), encoding="utf-8"):
    q = json.loads(line)
    queries[q["_id"]] = q["text"]
relevant = {}
for i, line in enumerate(open(os.path.join(data, "qrels", "test.tsv"), encoding="utf-8")):
    parts = line.rstrip("\n").split("\t")
    if i == 0 or len(parts) < 3 or int(parts[2]) <= 0:
        continue
    relevant.setdefault(parts[0], []).append(place[parts[1]])
qs = [{"id": q, "question": queries[q], "relevant": rel} for q, rel in sorted(relevant.items()) if q in queries]
with open(os.path.join(out, "questions.json"), "w", encoding="utf-8") as f:
    json.dump(qs, f, ensure_ascii=False)
print("%s: %d paragraphs in %d folders, %d questions" % (os.path.basename(data), len(place), len(folders), len(qs)))
EOF
  echo "== $name, without contexts"
  "$ragpp" eval "$out/corpus" "$out/questions.json" --mode bm25 --k 1,5,10 --json-out "$out/without.json" 2>/dev/null |
    sed -n '/^pipeline/,/^(/p'
  echo "== $name, with each folder's article title as its context (--contexts)"
  "$ragpp" eval "$out/corpus" "$out/questions.json" --mode bm25 --k 1,5,10 --contexts "$out/contexts.txt" \
    --json-out "$out/with.json" 2>/dev/null | sed -n '/^pipeline/,/^(/p'
  # Question by question (eval's --json-out): found at k by one run and not the other; a
  # two-sided sign test on the questions that differ.
  python3 - "$out/without.json" "$out/with.json" <<'EOF2'
import json, math, sys
def questions(path):
    p = json.load(open(path, encoding="utf-8"))["pipelines"][0]
    return {q["id"]: q for q in p["questions"]}
a, b = questions(sys.argv[1]), questions(sys.argv[2])
for k in (1, 5):
    hit = lambda q: q.get("first_relevant") is not None and q["first_relevant"] <= k
    gained = sum(1 for q in a if hit(b[q]) and not hit(a[q]))
    lost = [q for q in a if hit(a[q]) and not hit(b[q])]
    n = gained + len(lost)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(min(gained, len(lost)) + 1)) / 2 ** n) if n else 1.0
    # Of those lost, the ones whose first result with contexts is another paragraph of the
    # right article (same folder).
    same = sum(1 for q in lost if b[q]["top"] and
               b[q]["top"][0]["key"].split("/")[0] == next(iter(a[q]["relevant"])).split("/")[0])
    print("at k = %d: %d questions found only with contexts, %d only without (sign test p = %.2g); "
          "of those %d, %d have another paragraph of the right article first" % (k, gained, len(lost), p, len(lost), same))
EOF2
done
