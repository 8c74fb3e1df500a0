// Small statistics helpers for latency and rate figures.

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/** Seconds with 2 decimals ("18.60s"), or "n/a". */
export function secs(ms: number): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)}s` : 'n/a';
}

export function fixed1(v: number): string {
  return Number.isFinite(v) ? v.toFixed(1) : 'n/a';
}
