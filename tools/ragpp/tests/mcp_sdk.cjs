// ragpp mcp against a client we did not write: the official MCP TypeScript SDK's Client
// over its StdioClientTransport (npm @modelcontextprotocol/sdk, installed by
// scripts/test.sh into build/npm). Usage: node mcp_sdk.cjs RAGPP SDK_DIR WORK
// Exits 0 when every check passed, 1 on the first failure, 4 (skipped) when the SDK is
// not installed outside CI; in CI (CI set) a missing SDK fails.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawn } = require('child_process');
const { createRequire } = require('module');
const assert = require('assert');

const [ragpp, sdkDir, work] = process.argv.slice(2);
let sdk;
try {
  const req = createRequire(path.join(path.resolve(sdkDir), 'package.json'));
  sdk = {
    Client: req('@modelcontextprotocol/sdk/client/index.js').Client,
    StdioClientTransport: req('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
    StreamableHTTPClientTransport: req('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
    version: JSON.parse(fs.readFileSync(path.join(path.resolve(sdkDir), 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version,
  };
} catch (e) {
  const msg = `the MCP SDK is not installed in ${sdkDir} (scripts/test.sh installs it: npm install --prefix ${sdkDir} @modelcontextprotocol/sdk)`;
  if (process.env.CI) {
    console.log(`error: ${msg}; required in CI`);
    process.exit(1);
  }
  console.log(`skipped: ${msg}`);
  process.exit(4);
}

const corpus = path.join(work, 'corpus');
const index = path.join(work, 'index');
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(path.join(corpus, 'hr'), { recursive: true });
const write = (rel, text) => fs.writeFileSync(path.join(corpus, rel), text);
write('guide.md', '# Guide\n\nIntro line.\n\n## Reset\n\nHold the MX-200 reset button.\nCount to five.\n\n## Backup\n\nCopy the disk nightly.\n');
write('ora.md', '# Errors\n\n## ORA-01555\n\nSnapshot too old: increase the undo retention.\n');
write('hr/pay.md', '---\ngroups: [hr]\n---\n# Pay\n\nSalaries of MX-200 engineers are secret.\n');
const run = (...args) => execFileSync(ragpp, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
run('index', corpus, '--out', index);

// The nonce of the evidence is drawn at random per call: compare with it replaced; and
// the line telling the model how to reopen a source is each interface's own.
const reopenLine = /To read more of a source than its passage, or its file as it reads now, [^\n]*/;
const noNonce = (j) => {
  const s = JSON.stringify(j);
  const out = j.evidence ? JSON.parse(s.split(j.evidence.nonce).join('NONCE')) : j;
  if (out.evidence) out.evidence.prompt = out.evidence.prompt.replace(reopenLine, 'REOPEN');
  return out;
};

async function withClient(args, f) {
  const transport = new sdk.StdioClientTransport({ command: ragpp, args: ['mcp', index, ...args], stderr: 'pipe' });
  const client = new sdk.Client({ name: 'ragpp-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await f(client);
  } finally {
    await client.close();
  }
}

// A raw exchange, for what the SDK does not let a client send.
function raw(lines) {
  return new Promise((resolve, reject) => {
    const p = spawn(ragpp, ['mcp', index], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error('ragpp mcp did not answer in 20 s')); }, 20000);
    p.stdout.on('data', (d) => { out += d; });
    p.on('close', () => {
      clearTimeout(timer);
      resolve(out.split('\n').filter((l) => l).map((l) => JSON.parse(l)));
    });
    p.stdin.end(lines.join('\n') + '\n');
  });
}

let checks = 0;
const check = (cond, what) => { assert.ok(cond, what); ++checks; };
const text = (r) => r.content.map((c) => c.text).join('');

(async () => {
  await withClient([], async (client) => {
    check(client.getServerVersion().name === 'ragpp', 'serverInfo.name is ragpp');
    check(client.getServerCapabilities().tools !== undefined, 'the tools capability');
    await client.ping();
    const { tools } = await client.listTools();
    check(JSON.stringify(tools.map((t) => t.name).sort()) === '["ask","get","search","status"]', 'four tools');
    for (const t of tools) check(t.description.length > 40 && t.inputSchema.type === 'object', `${t.name}: described, with a schema`);

    // search: the JSON of ragpp search --json, and its text.
    const s = await client.callTool({ name: 'search', arguments: { query: 'MX-200 reset', k: 3 } });
    check(!s.isError, 'search succeeds');
    assert.deepStrictEqual(s.structuredContent, JSON.parse(run('search', index, 'MX-200 reset', '--k', '3', '--json')));
    check(text(s).includes(run('search', index, 'MX-200 reset', '--k', '3')), 'search text is the command\'s text');
    check(s.structuredContent.results[0].id === 'guide.md:5', 'the reset section first');
    // The reader is fixed at start: hr's note is not found, and no argument changes that.
    const secret = await client.callTool({ name: 'search', arguments: { query: 'salaries secret' } });
    check(secret.structuredContent.results.every((r) => !r.id.startsWith('hr/')), 'no hr note for the default reader');
    const as = await client.callTool({ name: 'search', arguments: { query: 'salaries', as: 'hr' } });
    check(as.isError && text(as).includes("unknown argument 'as'"), 'no reader from the arguments');

    // ask: the JSON of ragpp ask --json (nonce aside), or the refusal.
    const a = await client.callTool({ name: 'ask', arguments: { question: 'How long to hold the MX-200 reset button?' } });
    check(!a.isError && a.structuredContent.answered, 'ask answers');
    assert.deepStrictEqual(noNonce(a.structuredContent),
      noNonce(JSON.parse(run('ask', index, 'How long to hold the MX-200 reset button?', '--json'))));
    check(text(a) === a.structuredContent.evidence.prompt, 'ask text is the evidence block');
    check(text(a).includes('or its file as it reads now, call the get tool with the path:line of its citation.\n'),
      'the evidence tells the model to reopen a source with the get tool');
    const no = await client.callTool({ name: 'ask', arguments: { question: 'What does the QUUXFROB widget do?' } });
    check(!no.isError && no.structuredContent.answered === false && text(no).startsWith('No answer'), 'ask refuses');

    // get and status, then an edit, a deletion and a new generation while serving.
    const g = await client.callTool({ name: 'get', arguments: { source: 'guide.md:5' } });
    check(g.structuredContent.text === '## Reset\n\nHold the MX-200 reset button.\nCount to five.', 'get: the section');
    const l = await client.callTool({ name: 'get', arguments: { source: 'guide.md:5', lines: '1-3' } });
    check(l.structuredContent.citation === 'guide.md:1-3' && l.structuredContent.text === '# Guide\n\nIntro line.', 'get: lines');
    const hidden = await client.callTool({ name: 'get', arguments: { source: 'hr/pay.md' } });
    check(hidden.isError && text(hidden).includes("no source 'hr/pay.md'"), 'get: not a source for this reader');
    const st = await client.callTool({ name: 'status', arguments: {} });
    check(st.structuredContent.sources === 2 && st.structuredContent.generation === 1, 'status: 2 readable sources, generation 1');

    write('guide.md', '# Guide\n\nA new first paragraph.\n\nIntro line.\n\n## Reset\n\nHold the MX-200 reset button.\nCount to ten.\n');
    const edited = await client.callTool({ name: 'get', arguments: { source: 'guide.md' } });
    check(edited.structuredContent.changed && text(edited).includes('Count to ten.'), 'get: the file as it is now, changed');
    fs.rmSync(path.join(corpus, 'ora.md'));
    const gone = await client.callTool({ name: 'get', arguments: { source: 'ora.md:3' } });
    check(gone.isError && gone.structuredContent.deleted, 'get: a deleted source');
    const st2 = await client.callTool({ name: 'status', arguments: {} });
    assert.deepStrictEqual([st2.structuredContent.changed_sources, st2.structuredContent.deleted_sources], [['guide.md'], ['ora.md']]);

    write('new.md', '# Router\n\n## CMP0077\n\nThe policy CMP0077 makes option() honour normal variables.\n');
    run('index', corpus, '--out', index);
    const fresh = await client.callTool({ name: 'search', arguments: { query: 'CMP0077' } });
    check(fresh.structuredContent.results.length > 0 && fresh.structuredContent.results[0].id === 'new.md:3',
      'a generation committed while serving is used by the next call');
    const st3 = await client.callTool({ name: 'status', arguments: {} });
    check(st3.structuredContent.generation === 2 && st3.structuredContent.deleted_sources.length === 0, 'status: generation 2');

    // Bad arguments: tool errors, never a crash; an unknown tool: a protocol error.
    for (const [args, says] of [[{ query: 'x', k: 0 }, "'k'"], [{ query: 'x', k: 'five' }, "'k'"], [{}, "'query'"],
                                [{ query: 'x', mode: 'psychic' }, 'psychic'], [{ query: 'x', filter: 'version>>2' }, 'version']]) {
      const r = await client.callTool({ name: 'search', arguments: args });
      check(r.isError && text(r).includes(says), `search ${JSON.stringify(args)} is a tool error naming ${says}`);
    }
    let unknown = null;
    try { await client.callTool({ name: 'frobnicate', arguments: {} }); } catch (e) { unknown = e; }
    check(unknown && String(unknown.message).includes('Unknown tool'), 'an unknown tool is a protocol error');
    check((await client.callTool({ name: 'status', arguments: {} })).structuredContent.generation === 2, 'still serving');
  });

  // The reader of --as: hr reads its note.
  await withClient(['--as', 'hr'], async (client) => {
    const r = await client.callTool({ name: 'search', arguments: { query: 'salaries secret' } });
    check(r.structuredContent.results[0].id.startsWith('hr/pay.md'), '--as hr finds the hr note');
    const g = await client.callTool({ name: 'get', arguments: { source: 'hr/pay.md' } });
    check(!g.isError && g.structuredContent.text.includes('Salaries'), '--as hr reopens it');
  });

  // Version negotiation, notifications, malformed input (raw lines).
  const init = (v, id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize',
    params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  const replies = await raw([init('2025-06-18', 1), init('1999-01-01', 2), '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    'not json', '[1,2]', '{"jsonrpc":"2.0","id":3,"method":"resources/list"}', '{"jsonrpc":"2.0","id":4,"method":"ping"}']);
  check(replies.length === 6, `six replies to seven lines (the notification has none): ${replies.length}`);
  check(replies[0].result.protocolVersion === '2025-06-18', 'a supported version is kept');
  check(replies[1].result.protocolVersion === '2025-11-25', 'an unknown version gets the latest');
  check(replies[2].error.code === -32700 && replies[2].id === null, 'a parse error');
  check(replies[3].error.code === -32600, 'not an object: invalid request');
  check(replies[4].error.code === -32601 && replies[4].id === 3, 'an unknown method');
  check(replies[5].id === 4 && JSON.stringify(replies[5].result) === '{}', 'ping');

  // The same tools over Streamable HTTP (ragpp serve, POST /mcp), when the tool has serve.
  const help = require('child_process').spawnSync(ragpp, ['serve', '--help'], { encoding: 'utf8' });
  if (help.status === 0) {
    const tokens = path.join(work, 'tokens.tsv');
    fs.writeFileSync(tokens, 'tok-hr-0123456789abcdef\thr\n');
    const serve = spawn(ragpp, ['serve', index, '--port', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    const port = await new Promise((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error('ragpp serve did not start in 20 s: ' + err)), 20000);
      serve.stderr.on('data', (d) => {
        err += d;
        const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
        if (m) { clearTimeout(timer); resolve(Number(m[1])); }
      });
    });
    try {
      for (const [token, hr] of [[null, false], ['tok-hr-0123456789abcdef', true]]) {
        const headers = token ? { Authorization: `Bearer ${token}` } : {};
        const transport = new sdk.StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers } });
        const client = new sdk.Client({ name: 'ragpp-test-http', version: '1.0.0' });
        await client.connect(transport);
        const { tools } = await client.listTools();
        check(tools.length === 4, 'four tools over HTTP');
        const r = await client.callTool({ name: 'search', arguments: { query: 'salaries secret' } });
        const found = r.structuredContent.results.some((x) => x.id.startsWith('hr/'));
        check(found === hr, `over HTTP the reader is the token's (${token ? 'hr' : 'none'})`);
        assert.deepStrictEqual(r.structuredContent,
          JSON.parse(run('search', index, 'salaries secret', ...(hr ? ['--as', 'hr'] : []), '--json')));
        await client.close();
      }
    } finally {
      serve.kill('SIGTERM');
    }
  }

  console.log(`mcp sdk ${sdk.version}: ${checks} checks passed`);
})().catch((e) => {
  console.log(`error: ${e.stack || e}`);
  process.exit(1);
});
