// Cross-check of the token ids in tests/fixtures/transformer (made by the Python oracles of
// scripts/gen_transformer_fixtures.py) against Hugging Face's own tokenizers library (its Rust
// core through the npm binding `tokenizers`, Apache-2.0). Not needed by the build or the tests.
//
//   mkdir -p /tmp/hf-tok && (cd /tmp/hf-tok && npm init -y >/dev/null && npm install tokenizers@0.23.2)
//   NODE_PATH=/tmp/hf-tok/node_modules node scripts/check_transformer_fixtures_hf.js tests/fixtures/transformer
//
// Prints every mismatch and "N passed, N failed"; exit status 1 on a mismatch.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const fx = process.argv[2];
// The shared data folder beside the clone (../shared), as for the tests; RAGPP_SHARED_DIR overrides it.
const shared = require('path').join(process.env.RAGPP_SHARED_DIR ||
                                    require('path').join(__dirname, '..', '..', 'shared'), 'fixtures');
let bad = 0, good = 0;
function eq(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
function report(ok, what, got, want) {
  if (ok) { good++; return; }
  bad++; console.log('MISMATCH', what, '\n  hf  :', JSON.stringify(got), '\n  want:', JSON.stringify(want));
}
(async () => {
  const maxSeq = {'bert-mean': 24, 'bert-cls-f16': 64, 'bert-max-bf16': 32, 'bert-sqrtlen': 48, 'xlmr-mean': 32};
  for (const [name, m] of Object.entries(maxSeq)) {
    const tok = Tokenizer.fromFile(`${fx}/${name}/tokenizer.json`);
    const st = JSON.parse(fs.readFileSync(`${fx}/${name}/sentence_bert_config.json`));
    if (st.max_seq_length !== m) { bad++; console.log('max_seq', name); }
    tok.setTruncation(m, { strategy: 'LongestFirst' });
    const exp = JSON.parse(fs.readFileSync(`${fx}/${name}/expected.json`));
    for (let i = 0; i < exp.texts.length; i++) {
      const e = await tok.encode(exp.texts[i]);
      report(eq(e.getIds(), exp.tokens[i]), `${name} text ${i} ${JSON.stringify(exp.texts[i]).slice(0, 40)}`, e.getIds(), exp.tokens[i]);
    }
    if (exp.query_tokens) for (let i = 0; i < exp.texts.length; i++) {
      const e = await tok.encode(exp.query_prompt + exp.texts[i]);
      report(eq(e.getIds(), exp.query_tokens[i]), `${name} query ${i}`, e.getIds(), exp.query_tokens[i]);
    }
  }
  for (const name of ['ce-bert', 'ce-xlmr']) {
    const tok = Tokenizer.fromFile(`${fx}/${name}/tokenizer.json`);
    const cfg = JSON.parse(fs.readFileSync(`${fx}/${name}/tokenizer_config.json`));
    tok.setTruncation(cfg.model_max_length, { strategy: 'LongestFirst' });
    const exp = JSON.parse(fs.readFileSync(`${fx}/${name}/expected.json`));
    for (let i = 0; i < exp.pairs.length; i++) {
      const e = await tok.encode(exp.pairs[i][0], exp.pairs[i][1]);
      report(eq(e.getIds(), exp.tokens[i]), `${name} pair ${i} ids`, e.getIds(), exp.tokens[i]);
      report(eq(e.getTypeIds(), exp.type_ids[i]), `${name} pair ${i} types`, e.getTypeIds(), exp.type_ids[i]);
    }
  }
  {
    const wr = JSON.parse(fs.readFileSync(`${fx}/wordpiece_real.json`));
    const tok = Tokenizer.fromFile(`${shared}/${wr.tokenizer}`);
    for (const c of wr.cases) {
      const e = await tok.encode(c.text, null, { addSpecialTokens: false });
      report(eq(e.getIds(), c.ids), `wordpiece_real ${JSON.stringify(c.text).slice(0, 50)}`, e.getIds(), c.ids);
    }
  }
  {
    const ur = JSON.parse(fs.readFileSync(`${fx}/unigram_real.json`));
    const tok = Tokenizer.fromFile(`${fx}/${ur.tokenizer}`);
    for (const c of ur.cases) {
      const e = await tok.encode(c.text, null, { addSpecialTokens: false });
      report(eq(e.getIds(), c.ids), `unigram_real ${JSON.stringify(c.text)}`, e.getIds(), c.ids);
    }
  }
  console.log(`${good} passed, ${bad} failed`);
  process.exit(bad ? 1 : 0);
})();
