#!/usr/bin/env python3
"""The AUROC of `ragpp ask`'s confidence on a question set, asking every question.

Usage: scripts/ask_auroc.py RAGPP INDEX QUESTIONS.json [--threshold T] [ASK OPTION...]

Runs `RAGPP ask INDEX --json [ASK OPTION...] QUESTION` for each question of the JSON set
(a question with an empty "relevant" list is unanswerable) and prints the AUROC
(answerable vs unanswerable, ties counting one half) and, at the threshold, the share of
answerable questions answered and of unanswerable ones refused. It measures any build of
the tool as a user meets it, an older release included (whose `eval` printed neither the
AUROC nor each question's confidence): docs/abstention.md.
"""
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    binary, index, qfile = argv[1:4]
    extra = argv[4:]
    threshold = 0.38
    if "--threshold" in extra:
        i = extra.index("--threshold")
        threshold = float(extra[i + 1])
        del extra[i:i + 2]
    questions = json.load(open(qfile, encoding="utf-8"))

    def ask(q):
        out = subprocess.run([binary, "ask", index, "--json", *extra, q["question"]],
                             capture_output=True, text=True, check=True)
        return bool(q.get("relevant")), json.loads(out.stdout)["confidence"]

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(ask, questions))
    pos = [c for a, c in results if a]
    neg = [c for a, c in results if not a]
    if not pos or not neg:
        sys.exit("the set needs answerable and unanswerable questions")
    u = sum(1 if p > n else 0.5 if p == n else 0 for p in pos for n in neg)
    print("AUROC %.3f (%d answerable, %d unanswerable)" % (u / (len(pos) * len(neg)), len(pos), len(neg)))
    print("at %.2f: answered %.1f%% of answerable, refused %.1f%% of unanswerable"
          % (threshold, 100 * sum(p >= threshold for p in pos) / len(pos),
             100 * sum(n < threshold for n in neg) / len(neg)))


if __name__ == "__main__":
    main(sys.argv)
