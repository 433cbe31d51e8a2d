// The Hugging Face side of scripts/check_tokenizer_json_hf.sh (npm package `tokenizers`,
// the Rust core's binding). Reads JSON lines [a, b, max_length] and prints [ids, type_ids].
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
(async () => {
  const tok = Tokenizer.fromFile(process.argv[2]);
  const cases = fs.readFileSync(process.argv[3], 'utf8').split('\n').filter(x => x.length).map(JSON.parse);
  const out = [];
  for (const [a, b, m] of cases) {
    let e;
    if (m === 0 && b === null) {
      e = await tok.encode(a, null, { addSpecialTokens: false });
    } else {
      tok.setTruncation(m, { strategy: 'LongestFirst' });
      e = b === null ? await tok.encode(a) : await tok.encode(a, b);
    }
    out.push(JSON.stringify([e.getIds(), e.getTypeIds()]));
  }
  fs.writeFileSync(process.argv[4], out.join('\n') + '\n');
})();
