import { describe, expect, it } from 'vitest';
import { ruleSchema } from '../../src/config/schema.js';
import { cri } from '../../src/sources/logs/formats/cri.js';
import { docker } from '../../src/sources/logs/formats/docker.js';
import { detectFormat, type LineFormat } from '../../src/sources/logs/formats/index.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { AutoFeed, Unwrapper } from '../../src/sources/logs/unwrap.js';
import { NUMBERED, criBytes, dockerBytes, engineLine } from './wrapped-lines.js';

const T0 = Date.UTC(2026, 11, 1, 5, 0, 0);

interface Seen {
  n: number;
  line: string;
  offset: number;
  stream: string;
  time: string | number;
}

/** A scanner with the numbered rule (+ built-in packs) behind an Unwrapper starting at `start`. */
function pipeline(format: LineFormat, start: number, maxLineBytes = 65_536) {
  const seen: Seen[] = [];
  const events: { rule: string; fields: Record<string, string> }[] = [];
  let truncated = 0;
  let malformed = 0;
  const set = compileRuleSet(['python'], [NUMBERED]);
  // The sink needs the unwrapper, which needs the scanner: tied up after both exist.
  const box: { u?: Unwrapper } = {};
  const scanner = new ChunkScanner(
    set,
    maxLineBytes,
    {
      match: (m) => {
        events.push({ rule: m.rule.name, fields: m.fields });
        if (m.rule.name !== 'numbered') return;
        const meta = box.u!.lookup(m.offset)!;
        seen.push({
          n: Number(m.fields.n),
          line: m.line,
          offset: meta.offset,
          stream: meta.stream,
          time: meta.time,
        });
      },
      engine: () => undefined,
      truncated: () => truncated++,
    },
    0,
  );
  const u = new Unwrapper(format, maxLineBytes, scanner, start, () => malformed++);
  box.u = u;
  return {
    u,
    scanner,
    seen,
    events,
    get truncated() {
      return truncated;
    },
    get malformed() {
      return malformed;
    },
  };
}

/** Feeds `bytes` in pieces of the given sizes (cycled), as the follower's reads would. */
function feedIn(u: { feed(b: Buffer, n: number): void }, bytes: Buffer, sizes: number[]): void {
  let i = 0;
  let k = 0;
  // A reused read buffer, as the follower has: the unwrapper must copy what it keeps.
  const buf = Buffer.alloc(1 << 16);
  while (i < bytes.length) {
    const n = Math.min(sizes[k++ % sizes.length]!, bytes.length - i, buf.length);
    bytes.copy(buf, 0, i, i + n);
    u.feed(buf, n);
    buf.fill(0x7e);
    i += n;
  }
}

function counts(seen: Seen[], total: number): { lost: number[]; duplicated: number[] } {
  const c = new Map<number, number>();
  for (const s of seen) c.set(s.n, (c.get(s.n) ?? 0) + 1);
  const lost: number[] = [];
  const duplicated: number[] = [];
  for (let n = 1; n <= total; n++) {
    if (!c.has(n)) lost.push(n);
    else if (c.get(n)! > 1) duplicated.push(n);
  }
  return { lost, duplicated };
}

describe('CRI lines', () => {
  it('parses the kubelet format and rejects other lines', () => {
    const e = cri.parse(Buffer.from('2016-10-06T00:17:09.669794202Z stderr F log content 2'))!;
    expect(e).toMatchObject({ time: '2016-10-06T00:17:09.669794202Z', stream: 'stderr', partial: false });
    expect(e.text.toString()).toBe('log content 2');
    expect(cri.parse(Buffer.from('2016-10-06T00:17:09.669794202Z stdout P:x part'))!.partial).toBe(true);
    expect(cri.parse(Buffer.from('2016-10-06T00:17:09Z stdout F'))!.text.length).toBe(0);
    expect(cri.parse(Buffer.from('[2026-02-19 16:32:51 TP0] Decode batch'))).toBeNull();
    expect(cri.parse(Buffer.from('2016-10-06T00:17:09.669794202Z stdin F x'))).toBeNull();
    expect(cri.parse(Buffer.from('2016-10-06T00:17:09.669794202Z stdout X x'))).toBeNull();
  });

  it('joins partial lines, keeps stream and time, and counts numbered lines exactly (0 lost, 0 duplicated)', () => {
    const N = 400;
    const parts: Buffer[] = [];
    for (let n = 1; n <= N; n++) {
      parts.push(criBytes(engineLine(n, 40_000), T0 + n, n % 3 === 0 ? 'stderr' : 'stdout'));
    }
    const bytes = Buffer.concat(parts);
    const p = pipeline(cri, 0);
    feedIn(p.u, bytes, [1, 7, 4096, 13, 65_536, 333]);
    p.u.flush();
    expect(counts(p.seen, N)).toEqual({ lost: [], duplicated: [] });
    expect(p.seen).toHaveLength(N);
    const long = p.seen.find((s) => s.n === 7)!;
    // Split into three P parts and an F: joined back whole, UTF-8 intact, at the first part's offset.
    expect(long.line).toBe(engineLine(7, 40_000));
    expect(long.offset).toBe(parts.slice(0, 6).reduce((a, b) => a + b.length, 0));
    expect(p.seen.find((s) => s.n === 3)).toMatchObject({ stream: 'stderr', line: engineLine(3) });
    expect(Date.parse(String(p.seen[9]!.time))).toBe(T0 + 10);
    expect(p.malformed).toBe(0);
    expect(p.u.committed).toBe(bytes.length);
  });

  it('a restart from `committed` at any cut repeats nothing and loses nothing', () => {
    const N = 40;
    const bytes = Buffer.concat(
      Array.from({ length: N }, (_, i) => criBytes(engineLine(i + 1, 100), T0, 'stdout', 64)),
    );
    for (let cut = 0; cut <= bytes.length; cut += 37) {
      const a = pipeline(cri, 0);
      a.u.feed(bytes, cut);
      const resume = a.u.committed;
      // Not flushed: this is a crash or a stop, where the held parts are not yet a line.
      const b = pipeline(cri, resume);
      const rest = bytes.subarray(resume);
      b.u.feed(Buffer.from(rest), rest.length);
      b.u.flush();
      expect(counts([...a.seen, ...b.seen], N), `cut at ${cut}`).toEqual({ lost: [], duplicated: [] });
    }
  });

  it('joins parts up to maxLineBytes, then cuts the line and reports it once', () => {
    const p = pipeline(cri, 0, 1024);
    const text = `n=1 ${'y'.repeat(5000)}`;
    p.u.feed(criBytes(text, T0, 'stdout', 700), criBytes(text, T0, 'stdout', 700).length);
    const next = criBytes(engineLine(2), T0);
    p.u.feed(next, next.length);
    expect(p.truncated).toBe(1);
    expect(p.seen.map((s) => s.n)).toEqual([1, 2]);
    expect(p.seen[0]!.line.length).toBe(1024);
  });

  it('passes a line that is not CRI on as it is, and counts it', () => {
    const p = pipeline(cri, 0);
    const b = Buffer.concat([criBytes('n=1', T0), Buffer.from('n=2 written by hand\n'), criBytes('n=3', T0)]);
    p.u.feed(b, b.length);
    expect(p.seen.map((s) => [s.n, s.stream])).toEqual([
      [1, 'stdout'],
      [2, ''],
      [3, 'stdout'],
    ]);
    expect(p.malformed).toBe(1);
  });
});

describe('Docker JSON lines', () => {
  it('unescapes the log text and joins partial entries', () => {
    const N = 300;
    const bytes = Buffer.concat(
      Array.from({ length: N }, (_, i) =>
        dockerBytes(engineLine(i + 1, 20_000) + ' \u0001 \u2028 日本', T0 + i),
      ),
    );
    const p = pipeline(docker, 0);
    feedIn(p.u, bytes, [5, 4096, 17, 65_536]);
    p.u.flush();
    expect(counts(p.seen, N)).toEqual({ lost: [], duplicated: [] });
    const s = p.seen.find((x) => x.n === 14)!;
    expect(s.line).toBe(engineLine(14, 20_000) + ' \u0001 \u2028 日本');
    expect(s).toMatchObject({ stream: 'stderr', time: new Date(T0 + 13).toISOString() });
    expect(p.malformed).toBe(0);
  });

  it('a Python traceback split across entries is one incident for the multi-line rule', () => {
    const tb = [
      'Exception in thread Thread-3 (bootstrap_thread):',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
      '    self.run()',
      '  File "/sgl/disaggregation/nixl/conn.py", line 620, in bootstrap_thread',
      '    raise RuntimeError("Bootstrap \\"room\\" failed")',
      'RuntimeError: Bootstrap "room" failed',
    ];
    const bytes = Buffer.concat(tb.map((l, i) => dockerBytes(l, T0 + i)));
    const p = pipeline(docker, 0);
    feedIn(p.u, bytes, [3, 50, 1000]);
    // The record closes on its last exception line once the next line (or the end, or an idle flush) shows it ended.
    p.u.flush();
    const ev = p.events.filter((e) => e.rule === 'python_thread_exception');
    expect(ev).toHaveLength(1);
    expect(ev[0]!.fields).toMatchObject({
      thread: 'Thread-3',
      target: 'bootstrap_thread',
      exception: 'RuntimeError',
      message: 'Bootstrap "room" failed',
    });
  });
});

describe('format: auto', () => {
  it('decides from the first line', () => {
    expect(detectFormat(criBytes('x', T0).subarray(0, -1))).toBe('cri');
    expect(detectFormat(dockerBytes('x', T0).subarray(0, -1))).toBe('docker');
    expect(detectFormat(Buffer.from('[2026-02-19 16:32:51 TP0] Decode batch'))).toBe('plain');
    expect(detectFormat(Buffer.from('{"not":"docker"}'))).toBe('plain');
  });

  it('holds bytes until the first line is whole, then hands all of it to the chosen reader', () => {
    const seen: string[] = [];
    const set = compileRuleSet([], [ruleSchema.parse({ name: 'any', severity: 'info', match: 'n=' })]);
    let chosen = '';
    const feed = new AutoFeed(0, (first) => {
      chosen = detectFormat(first);
      const scanner = new ChunkScanner(
        set,
        65_536,
        { match: (m) => seen.push(m.line), engine: () => undefined, truncated: () => undefined },
        0,
      );
      return new Unwrapper(docker, 65_536, scanner, 0);
    });
    const b = Buffer.concat([dockerBytes('n=1', T0), dockerBytes('n=2', T0)]);
    feedIn(feed, b, [10]);
    expect(chosen).toBe('docker');
    expect(seen).toEqual(['n=1', 'n=2']);
    expect(feed.committed).toBe(b.length);
  });
});
