// throughput: the sanity sweep at low and high concurrency. The per-request rate is the mean over requests of
// (that request's tokens / that request's time), not aggregate / concurrency.
import { runLoad, type LoadRun } from './load-run.js';
import { fixed1, mean, percentile, secs } from './stats.js';
import { defineStep, type Figure } from './types.js';

export interface Level {
  concurrency: number;
  n: number;
}

export interface ThroughputKnobs {
  levels: Level[];
  maxTokens: number;
  timeoutMs: number;
}

export interface LevelFigures {
  concurrency: number;
  n: number;
  maxTokens: number;
  aggTokS: number;
  perReqTokS: number;
  p50LatMs: number;
  p99LatMs: number;
  ttftP50Ms: number;
  tokens: number;
  errors: number;
  wallMs: number;
  firstError?: string;
}

export function levelFigures(level: Level, maxTokens: number, run: LoadRun): LevelFigures {
  const ok = run.results.filter((r) => r.ok);
  const tokens = run.results.reduce((s, r) => s + r.tokens, 0);
  return {
    concurrency: level.concurrency,
    n: level.n,
    maxTokens,
    aggTokS: tokens / (run.wallMs / 1000),
    perReqTokS: mean(ok.filter((r) => r.totalMs > 0).map((r) => r.tokens / (r.totalMs / 1000))),
    p50LatMs: percentile(
      ok.map((r) => r.totalMs),
      50,
    ),
    p99LatMs: percentile(
      ok.map((r) => r.totalMs),
      99,
    ),
    ttftP50Ms: percentile(ok.map((r) => r.ttftMs).filter(Number.isFinite), 50),
    tokens,
    errors: run.results.length - ok.length,
    wallMs: run.wallMs,
    firstError: run.results.find((r) => !r.ok)?.error,
  };
}

/** `C=32  n=64  max_tokens=256 | agg=447.8 tok/s | per-req=14.1 tok/s | p50 lat=18.60s | …` (the format). */
export function formatLevel(f: LevelFigures): string {
  return (
    `C=${f.concurrency}  n=${f.n}  max_tokens=${f.maxTokens} | agg=${fixed1(f.aggTokS)} tok/s | ` +
    `per-req=${fixed1(f.perReqTokS)} tok/s | p50 lat=${secs(f.p50LatMs)} | p99 lat=${secs(f.p99LatMs)} | ` +
    `ttft p50=${secs(f.ttftP50Ms)} | toks=${f.tokens} errs=${f.errors} wall=${(f.wallMs / 1000).toFixed(1)}s`
  );
}

export function parseLevels(text: string): Level[] {
  const levels = text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*x\s*(\d+)\s*$/i.exec(part);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
      throw new Error(
        `expected levels like "1x3,32x64" (concurrency x requests), got ${JSON.stringify(part)}`,
      );
    }
    return { concurrency: Number(m[1]), n: Number(m[2]) };
  });
  return levels;
}

export const throughputStep = defineStep<ThroughputKnobs>({
  name: 'throughput',
  flagPrefix: 'throughput',
  summary: 'sanity sweep at low and high concurrency (aggregate and per-request tok/s, latency, TTFT)',
  defaults: {
    levels: [
      { concurrency: 1, n: 3 },
      { concurrency: 32, n: 64 },
    ],
    maxTokens: 256,
    timeoutMs: 300_000,
  },
  knobs: [
    { key: 'levels', flag: 'levels', kind: 'levels', help: 'concurrency x requests per level' },
    { key: 'maxTokens', flag: 'max-tokens', kind: 'int', help: 'max_tokens per request' },
    { key: 'timeoutMs', flag: 'timeout', kind: 'duration', help: 'limit per request' },
  ],
  async run(ctx, k) {
    const levels: LevelFigures[] = [];
    const figures: Record<string, Figure> = {};
    for (const level of k.levels) {
      const run = await runLoad(ctx.target, { ...level, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs });
      const f = levelFigures(level, k.maxTokens, run);
      levels.push(f);
      ctx.progress(formatLevel(f));
      const key = `c${level.concurrency}`;
      const put = (name: string, value: number, unit: Figure['unit'], better: Figure['better']) => {
        if (Number.isFinite(value)) figures[`${key}.${name}`] = { value, unit, better };
      };
      put('agg_tok_s', f.aggTokS, 'tok/s', 'higher');
      put('per_req_tok_s', f.perReqTokS, 'tok/s', 'higher');
      put('p50_lat_s', f.p50LatMs / 1000, 's', 'lower');
      put('p99_lat_s', f.p99LatMs / 1000, 's', 'lower');
      put('ttft_p50_s', f.ttftP50Ms / 1000, 's', 'lower');
    }
    const errs = levels.reduce((s, l) => s + l.errors, 0);
    const failed = levels.find((l) => l.errors > 0);
    return {
      ok: errs === 0,
      summary:
        levels
          .map((l) => `C=${l.concurrency}: ${fixed1(l.aggTokS)} tok/s agg, ${fixed1(l.perReqTokS)} per-req`)
          .join('; ') + (errs ? `; ${errs} errors (${failed?.firstError})` : ''),
      details: levels.map(formatLevel),
      figures,
      data: levels,
    };
  },
});
