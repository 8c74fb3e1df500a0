// @ts-check
// Lines swallowed behind a shield (issue 37 item 2): after each shape's real end, 2,000 real thread-death tracebacks
// (unprefixed, as the interpreter prints them) in one chunk, no record and no quiet after them: the worst case.
// Events raised = tracebacks seen. Usage: npm run build && node bench/shield-swallow.mjs [repo root, default .]
import { Buffer } from 'node:buffer';
const root = new URL(
  process.argv[2] ?? '..',
  process.argv[2] ? `file://${process.cwd()}/` : import.meta.url,
).pathname.replace(/\/$/, '');
const { ChunkScanner } = await import(`${root}/dist/sources/logs/scanner.js`);
const { compileRuleSet } = await import(`${root}/dist/sources/logs/rules/compile.js`);
const { LOG_PACKS } = await import(`${root}/dist/config/schema.js`);
const set = compileRuleSet([...LOG_PACKS], []);
const T = '[2026-08-10 14:00:03 TP0] ';
/** @typedef {{ line: string, rule: { name: string } }} Match */
const death = (/** @type {number} */ n) => [
  `Exception in thread Thread-${n} (bootstrap_thread):`,
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
  '    self.run()',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
];
const TAIL = '"}}], JSON parse error: Invalid control character at: line 1 column 10 (char 9)';
const N = 2000;
const real = Array.from({ length: N }, (_, i) => death(1000 + i)).flat();
const shapes = {
  'early tail (fake death inside)': [
    `${T}Failed to parse JSON part: [{"a": "x`,
    'y, JSON parse error: Expecting value: line 1 column 2 (char 1)',
    ...death(7),
    TAIL,
  ],
  'cut tail (last line > maxLineBytes)': [
    `${T}Failed to parse JSON part: [{"a": "x`,
    'b'.repeat(70000) + TAIL,
  ],
  'undefined function (plain)': [`${T}Model attempted to call undefined function: x`, 'more'],
};
// A busy engine: its next record (a batch line) right after the first real traceback.
const NEXT = `${T}Decode batch, #running-req: 1, #token: 90, token usage: 0.01, gen throughput (token/s): 40.00`;
for (const [name, lines, busy] of Object.entries(shapes).flatMap(
  ([n, l]) =>
    /** @type {[string, string[], boolean][]} */ ([
      [n, l, false],
      [`${n}, engine's next record after the first traceback`, l, true],
    ]),
)) {
  /** @type {Match[]} */
  const out = [];
  const s = new ChunkScanner(set, 65536, {
    match: (/** @type {Match} */ m) => out.push(m),
    engine() {},
    truncated() {},
  });
  const after = busy ? [...real.slice(0, 5), NEXT, ...real.slice(5)] : real;
  const b = Buffer.from([...lines, ...after].join('\n') + '\n');
  s.feed(b, b.length);
  s.flush();
  const fake = out.filter((m) => m.line.includes('Thread-7')).length;
  const seen = out.filter(
    (/** @type {Match} */ m) => m.rule.name === 'nixl_bootstrap_thread_dead' && !m.line.includes('Thread-7'),
  ).length;
  console.log(
    `${name}: fake events ${fake}; real tracebacks raised ${seen}/${N}, swallowed ${N - seen} (${(N - seen) * 5} lines)`,
  );
}
// JSON: a hallucinated function name in a `format: json` log, then the real tracebacks as plain stderr lines.
{
  const { logFeed } = await import(`${root}/dist/sources/logs/feed.js`);
  /** @type {Match[]} */
  const out = [];
  const f = logFeed(
    set,
    { maxLineBytes: 65536, format: 'json' },
    { match: (/** @type {Match} */ m) => out.push(m), engine() {}, truncated() {} },
  );
  const rec = JSON.stringify({
    time: '2026-08-10T14:00:03Z',
    message: 'Model attempted to call undefined function: x',
  });
  const b = Buffer.from([rec, ...real].join('\n') + '\n');
  f.input.feed(b, b.length);
  f.input.flush();
  const seen = out.filter((/** @type {Match} */ m) => m.rule.name === 'nixl_bootstrap_thread_dead').length;
  console.log(
    `undefined function (format: json): real tracebacks raised ${seen}/${N} (events after folding), swallowed lines ${seen > 0 ? 0 : N * 5}`,
  );
}
