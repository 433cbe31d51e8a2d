// ONNX Runtime's speed on the encoder of bench/onnx_export.py (model.onnx in MODEL_DIR),
// on the same token ids as bench_transformer (passages_128.json: 128-token SciFact
// passages, unpadded), batches of 32, compute only (session.run; the ids are tensors
// before the clock starts), median of --runs runs.
//
//   node bench/ort_encoder_bench.cjs ORT_MODULE MODEL_DIR [--n 128] [--batch 32] [--runs 3] [--threads 1]
//
// ORT_MODULE: the onnxruntime-node package folder (npm install --ignore-scripts
// onnxruntime-node: its CPU library is inside the package). --threads T: intra-op threads
// (0: ONNX Runtime's default, one per core); one inter-op thread, sequential execution,
// graph optimisation "all". Prints one JSON line: texts per second of wall time and of the
// process's CPU time, and the max abs difference of the first 16 vectors to
// reference_vectors.json (torch's).
'use strict';
const fs = require('fs');
const path = require('path');

function option(args, name, fallback) {
  const i = args.indexOf('--' + name);
  return i >= 0 && i + 1 < args.length ? Number(args[i + 1]) : fallback;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) {
    console.error('usage: node ort_encoder_bench.cjs ORT_MODULE MODEL_DIR [--n 128] [--batch 32] [--runs 3] [--threads 1]');
    process.exit(2);
  }
  const ort = require(path.resolve(args[0]));
  const dir = args[1];
  const n = option(args, 'n', 128), batch = option(args, 'batch', 32), runs = option(args, 'runs', 3);
  const threads = option(args, 'threads', 1);
  const passages = JSON.parse(fs.readFileSync(path.join(dir, 'passages_128.json'), 'utf8')).ids.slice(0, n);
  const reference = JSON.parse(fs.readFileSync(path.join(dir, 'reference_vectors.json'), 'utf8')).vectors;
  const options = {executionMode: 'sequential', graphOptimizationLevel: 'all', interOpNumThreads: 1};
  if (threads > 0) options.intraOpNumThreads = threads;
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), options);

  const feeds = (rows) => {
    const s = rows[0].length;
    const ids = new BigInt64Array(rows.length * s), mask = new BigInt64Array(rows.length * s);
    rows.forEach((r, i) => r.forEach((id, j) => { ids[i * s + j] = BigInt(id); mask[i * s + j] = 1n; }));
    return {input_ids: new ort.Tensor('int64', ids, [rows.length, s]),
            attention_mask: new ort.Tensor('int64', mask, [rows.length, s])};
  };
  // Exactness: the first 16 vectors against torch's.
  const head = await session.run(feeds(passages.slice(0, reference.length)));
  const got = head.sentence_embedding.data, dim = head.sentence_embedding.dims[1];
  let maxDiff = 0;
  reference.forEach((v, i) => v.forEach((x, k) => { maxDiff = Math.max(maxDiff, Math.abs(got[i * dim + k] - x)); }));

  const batches = [];
  for (let s = 0; s < passages.length; s += batch) batches.push(feeds(passages.slice(s, s + batch)));
  await session.run(batches[0]);  // warm-up
  const wall = [], cpu = [];
  for (let r = 0; r < runs; ++r) {
    const c0 = process.cpuUsage(), w0 = process.hrtime.bigint();
    for (const f of batches) await session.run(f);
    const dw = Number(process.hrtime.bigint() - w0) / 1e9, dc = process.cpuUsage(c0);
    wall.push(dw);
    cpu.push((dc.user + dc.system) / 1e6);
  }
  const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  const pkg = JSON.parse(fs.readFileSync(path.join(path.resolve(args[0]), 'package.json'), 'utf8'));
  console.log(JSON.stringify({onnxruntime: pkg.version, threads: threads || 'default', n: passages.length, batch, runs,
                              seq: passages[0].length, ort_f32_texts_per_s: passages.length / median(wall),
                              ort_f32_texts_per_cpu_s: passages.length / median(cpu),
                              ort_max_abs_diff_to_torch: maxDiff}));
}

main().catch((e) => { console.error('ort_encoder_bench: ' + (e && e.stack || e)); process.exit(1); });
