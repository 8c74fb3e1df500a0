// The --report page in a real browser (Debian chromium, headless): it renders from its embedded data alone (a
// file:// URL, no server, a CSP that forbids any fetch), its charts carry the expected series and points, and
// engine text in it stays text.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareBaseline, baselineSummary, type SavedResults } from '../../src/verify/baseline.js';
import { renderHtmlReport, writeHtmlReport } from '../../src/verify/html-report.js';
import { chromium, requireChromium } from '../web/chromium.js';

function trial(aggTokS: number, latMs: number) {
  return {
    aggTokS,
    perReqTokS: aggTokS / 4,
    p50LatMs: latMs,
    p99LatMs: latMs * 1.5,
    ttftP50Ms: 20,
    ttftP99Ms: 40,
    tpotP50Ms: 10,
    tpotP99Ms: 12,
    itlP50Ms: 10,
    itlP99Ms: 14,
    goodputReqS: NaN,
    tokens: 100,
    errors: 0,
    wallMs: 1000,
  };
}

function run(scale: number, summary: string): SavedResults {
  const levels = [1, 4, 16].map((c) => {
    const trials = [0.98, 1, 1.02, 0.99, 1.01].map((j) => trial(c * 50 * scale * j, 1000 / scale));
    return { concurrency: c, n: 2 * c, maxTokens: 64, ...trials[1]!, warmup: trials[0]!, trials };
  });
  const figures = Object.fromEntries(
    levels.map((l) => [
      `c${l.concurrency}.agg_tok_s`,
      {
        value: l.aggTokS,
        unit: 'tok/s' as const,
        better: 'higher' as const,
        trials: l.trials.map((t) => t.aggTokS),
      },
    ]),
  );
  return {
    kind: 'wedgewatch-verify-results',
    version: 2,
    savedAt: '2026-12-01T00:00:00.000Z',
    url: 'http://127.0.0.1:1',
    model: 'sim-model',
    steps: [
      {
        step: 'throughput',
        ok: true,
        summary,
        durationMs: 1234,
        figures,
        saved: { levels, knee: { text: 'no knee' } },
      },
      {
        step: 'conversation',
        ok: false,
        summary: 'round 3 failed',
        durationMs: 900,
        figures: {},
        saved: {
          rounds: [1, 2, 3].map((round) => ({
            round,
            contextTokens: round * 500,
            ttftP50Ms: round === 3 ? NaN : 20 * round * scale,
            ttftMinMs: 10,
            ttftMaxMs: 60,
            completed: round === 3 ? 0 : 4,
          })),
        },
      },
    ],
  };
}

const HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
let dom = '';
let html = '';

beforeAll(async () => {
  requireChromium();
  const before = run(1, 'before run');
  const after = run(0.7, HOSTILE);
  const c = compareBaseline(before, after.steps, 0.1, 0.05);
  const path = join(mkdtempSync(join(tmpdir(), 'ww-report-')), 'report.html');
  writeHtmlReport(path, { before, after, comparison: { ...c, summary: baselineSummary(c) } });
  html = readFileSync(path, 'utf8');
  dom = await chromium(['--dump-dom', '--virtual-time-budget=2000'], pathToFileURL(path).href);
}, 90_000);

function svg(chart: string): string {
  return new RegExp(`<svg[^>]*data-chart="${chart}"[\\s\\S]*?</svg>`).exec(dom)?.[0] ?? '';
}
function series(chart: string): Record<string, { x: number; y: number }[]> {
  const out: Record<string, { x: number; y: number }[]> = {};
  for (const g of svg(chart).matchAll(/<g data-series="([^"]+)">([\s\S]*?)<\/g>/g)) {
    out[g[1]!] = [...g[2]!.matchAll(/<circle[^>]*data-x="([^"]+)"[^>]*data-y="([^"]+)"/g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
    }));
  }
  return out;
}

describe('verify --report (chromium)', () => {
  it('is self-contained: no external URL to load, a CSP that forbids fetching one', () => {
    expect(html).toContain(`default-src 'none'`);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:|\/\/)/i);
    expect(html).not.toMatch(/<link\b/i);
    // The hostile summary is inside the JSON with `<` escaped: it cannot close the data element.
    expect(html.split('</script>').length - 1).toBe(2);
  });

  it('renders: throughput against concurrency before and after, with the trials range bars', () => {
    expect(dom).toContain('data-rendered="true"');
    const tp = series('throughput');
    expect(Object.keys(tp).sort()).toEqual(['after', 'before']);
    expect(tp.before!.map((p) => p.x)).toEqual([1, 4, 16]);
    expect(tp.before!.map((p) => p.y)).toEqual([50, 200, 800]);
    expect(tp.after!.map((p) => Math.round(p.y))).toEqual([35, 140, 560]);
    expect([...svg('throughput').matchAll(/data-interval="/g)]).toHaveLength(6);
  });

  it('renders latency percentiles and TTFT per round (a hung round left out), and the verdict tables', () => {
    expect(Object.keys(series('latency')).sort()).toEqual([
      'after p50',
      'after p99',
      'before p50',
      'before p99',
    ]);
    expect(series('latency')['before p99']!.map((p) => p.y)).toEqual([1.5, 1.5, 1.5]);
    const rounds = series('ttft-rounds');
    expect(rounds.before!.map((p) => p.x)).toEqual([1, 2]);
    expect(rounds.after!.map((p) => p.y)).toEqual([0.014, 0.028]);
    expect(dom).toMatch(
      /<tr data-figure="throughput\.c16\.agg_tok_s"><td class="REGRESSION">REGRESSION<\/td>/,
    );
    expect(dom).toMatch(/<h2>Comparison: REGRESSION<\/h2>/);
    expect(dom).toMatch(
      /<tr data-step="conversation"><td>after<\/td><td>conversation<\/td><td class="FAIL">FAIL<\/td><td>0\.9s<\/td>/,
    );
  });

  it('keeps engine text as text', () => {
    expect(dom).not.toContain('<b>bold</b>');
    expect(dom).toContain('&lt;b&gt;bold&lt;/b&gt;');
    expect(dom).not.toMatch(/<title>pwned/);
    expect(renderHtmlReport({ after: run(1, 'x') })).not.toContain('"comparison":');
  });
});
