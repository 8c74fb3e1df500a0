// The /metrics parser's bounds (issue 24 #7): fed an adversarial 16 MB body in chunks, it holds at most one cut
// line and retains only what the limits allow, so its memory follows the limits, not the body; chunk boundaries
// change nothing it reads.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCRAPE_FAMILIES, SCRAPE_LABELS } from '../../src/sources/engines/map.js';
import {
  DEFAULT_LIMITS,
  parsePrometheusText,
  PromTextParser,
  type ParsedMetrics,
} from '../../src/sources/engines/promtext.js';

/** Deterministic pseudo-random numbers (xorshift32): the same splits on every run. */
function rng(seed: number) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** ~`bytes` of series a user can shape: long router paths, many engines, long escaped model names. */
function adversarial(bytes: number): Buffer {
  const long = ('y'.repeat(255) + '\\"').repeat(32); // ~8 KB, escapes throughout
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 50 === 49
        ? `sglang:num_running_reqs{tp_rank="0",pad="${'z'.repeat(70_000)}"} 1\n` // over maxLineBytes
        : i % 2 === 0
          ? `smg_http_responses_total{path="/v1/${long}${i}",status_code="200"} 1\n`
          : `vllm:num_requests_running{model_name="${long}",engine="${i}",a${i}="x"} 1\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join(''));
}

function labelBytes(p: ParsedMetrics): number {
  let n = 0;
  for (const s of p.samples) for (const v of Object.values(s.labels)) n += Buffer.byteLength(v);
  return n;
}

describe('prometheus text parser limits', () => {
  it('a 16 MB adversarial body in chunks: one cut line held at most, retained series and label bytes bounded', () => {
    const body = adversarial(16 * 1024 * 1024);
    const limits = { maxSeriesPerFamily: 500, maxLabelValueBytes: 256 };
    const p = new PromTextParser({ families: SCRAPE_FAMILIES, labels: SCRAPE_LABELS, limits });
    const next = rng(7);
    let maxPending = 0;
    for (let at = 0; at < body.length;) {
      const n = 1 + Math.floor(next() * 96 * 1024);
      p.push(body.subarray(at, at + n));
      maxPending = Math.max(maxPending, p.pending);
      at += n;
    }
    const out = p.end();
    expect(maxPending).toBeLessThanOrEqual(DEFAULT_LIMITS.maxLineBytes);
    expect(out.bad).toBe(0);
    expect(out.overlong).toBeGreaterThan(0);
    // Each family at its cap; the rest checked and dropped.
    const perFamily = new Map<string, number>();
    for (const s of out.samples) perFamily.set(s.name, (perFamily.get(s.name) ?? 0) + 1);
    expect(Object.fromEntries(perFamily)).toEqual({
      smg_http_responses_total: 500,
      'vllm:num_requests_running': 500,
    });
    expect(out.dropped).toBe(out.lines - 1000);
    // Only the labels a mapping reads, each cut at the cap (never inside an escape).
    for (const s of out.samples) {
      for (const [k, v] of Object.entries(s.labels)) {
        expect(SCRAPE_LABELS.has(k)).toBe(true);
        expect(Buffer.byteLength(v)).toBeLessThanOrEqual(256);
      }
    }
    // What is retained is a small fraction of the body: ≤ series × (cap per label × labels read).
    expect(labelBytes(out)).toBeLessThanOrEqual(1000 * 2 * 256);
    expect(labelBytes(out)).toBeLessThan(body.length / 50);
  });

  it('long label values are cut at maxLabelValueBytes, escapes decoded, a cut escape dropped', () => {
    const v = 'a'.repeat(2000);
    const p = parsePrometheusText(`x{l="${v}"} 1\ny{l="${'b'.repeat(1023)}\\"tail"} 2\n`);
    expect(p.samples.map((s) => s.labels.l!.length)).toEqual([1024, 1023]);
    expect(p.samples[1]!.labels.l).toBe('b'.repeat(1023));
  });

  it('a line over maxLineBytes is skipped unread and counted; the lines around it are read', () => {
    const p = parsePrometheusText(`a 1\nb{l="${'x'.repeat(70_000)}"} 2\nc 3\n`);
    expect(p.samples.map((s) => s.name)).toEqual(['a', 'c']);
    expect(p.overlong).toBe(1);
    expect(p.bad).toBe(0);
  });

  it('at most maxSeries in all and maxLabels per series', () => {
    const many = Array.from({ length: 100 }, (_, i) => `f${i % 4}{i="${i}"} 1`).join('\n');
    const p = parsePrometheusText(many, { limits: { maxSeries: 30 } });
    expect(p.samples).toHaveLength(30);
    expect(p.dropped).toBe(70);
    const wide = `w{${Array.from({ length: 70 }, (_, i) => `l${i}="v"`).join(',')}} 1\n`;
    const q = parsePrometheusText(wide);
    expect([q.samples.length, q.lines, q.dropped]).toEqual([0, 1, 1]);
  });

  it('chunk boundaries change nothing: each fixture read whole equals it read in random splits', () => {
    for (const name of ['dynamo.prom', 'llamacpp.prom', 'sglang-router.prom', 'tgi.prom']) {
      const text = readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url));
      const whole = parsePrometheusText(text.toString('utf8'));
      for (const seed of [1, 2, 3]) {
        const next = rng(seed);
        const p = new PromTextParser();
        for (let at = 0; at < text.length;) {
          const n = 1 + Math.floor(next() * 40);
          p.push(text.subarray(at, at + n));
          at += n;
        }
        expect(p.end()).toEqual(whole);
      }
    }
  });

  it('labels are checked even where not retained: a broken label in an unkept family is a bad line', () => {
    const p = parsePrometheusText('other{a="x} 1\nother{a="x"} 1 notatimestamp\nother{a="x"}1\n', {
      families: SCRAPE_FAMILIES,
    });
    expect([p.bad, p.lines, p.samples.length]).toEqual([3, 0, 0]);
  });
});
