// The knee of a concurrency sweep: the level past which aggregate throughput stops growing. With levels in
// increasing concurrency, it is the first level whose next one adds less than KNEE_GAIN.
export const KNEE_GAIN = 0.1;

export interface Knee {
  /** The knee's concurrency, undefined when throughput still grows at the last level (or one level only). */
  concurrency?: number;
  text: string;
}

export function findKnee(levels: readonly { concurrency: number; aggTokS: number }[]): Knee {
  const sorted = [...levels].sort((a, b) => a.concurrency - b.concurrency);
  if (sorted.length < 2) return { text: 'one level: no knee to find (sweep with --throughput.levels)' };
  for (let i = 0; i + 1 < sorted.length; i++) {
    const here = sorted[i]!;
    const next = sorted[i + 1]!;
    const gain = next.aggTokS / here.aggTokS - 1;
    if (!(gain >= KNEE_GAIN)) {
      return {
        concurrency: here.concurrency,
        text: `knee at C=${here.concurrency}: C=${next.concurrency} adds ${gain >= 0 ? '+' : ''}${(gain * 100).toFixed(1)}% (< ${KNEE_GAIN * 100}%)`,
      };
    }
  }
  const last = sorted[sorted.length - 1]!;
  return {
    text: `no knee: throughput still grows ≥ ${KNEE_GAIN * 100}% per level up to C=${last.concurrency}`,
  };
}
