#!/bin/sh
# Differential check of ragpp's HfTokenizer (include/ragpp/embed/tokenizer_json.hpp)
# against Hugging Face tokenizers (npm `tokenizers`, default 0.23.2) on random texts and
# pairs with truncation, for each tokenizer.json given. Not part of the build or tests.
#
#   scripts/check_tokenizer_json_hf.sh tests/fixtures/transformer/ce-bert/tokenizer.json \
#       tests/fixtures/transformer/ce-xlmr/tokenizer.json
#
# Prints, per tokenizer, how many of the cases differ (and the first few); exit 1 on any.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=${TMPDIR:-/tmp}/ragpp-tokcheck
mkdir -p "$work"
if [ ! -d "$work/node_modules/tokenizers" ]; then
  (cd "$work" && npm init -y >/dev/null && npm install "tokenizers@${HF_TOKENIZERS_VERSION:-0.23.2}" >/dev/null)
fi
${CXX:-g++} -std=c++20 -O1 -I"$here/include" "$here/scripts/check_tokenizer_json_hf.cpp" -o "$work/ragpp_side"
/usr/bin/python3 - "$work/cases.jsonl" <<'PY'
import json, random, sys
random.seed(23)
words = ("the kamer de la chambre minister wetsvoorstel question réponse INTERPROCEDURAL_OPTIMIZATION CMP0077: set(FOO) "
         "naïve café cafe\u0301 日本語 한국어 \u1100\u1161 ภาษาไทย 😀 👨‍👩‍👧 ❤️ ＡＢＣ ＡＢＣ\u0301 ﬁnance ① ½ x² [CLS] [MASK] [SEP] <mask> </s> <s> <pad> "
         ",.!? ... -- volksvertegenwoordigers antidisestablishmentarianism x y z 42 3.14 a\u00adb \u200b \x01 \x0b").split(" ")
ws = [" ", " ", " ", "  ", "\t", "\n", "", "\r\n", "\u00a0"]
def text(n):
    return "".join(random.choice(words) + random.choice(ws) for _ in range(n))
with open(sys.argv[1], "w") as f:
    for i in range(6000):
        m = 0 if i < 1000 else random.randint(5, 48)
        a = text(random.choice([0, 1, 2, 3, 5, 8, 13, 20, 30, 45]))
        b = None if (m == 0 or random.random() < 0.25) else text(random.choice([0, 1, 2, 3, 5, 8, 13, 20, 30, 45]))
        f.write(json.dumps([a, b, m], ensure_ascii=False) + "\n")
PY
status=0
for tok in "$@"; do
  NODE_PATH="$work/node_modules" node "$here/scripts/check_tokenizer_json_hf.js" "$tok" "$work/cases.jsonl" "$work/hf.txt"
  "$work/ragpp_side" "$tok" "$work/cases.jsonl" > "$work/ragpp.txt"
  n=$(paste -d '\t' "$work/hf.txt" "$work/ragpp.txt" | awk -F '\t' '$1 != $2' | wc -l)
  echo "$tok: $n of $(wc -l < "$work/cases.jsonl") cases differ"
  if [ "$n" -ne 0 ]; then
    status=1
    paste -d '\t' "$work/cases.jsonl" "$work/hf.txt" "$work/ragpp.txt" | awk -F '\t' '$2 != $3' | head -5
  fi
done
exit $status
