import { describe, expect, it } from 'vitest';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import type { EngineValues } from '../../src/sources/logs/engine-lines.js';

function make(
  max = 65_536,
  rules = [
    {
      name: 'hit',
      severity: 'warning' as const,
      class: 'custom' as const,
      match: 'ERR(?<code>\\d+) (?<msg>.*)$',
    },
  ],
) {
  const matches: RuleMatch[] = [];
  const engine: EngineValues[] = [];
  let truncated = 0;
  const s = new ChunkScanner(compileRuleSet(['sglang'], rules), max, {
    match: (m) => matches.push(m),
    engine: (v) => engine.push(v.values),
    truncated: () => truncated++,
  });
  const feed = (b: Buffer | string) => {
    const buf = Buffer.from(b);
    s.feed(buf, buf.length);
  };
  return { s, matches, engine, feed, truncated: () => truncated };
}

describe('ChunkScanner', () => {
  it('reassembles a UTF-8 character split across reads', () => {
    const { feed, matches } = make();
    const bytes = Buffer.from('ok\nERR7 température — 温度\n');
    const cut = bytes.indexOf(Buffer.from('温')) + 1; // inside the 3-byte character
    feed(bytes.subarray(0, cut));
    feed(bytes.subarray(cut));
    expect(matches.map((m) => m.fields)).toEqual([{ code: '7', msg: 'température — 温度' }]);
    expect(matches[0]!.offset).toBe(3);
  });

  it('strips CR of CRLF lines, so $ anchors work', () => {
    const { feed, matches, s } = make();
    feed('a\r\nERR1 x\r\nb\r\n');
    expect(matches.map((m) => m.fields.msg)).toEqual(['x']);
    expect(s.lines).toBe(3);
  });

  it('counts every line, and gives byte offsets of matches, for any chunking', () => {
    const text =
      Array.from({ length: 500 }, (_, i) => (i % 97 === 3 ? `ERR${i} boom` : `line ${i}`)).join('\n') + '\n';
    const whole = make();
    whole.feed(text);
    for (const size of [1, 5, 64, 4096]) {
      const c = make();
      for (let i = 0; i < text.length; i += size) c.feed(text.slice(i, i + size));
      expect(c.s.lines).toBe(500);
      expect(c.matches.map((m) => [m.offset, m.fields.code])).toEqual(
        whole.matches.map((m) => [m.offset, m.fields.code]),
      );
    }
    for (const m of whole.matches) expect(text.slice(m.offset, m.offset + 3)).toBe('ERR');
    expect(whole.s.committed).toBe(Buffer.byteLength(text));
  });

  it('truncates a line over the limit, counts it once, and keeps going', () => {
    const { feed, matches, truncated } = make(256);
    feed(`ERR1 ${'y'.repeat(300)}\nERR2 short\n`);
    expect(truncated()).toBe(1);
    expect(matches.map((m) => m.fields.code)).toEqual(['1', '2']);
    expect(matches[0]!.line.length).toBe(256);
    // A long line that arrives in pieces, without a newline yet: bounded memory, counted once.
    const b = make(256);
    for (let i = 0; i < 100; i++) b.feed('z'.repeat(1000));
    expect(b.truncated()).toBe(1);
    b.feed('\nERR3 after\n');
    expect(b.matches.map((m) => m.fields.code)).toEqual(['3']);
    expect(b.s.lines).toBe(2);
    expect(b.s.committed).toBe(100_000 + 1 + 'ERR3 after\n'.length);
  });

  it('holds a partial last line until it ends or is flushed', () => {
    const { feed, matches, s } = make();
    feed('ERR5 half');
    expect(matches).toEqual([]);
    expect(s.hasPartial).toBe(true);
    expect(s.committed).toBe(0);
    s.flush();
    expect(matches.map((m) => m.fields.msg)).toEqual(['half']);
    expect(s.committed).toBe(9);
  });

  it('reports the last batch line of a chunk as engine values', () => {
    const { feed, engine } = make();
    feed(
      '[t TP0] Decode batch, #running-req: 5, #queue-req: 1, \n[t TP0] Decode batch, #running-req: 7, #queue-req: 2, gen throughput (token/s): 9.50, \nother\n',
    );
    expect(engine).toEqual([{ running: 7, queued: 2, genThroughput: 9.5 }]);
  });

  it('reports the last batch line of every DP rank of a chunk, in file order', () => {
    const { feed, engine } = make();
    feed(
      '[t DP0 TP0] Decode batch, #running-req: 1, \n[t DP1 TP1] Decode batch, #running-req: 2, \n[t DP0 TP0] Decode batch, #running-req: 3, \nother\n',
    );
    expect(engine).toEqual([{ running: 2 }, { running: 3 }]);
    // The next chunk knows both ranks and stops looking once it has found them.
    feed('[t DP1 TP1] Decode batch, #running-req: 4, \n[t DP0 TP0] Decode batch, #running-req: 5, \n');
    expect(engine.slice(2)).toEqual([{ running: 4 }, { running: 5 }]);
  });
});

describe('batch-line skipping', () => {
  const lines = [
    '[2026-07-10 12:00:01 TP0] Decode batch, #running-req: 39, #token: 47393, token usage: 0.67, cuda graph: True, gen throughput (token/s): 499.85, #queue-req: 3, ',
    "[2026-07-10 12:00:01 TP0] Prefill bootstrap failed for request rank=0 req.rid='a' req.bootstrap_room=7 with exception KVTransferError(bootstrap_room=7): Aborted by AbortReq.",
    '[2026-07-10 12:00:02 DP1 TP1] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0, ',
    'Exception in thread Thread-1 (bootstrap_thread):',
    '[2026-07-10 12:00:02 TP0] Decode batch, #running-req: 40, #token: 47400, token usage: 0.68, ',
    "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    '[2026-07-10 12:00:03] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK',
  ];
  const text = Array.from({ length: 40 }, () => lines.join('\n')).join('\n') + '\n';

  function run(
    skip: boolean | undefined,
    rules: { name: string; severity: 'warning'; class: 'custom'; match: string }[] = [],
  ) {
    const set = compileRuleSet(['sglang', 'nixl', 'python'], rules);
    if (skip !== undefined) set.skipBatchLines = skip;
    const found: [number, string][] = [];
    const s = new ChunkScanner(set, 65_536, {
      match: (m) => found.push([m.offset, m.rule.name]),
      engine: () => {},
      truncated: () => {},
    });
    const buf = Buffer.from(text);
    for (let i = 0; i < buf.length; i += 333) {
      const part = buf.subarray(i, i + 333);
      s.feed(part, part.length);
    }
    return { found, lines: s.lines, set };
  }

  it('is on for the built-in packs and finds exactly what the full scan finds', () => {
    const fast = run(undefined);
    expect(fast.set.skipBatchLines).toBe(true);
    const full = run(false);
    expect(fast.found).toEqual(full.found);
    expect(fast.lines).toBe(full.lines);
    expect(new Set(fast.found.map(([, r]) => r))).toEqual(
      new Set(['sglang_prefill_bootstrap_aborted', 'nixl_bootstrap_thread_dead']),
    );
  });

  it.each([
    [
      'cache hit rate: 0\\.00%',
      '[2026-02-27 15:01:51 TP0] Prefill batch. #new-seq: 1, #new-token: 1, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0',
    ],
    [
      'pending-token: \\d{5,}',
      '[2026-02-27 15:01:51 TP0] Prefill batch, #new-seq: 1, #running-req: 0, #queue-req: 0, #pending-token: 40960, #bootstrap-req: 0, cuda graph: True, input throughput (token/s): 12.00',
    ],
    [
      'cpu graph: False',
      '[2026-02-27 15:01:51 TP0] Decode batch, #running-req: 4, #token: 2048, token usage: 0.02, cpu graph: False, gen throughput (token/s): 180.25, #queue-req: 0',
    ],
    [
      'out of memory',
      '[2026-02-27 15:01:51 TP0] Decode batch, #running-req: 4, out of memory: 1, #queue-req: 0',
    ],
  ])('a user rule on a batch-line field (%s) turns the skip off and sees the line', (match, line) => {
    const set = compileRuleSet(
      ['sglang', 'nixl', 'python'],
      [{ name: 'u', severity: 'warning', class: 'custom', match }],
    );
    expect(set.skipBatchLines).toBe(false);
    const found: string[] = [];
    const s = new ChunkScanner(set, 65_536, {
      match: (m) => found.push(m.rule.name),
      engine: () => {},
      truncated: () => {},
    });
    const buf = Buffer.from(line + '\n');
    s.feed(buf, buf.length);
    expect(found).toEqual(['u']);
  });

  it('keeps the skip for user rules that cannot occur in a batch line', () => {
    for (const match of ['CUDA out of memory', 'Traceback \\(most recent call last\\)', "KeyError: 'x'"]) {
      expect(
        compileRuleSet(['sglang'], [{ name: 'u', severity: 'warning', class: 'custom', match }])
          .skipBatchLines,
      ).toBe(true);
    }
  });

  it('is off when a rule could match a batch line, so that rule still sees them', () => {
    const rule = {
      name: 'busy',
      severity: 'warning' as const,
      class: 'custom' as const,
      match: '#running-req: (?<n>4\\d)',
    };
    const withRule = run(undefined, [rule]);
    expect(withRule.set.skipBatchLines).toBe(false);
    expect(withRule.found.filter(([, r]) => r === 'busy')).toHaveLength(40);
  });
});

describe('engine lines for the verdict timeline', () => {
  // Per second, rank and kind only the last batch line is handed on (the timeline has one-second resolution);
  // found on the rules' own walk, and the same with or without a rule set that lets batch lines be skipped.
  const d = (sec: number, prefix: string, running: number) =>
    `[2026-08-10 14:00:0${sec}${prefix}] Decode batch, #running-req: ${running}, #token: 1, token usage: 0.10, cuda graph: True, gen throughput (token/s): 5.00, #queue-req: 0`;
  const p = (sec: number, prefix: string, running: number) =>
    `[2026-08-10 14:00:0${sec}${prefix}] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.00, #running-req: ${running}, #queue-req: 0, `;
  const text =
    [
      d(1, ' DP0 TP0', 1),
      d(1, ' DP1 TP1', 2),
      p(1, ' DP0 TP0', 3),
      d(1, ' DP0 TP0', 4),
      'an unrelated line',
      d(1, ' DP1 TP1', 5),
      d(2, ' DP0 TP0', 6),
      'web-1  | [2026-08-10 14:00:02 TP0] Decode batch, #running-req: 7, #token: 1, token usage: 0.10, gen throughput (token/s): 1.00, #queue-req: 0',
      d(2, ' DP0 TP0', 8),
    ].join('\n') + '\n';
  for (const userRule of [false, true]) {
    it(`keeps the last line of each rank, kind and second${userRule ? ' (user rule that may match batch lines)' : ''}`, () => {
      const set = compileRuleSet(
        ['sglang'],
        userRule ? [{ name: 'u', severity: 'warning' as const, class: 'custom', match: 'batch' }] : [],
      );
      expect(set.skipBatchLines).toBe(!userRule);
      const seen: Array<[string, number | undefined]> = [];
      const s = new ChunkScanner(
        set,
        65_536,
        { match: () => {}, engine: (l) => seen.push([l.rank, l.values.running]), truncated: () => {} },
        0,
        true,
      );
      const buf = Buffer.from(text);
      s.feed(buf, buf.length);
      s.flush();
      expect(seen).toEqual([
        ['0', 3],
        ['0', 4],
        ['1', 5],
        ['0', 7],
        ['0', 8],
      ]);
    });
  }
});
