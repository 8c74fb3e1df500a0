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
