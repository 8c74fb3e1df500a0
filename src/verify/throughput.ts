// throughput: a concurrency sweep. Each level runs a warm-up trial and --repeat counted trials (trials.ts); its
// figures are the trials' medians, each with the per-trial values the comparison's interval needs
// (level-figures.ts), and the sweep reports its knee (knee.ts). The per-request rate is the mean over requests
// of (that request's tokens / that request's time), not aggregate / concurrency.
import { findKnee, type Knee } from './knee.js';
import { levelFigureSet, medianOf, type TrialFigures } from './level-figures.js';
import { fixed1, secs } from './stats.js';
import { runTrials } from './trials.js';
import { levelsKnob, maxTokensKnob, timeoutKnob } from './knob-specs.js';
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

/** One level's figures: the medians over its counted trials. */
export interface LevelFigures extends TrialFigures {
  concurrency: number;
  n: number;
  maxTokens: number;
}

export interface LevelData extends LevelFigures {
  warmup: TrialFigures;
  warmupFlag?: string;
  trials: TrialFigures[];
}

export interface ThroughputData {
  levels: LevelData[];
  knee: Knee;
}

/** The median of each figure over trials (counts summed, the first error kept). */
export function medianTrial(trials: readonly TrialFigures[]): TrialFigures {
  const med = (f: (t: TrialFigures) => number) => medianOf(trials.map(f).filter(Number.isFinite));
  return {
    aggTokS: med((t) => t.aggTokS),
    perReqTokS: med((t) => t.perReqTokS),
    p50LatMs: med((t) => t.p50LatMs),
    p99LatMs: med((t) => t.p99LatMs),
    ttftP50Ms: med((t) => t.ttftP50Ms),
    ttftP99Ms: med((t) => t.ttftP99Ms),
    tpotP50Ms: med((t) => t.tpotP50Ms),
    tpotP99Ms: med((t) => t.tpotP99Ms),
    itlP50Ms: med((t) => t.itlP50Ms),
    itlP99Ms: med((t) => t.itlP99Ms),
    goodputReqS: med((t) => t.goodputReqS),
    tokens: trials.reduce((s, t) => s + t.tokens, 0),
    errors: trials.reduce((s, t) => s + t.errors, 0),
    wallMs: trials.reduce((s, t) => s + t.wallMs, 0),
    firstError: trials.find((t) => t.firstError !== undefined)?.firstError,
    reconnected: trials.reduce((s, t) => s + (t.reconnected ?? 0), 0),
  };
}

/** The note for requests a level sent again on a new connection (none when there were none). */
export function reconnectedTrials(
  label: string,
  lt: { warmup: TrialFigures; trials: TrialFigures[] },
): string[] {
  const n = [lt.warmup, ...lt.trials].reduce((s, t) => s + (t.reconnected ?? 0), 0);
  return n === 0
    ? []
    : [
        `${label}: ${n} requests found their connection closed by the server and were sent again on a new one`,
      ];
}

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)}ms` : 'n/a');

/**
 * `C=32  n=64  max_tokens=256 | agg=447.8 tok/s | per-req=14.1 tok/s | p50 lat=18.60s | …` (the issue's
 * format); with `trials`, the counts are over all of them and the rates are their medians.
 */
export function formatLevel(f: LevelFigures, trials = 1): string {
  return (
    `C=${f.concurrency}  n=${f.n}  max_tokens=${f.maxTokens} | agg=${fixed1(f.aggTokS)} tok/s | ` +
    `per-req=${fixed1(f.perReqTokS)} tok/s | p50 lat=${secs(f.p50LatMs)} | p99 lat=${secs(f.p99LatMs)} | ` +
    `ttft p50=${secs(f.ttftP50Ms)} p99=${secs(f.ttftP99Ms)} | tpot p50=${ms(f.tpotP50Ms)} p99=${ms(f.tpotP99Ms)} | ` +
    `itl p50=${ms(f.itlP50Ms)} p99=${ms(f.itlP99Ms)} | ` +
    (Number.isFinite(f.goodputReqS) ? `goodput=${f.goodputReqS.toFixed(2)} req/s | ` : '') +
    `toks=${f.tokens} errs=${f.errors} wall=${(f.wallMs / 1000).toFixed(1)}s` +
    (trials > 1 ? ` (median of ${trials} trials)` : '')
  );
}

/** Requests per level when only the concurrency is given: enough for two full waves, at least 3. */
export function defaultRequests(concurrency: number): number {
  return Math.max(3, 2 * concurrency);
}

/** "1,4,16,32" (requests per level: defaultRequests) or "1x3,32x64" (concurrency x requests), or a mix. */
export function parseLevels(text: string): Level[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*(?:x\s*(\d+))?\s*$/i.exec(part);
    const c = Number(m?.[1]);
    const n = m?.[2] === undefined ? defaultRequests(c) : Number(m[2]);
    if (!m || c < 1 || n < 1) {
      throw new Error(
        `expected levels like "1,4,16,32" (concurrency) or "1x3,32x64" (concurrency x requests), got ${JSON.stringify(part)}`,
      );
    }
    return { concurrency: c, n };
  });
}

export const throughputStep = defineStep<ThroughputKnobs>({
  name: 'throughput',
  flagPrefix: 'throughput',
  summary:
    'concurrency sweep, warm-up + --repeat trials per level (tok/s, latency, TTFT, TPOT, ITL, goodput; the knee)',
  knobs: {
    levels: levelsKnob(
      'levels',
      [
        { concurrency: 1, n: 3 },
        { concurrency: 32, n: 64 },
      ],
      'concurrency levels, e.g. 1,4,16,32,64,128 (requests: 2 per slot, at least 3) or 1x3,32x64',
    ),
    maxTokens: maxTokensKnob(256, 'per request'),
    timeoutMs: timeoutKnob(300_000),
  },
  async run(ctx, k) {
    const levels: LevelData[] = [];
    const figures: Record<string, Figure> = {};
    const warnings: string[] = [];
    const notes: string[] = [];
    for (const level of k.levels) {
      const lt = await runTrials(
        ctx.target,
        { ...level, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs },
        ctx.repeat,
        ctx.slo,
        (label, t) =>
          ctx.progress(
            `C=${level.concurrency} ${label}: agg=${fixed1(t.aggTokS)} tok/s, p50 lat=${secs(t.p50LatMs)}, errs=${t.errors}`,
          ),
      );
      const f: LevelData = {
        concurrency: level.concurrency,
        n: level.n,
        maxTokens: k.maxTokens,
        ...medianTrial(lt.trials),
        warmup: lt.warmup,
        warmupFlag: lt.warmupFlag,
        trials: lt.trials,
      };
      levels.push(f);
      ctx.progress(formatLevel(f, lt.trials.length));
      if (lt.warmupFlag) warnings.push(`C=${level.concurrency}: ${lt.warmupFlag}`);
      notes.push(...reconnectedTrials(`C=${level.concurrency}`, lt));
      Object.assign(figures, levelFigureSet(`c${level.concurrency}`, lt.trials));
    }
    const knee = findKnee(levels);
    const errs = levels.reduce((s, l) => s + l.errors + l.warmup.errors, 0);
    const failed = levels.find((l) => l.errors > 0 || l.warmup.errors > 0);
    const data: ThroughputData = { levels, knee };
    return {
      ok: errs === 0,
      summary:
        levels
          .map((l) => `C=${l.concurrency}: ${fixed1(l.aggTokS)} tok/s agg, ${fixed1(l.perReqTokS)} per-req`)
          .join('; ') +
        (levels.length > 2 ? `; ${knee.text}` : '') +
        (errs ? `; ${errs} errors (${failed?.firstError ?? failed?.warmup.firstError})` : ''),
      details: [
        ...levels.map((l) => formatLevel(l, l.trials.length)),
        knee.text,
        ...warnings.map((w) => `warning: ${w}`),
        ...notes,
      ],
      figures,
      data,
      saved: data,
    };
  },
});
