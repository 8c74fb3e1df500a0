// The yardstick of the linearity tests: a plain pass over the same text, and the best of a few timings of each
// (the best, since a loaded machine only ever adds time). A pattern that backtracks is hundreds of such passes.

/** One plain pass over the text: what any matcher has to do at least once. */
export function plainScan(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return h;
}

/** The shortest of n runs of fn, in ms. */
export function best(fn: () => unknown, n = 3): number {
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

/**
 * The cost of `fn` over `line` in plain scans of it, judged against `factor`: the best of 3 of each, and where that
 * is past the factor the best of 15 more (interleaved), since on a loaded 2-core machine a run of a few ms is
 * preempted where a 0.1 ms scan is not. A backtracking pattern costs 10^4 scans and more on every run, so the
 * longer look clears only what the load added.
 */
export function overBound(fn: () => unknown, line: string, factor: number): string | undefined {
  let scan = Math.max(
    best(() => plainScan(line)),
    0.02,
  );
  let t = best(fn);
  for (let i = 0; i < 5 && t > factor * scan; i++) {
    scan = Math.max(
      Math.min(
        scan,
        best(() => plainScan(line)),
      ),
      0.02,
    );
    t = Math.min(t, best(fn));
  }
  return t > factor * scan ? `${t.toFixed(1)} ms vs scan ${scan.toFixed(3)} ms` : undefined;
}
