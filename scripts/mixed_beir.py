#!/usr/bin/env python3
"""Makes a mixed-language BEIR collection for docs/text-analysis.md's measure.

    scripts/mixed_beir.py ../shared/data OUT
writes OUT/all/corpus.jsonl (SciFact's and PIAF's documents, ids prefixed "s" and
"f") and the question folders OUT/scifact and OUT/piaf (queries as they are, qrels
rewritten to the prefixed ids, an empty corpus.jsonl), to evaluate with
    ragpp eval OUT/all OUT/scifact --mode bm25 --k 10 --quiet
"""
import json
import os
import shutil
import sys

SETS = [("scifact", "s", "scifact"), ("piaf-v1.0-fr", "f", "piaf")]


def main(data, out):
    os.makedirs(os.path.join(out, "all"), exist_ok=True)
    with open(os.path.join(out, "all", "corpus.jsonl"), "w", encoding="utf-8") as corpus:
        for name, prefix, _ in SETS:
            with open(os.path.join(data, name, "corpus.jsonl"), encoding="utf-8") as f:
                for line in f:
                    doc = json.loads(line)
                    doc["_id"] = prefix + doc["_id"]
                    corpus.write(json.dumps(doc, ensure_ascii=False) + "\n")
    for name, prefix, folder in SETS:
        dst = os.path.join(out, folder)
        os.makedirs(os.path.join(dst, "qrels"), exist_ok=True)
        shutil.copyfile(os.path.join(data, name, "queries.jsonl"), os.path.join(dst, "queries.jsonl"))
        open(os.path.join(dst, "corpus.jsonl"), "w").close()
        with open(os.path.join(data, name, "qrels", "test.tsv"), encoding="utf-8") as f, \
                open(os.path.join(dst, "qrels", "test.tsv"), "w", encoding="utf-8") as q:
            q.write(f.readline())
            for line in f:
                query, doc, score = line.rstrip("\n").split("\t")
                q.write(f"{query}\t{prefix}{doc}\t{score}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: mixed_beir.py DATA_DIR OUT_DIR")
    main(sys.argv[1], sys.argv[2])
