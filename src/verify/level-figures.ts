// The figures of one load trial, as `vllm bench serve` and genai-perf report them: aggregate and per-request
// output tokens/s, end-to-end latency, time to first token (TTFT), time per output token after the first
// (TPOT = (latency - TTFT) / (tokens - 1), per request) and inter-token latency (ITL: every gap between two
// token chunks, pooled over requests), each at p50 and p99, and goodput under an SLO (requests/s meeting it).
// The definitions are vllm bench serve's: vllm-project/vllm vllm/benchmarks/serve.py calculate_metrics @009e6d4
// (tpot over output_len > 1; a one-token answer counts as TPOT 0 for goodput; request_goodput = good / duration).
import type { LoadRun } from './load-run.js';
import type { StreamResult } from './load-client.js';
import { mean, percentile } from './stats.js';
import type { Figure, Slo } from './types.js';

export interface TrialFigures {
  aggTokS: number;
  perReqTokS: number;
  p50LatMs: number;
  p99LatMs: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  tpotP50Ms: number;
  tpotP99Ms: number;
  itlP50Ms: number;
  itlP99Ms: number;
  /** Requests/s meeting every --slo bound; NaN without --slo. */
  goodputReqS: number;
  tokens: number;
  errors: number;
  wallMs: number;
  firstError?: string;
  /** Requests sent again on a new connection after the server closed the kept-alive one (load-client.ts). */
  reconnected?: number;
}

/** Each figure's key in the saved results, its unit, direction, and how it is read from a trial. */
export const FIGURE_SPECS: readonly {
  name: string;
  unit: Figure['unit'];
  better: Figure['better'];
  tail?: boolean;
  read(t: TrialFigures): number;
}[] = [
  { name: 'agg_tok_s', unit: 'tok/s', better: 'higher', read: (t) => t.aggTokS },
  { name: 'per_req_tok_s', unit: 'tok/s', better: 'higher', read: (t) => t.perReqTokS },
  { name: 'p50_lat_s', unit: 's', better: 'lower', read: (t) => t.p50LatMs / 1000 },
  { name: 'p99_lat_s', unit: 's', better: 'lower', tail: true, read: (t) => t.p99LatMs / 1000 },
  { name: 'ttft_p50_s', unit: 's', better: 'lower', read: (t) => t.ttftP50Ms / 1000 },
  { name: 'ttft_p99_s', unit: 's', better: 'lower', tail: true, read: (t) => t.ttftP99Ms / 1000 },
  { name: 'tpot_p50_s', unit: 's', better: 'lower', read: (t) => t.tpotP50Ms / 1000 },
  { name: 'tpot_p99_s', unit: 's', better: 'lower', tail: true, read: (t) => t.tpotP99Ms / 1000 },
  { name: 'itl_p50_s', unit: 's', better: 'lower', read: (t) => t.itlP50Ms / 1000 },
  { name: 'itl_p99_s', unit: 's', better: 'lower', tail: true, read: (t) => t.itlP99Ms / 1000 },
  { name: 'goodput_req_s', unit: 'req/s', better: 'higher', read: (t) => t.goodputReqS },
];

export function tpotMs(r: StreamResult): number {
  return r.tokens > 1 && Number.isFinite(r.ttftMs) ? (r.totalMs - r.ttftMs) / (r.tokens - 1) : NaN;
}

export function meetsSlo(r: StreamResult, slo: Slo): boolean {
  if (!r.ok) return false;
  if (slo.ttftS !== undefined && !(r.ttftMs <= slo.ttftS * 1000)) return false;
  if (slo.e2elS !== undefined && !(r.totalMs <= slo.e2elS * 1000)) return false;
  // A one-token answer has no TPOT: it cannot miss that bound.
  const tpot = tpotMs(r);
  if (slo.tpotS !== undefined && Number.isFinite(tpot) && !(tpot <= slo.tpotS * 1000)) return false;
  return true;
}

export function trialFigures(run: LoadRun, slo?: Slo): TrialFigures {
  const ok = run.results.filter((r) => r.ok);
  const tokens = run.results.reduce((s, r) => s + r.tokens, 0);
  const lat = ok.map((r) => r.totalMs);
  const ttft = ok.map((r) => r.ttftMs).filter(Number.isFinite);
  const tpot = ok.map(tpotMs).filter(Number.isFinite);
  const itl: number[] = [];
  for (const r of ok) {
    const t = r.tokenTimesMs ?? [];
    for (let i = 1; i < t.length; i++) itl.push(t[i]! - t[i - 1]!);
  }
  const wallS = run.wallMs / 1000;
  return {
    aggTokS: tokens / wallS,
    perReqTokS: mean(ok.filter((r) => r.totalMs > 0).map((r) => r.tokens / (r.totalMs / 1000))),
    p50LatMs: percentile(lat, 50),
    p99LatMs: percentile(lat, 99),
    ttftP50Ms: percentile(ttft, 50),
    ttftP99Ms: percentile(ttft, 99),
    tpotP50Ms: percentile(tpot, 50),
    tpotP99Ms: percentile(tpot, 99),
    itlP50Ms: percentile(itl, 50),
    itlP99Ms: percentile(itl, 99),
    goodputReqS: slo ? ok.filter((r) => meetsSlo(r, slo)).length / wallS : NaN,
    tokens,
    errors: run.results.length - ok.length,
    wallMs: run.wallMs,
    firstError: run.results.find((r) => !r.ok)?.error,
    reconnected: run.results.filter((r) => r.reconnected).length,
  };
}

/** The median of each figure over the counted trials, with the trials kept for the comparison. */
export function levelFigureSet(prefix: string, trials: readonly TrialFigures[]): Record<string, Figure> {
  const out: Record<string, Figure> = {};
  for (const spec of FIGURE_SPECS) {
    const values = trials.map(spec.read);
    if (values.length === 0 || !values.every(Number.isFinite)) continue;
    out[`${prefix}.${spec.name}`] = {
      value: medianOf(values),
      unit: spec.unit,
      better: spec.better,
      trials: values,
      ...(spec.tail ? { tail: true } : {}),
    };
  }
  return out;
}

export function medianOf(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const k = s.length;
  return k % 2 ? s[(k - 1) / 2]! : (s[k / 2 - 1]! + s[k / 2]!) / 2;
}
