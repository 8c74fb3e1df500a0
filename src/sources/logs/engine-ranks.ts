// Engine totals from per-rank periodic lines. With SGLang DP attention every DP rank prints its own batch line
// and vLLM data parallel prints `Engine 000:` / `Engine 001:`: each rank keeps its last values (and its own
// gauges), and the engine gauges are totals that mean something: request counts and throughput summed, KV
// token usage the maximum over ranks (a sum could pass 1).
import { setEngineGauges } from '../engines/gauges.js';
import type { EngineMetrics } from '../../metrics.js';
import type { EngineSignal } from '../../core/signals.js';
import { addTotals, type EngineLine, type EngineValues } from './engine-lines.js';

const SUMMED = ['running', 'queued', 'transferQueue', 'preallocQueue', 'genThroughput'] as const;

export class EngineRanks {
  private readonly ranks = new Map<string, EngineValues>();
  private totalled = true;
  private last: EngineValues = {};

  /** Records one rank's line; returns the engine totals over every rank seen. */
  apply(line: EngineLine): EngineValues {
    this.record(line);
    return this.total;
  }

  /**
   * Records one rank's line without totalling: replay merges most engine lines of a second into one signal and
   * totals only the last (see `total`).
   */
  record(line: EngineLine): void {
    const prev = this.ranks.get(line.rank);
    // The rank's values are this object's own (copied on first sight): merged in place, keys in the same order
    // as a spread of the two would give.
    if (prev === undefined) this.ranks.set(line.rank, { ...line.values });
    else Object.assign(prev, line.values);
    this.totalled = false;
  }

  /** The totals over every rank after the last line recorded. */
  get total(): EngineValues {
    if (this.totalled) return this.last;
    const total: EngineValues = {};
    for (const v of this.ranks.values()) {
      for (const k of SUMMED) if (v[k] !== undefined) total[k] = (total[k] ?? 0) + v[k];
      if (v.tokenUsage !== undefined) total.tokenUsage = Math.max(total.tokenUsage ?? 0, v.tokenUsage);
    }
    this.last = total;
    this.totalled = true;
    return total;
  }

  /** Every rank's last values (rank → values). */
  perRank(): ReadonlyMap<string, EngineValues> {
    return this.ranks;
  }

  get size(): number {
    return this.ranks.size;
  }
}

/** Sets the rank's gauges and the engine totals, and builds the detector's signal from the totals. */
export function applyEngineLine(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  ranks: EngineRanks,
  line: EngineLine,
  nowMs: number,
): EngineSignal {
  setRankGauges(metrics, labels, line.rank, line.values);
  const total = ranks.apply(line);
  setEngineGauges(metrics, labels, total);
  metrics.engineLastBatch.set(labels, nowMs / 1000);
  return engineSignal(labels, total, line, nowMs);
}

/**
 * Writes every rank's gauges and the totals from what `ranks` holds: replay applies its lines to `ranks` only
 * and writes the gauges once per file (a prom-client set hashes its labels, and nothing reads the gauges
 * before the end; per line it was most of the per-rank pass's cost on a batch-line-heavy log).
 */
export function writeEngineGauges(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  ranks: EngineRanks,
  lastBatchMs: number,
): void {
  for (const [rank, v] of ranks.perRank()) setRankGauges(metrics, labels, rank, v);
  setEngineGauges(metrics, labels, ranks.total);
  metrics.engineLastBatch.set(labels, lastBatchMs / 1000);
}

function setRankGauges(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  rank: string,
  v: EngineValues,
): void {
  const rl = { ...labels, rank };
  if (v.running !== undefined) metrics.engineRankRunning.set(rl, v.running);
  if (v.queued !== undefined) metrics.engineRankQueued.set(rl, v.queued);
  if (v.tokenUsage !== undefined) metrics.engineRankTokenUsage.set(rl, v.tokenUsage);
  if (v.genThroughput !== undefined) metrics.engineRankGenThroughput.set(rl, v.genThroughput);
}

/** The detector's signal for one engine line, from the engine totals. */
export function engineSignal(
  labels: { target: string; service: string },
  total: EngineValues,
  line: EngineLine,
  nowMs: number,
): EngineSignal {
  const sig: EngineSignal = {
    kind: 'engine',
    source: 'log',
    time: nowMs,
    ...labels,
    progress: line.progress,
  };
  addTotals(sig, total);
  // Per-rank stall evidence only from lines every rank prints on its own cadence (engine-lines.ts `periodic`).
  if (line.periodic === true) {
    sig.ranks = { [line.rank]: { running: line.values.running, progress: line.progress } };
  }
  return sig;
}
