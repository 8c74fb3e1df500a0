// The after/before ratio of one figure with a distribution-free confidence interval: the Hodges–Lehmann
// estimate (median of all after_j / before_i ratios) and the interval from the Mann–Whitney U distribution's
// order statistics (Bauer 1972; Hollander & Wolfe §4.3). Exact for the small trial counts verify runs (5 per
// side), robust to one disturbed trial; why not a bootstrap: docs/decisions.md, "verify: the comparison".

export interface RatioInterval {
  /** Hodges–Lehmann estimate of after/before. */
  ratio: number;
  /** 95 % interval (or the nearest achievable level, see `level`); ±Infinity when none exists. */
  lo: number;
  hi: number;
  /** The interval's exact confidence level (≥ the asked one), 0 when no interval exists at these counts. */
  level: number;
  /** Two-sided exact Mann–Whitney p-value for "no change". */
  p: number;
  before: number;
  after: number;
}

/** counts[u] = number of arrangements of m and n ranks with Mann–Whitney U = u (no ties), u = 0..m·n. */
export function mannWhitneyCounts(m: number, n: number): number[] {
  // f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u): the largest observation belongs to one sample or the other.
  let prev: number[][] = Array.from({ length: n + 1 }, () => [1]);
  for (let i = 1; i <= m; i++) {
    const cur: number[][] = [[1]];
    for (let j = 1; j <= n; j++) {
      const size = i * j + 1;
      const row = new Array<number>(size).fill(0);
      const a = prev[j]!; // (i-1, j): the largest is from the first sample, adding j to U
      const b = cur[j - 1]!; // (i, j-1)
      for (let u = 0; u < a.length; u++) row[u + j]! += a[u]!;
      for (let u = 0; u < b.length; u++) row[u]! += b[u]!;
      cur.push(row);
    }
    prev = cur;
  }
  return m === 0 ? [1] : prev[n]!;
}

function median(sorted: readonly number[]): number {
  const k = sorted.length;
  return k % 2 ? sorted[(k - 1) / 2]! : (sorted[k / 2 - 1]! + sorted[k / 2]!) / 2;
}

/**
 * HL ratio and interval of `after` against `before` (all before values > 0). `confidence` defaults to 0.95; the
 * interval [R(k), R(mn+1-k)] of the sorted pairwise ratios has level 1 - 2·P(U < k).
 */
export function ratioInterval(
  before: readonly number[],
  after: readonly number[],
  confidence = 0.95,
): RatioInterval {
  const m = before.length;
  const n = after.length;
  if (m === 0 || n === 0 || before.some((x) => !(x > 0)))
    throw new Error('ratioInterval: needs trials on both sides and positive before values');
  const ratios: number[] = [];
  for (const x of before) for (const y of after) ratios.push(y / x);
  ratios.sort((a, b) => a - b);
  const counts = mannWhitneyCounts(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  const alpha = 1 - confidence;
  // Largest k with P(U ≤ k-1) ≤ alpha/2.
  let k = 0;
  let cdf = 0;
  for (let u = 0; u < counts.length; u++) {
    if ((cdf + counts[u]!) / total > alpha / 2) break;
    cdf += counts[u]!;
    k = u + 1;
  }
  const mn = m * n;
  // U for "after larger": pairs with after > before (ties count half).
  let u = 0;
  for (const x of before) for (const y of after) u += y > x ? 1 : y === x ? 0.5 : 0;
  const cdfAt = (v: number) => {
    let s = 0;
    for (let i = 0; i <= Math.floor(v) && i < counts.length; i++) s += counts[i]!;
    return s / total;
  };
  const p = Math.min(1, 2 * Math.min(cdfAt(u), 1 - cdfAt(Math.ceil(u) - 1)));
  const sortedB = [...before].sort((a, b) => a - b);
  const sortedA = [...after].sort((a, b) => a - b);
  return {
    ratio: median(ratios),
    lo: k >= 1 ? ratios[k - 1]! : -Infinity,
    hi: k >= 1 ? ratios[mn - k]! : Infinity,
    level: k >= 1 ? 1 - (2 * cdf) / total : 0,
    p,
    before: median(sortedB),
    after: median(sortedA),
  };
}
