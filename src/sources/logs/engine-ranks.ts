// Engine totals from per-rank periodic lines. With SGLang DP attention every DP rank prints its own batch line
// and vLLM data parallel prints `Engine 000:` / `Engine 001:`: each rank keeps its last values (and its own
// gauges), and the engine gauges are totals that mean something: request counts and throughput summed, KV
// token usage the maximum over ranks (a sum could pass 1).
//
// The rank is a label the log names, so it is bounded (issue 37 item 4: 2,856 rank series from five prompts
// before the parser read only the engine's own lines): at most MAX_ENGINE_RANKS per source, a line of a rank past
// that refused and counted. A rank not heard from for RANK_TTL_MS while another rank of the source printed leaves
// the totals and its series go: an idle DP rank among busy ones, or a value the engine never printed. Nothing leaves
// while the whole engine is silent (a stalled engine prints no batch lines; its last values are the evidence).
import { setEngineGauges } from '../engines/gauges.js';
import type { EngineMetrics } from '../../metrics.js';
import type { EngineSignal } from '../../core/signals.js';
import { addTotals, type EngineLine, type EngineValues } from './engine-lines.js';

const SUMMED = ['running', 'queued', 'transferQueue', 'preallocQueue', 'genThroughput'] as const;

/**
 * Ranks kept per source. SGLang labels a line with its DP rank and vLLM with its engine index, so an engine has at
 * most its DP size of them; the largest DP deployments run 32 (metrics.ts documents the bound).
 */
export const MAX_ENGINE_RANKS = 64;
/** A rank silent this long while another rank printed leaves the totals (four vLLM stats intervals and more). */
export const RANK_TTL_MS = 60_000;
/** How often (by line time) ranks are looked at for expiry: a busy log has thousands of lines a second. */
const SWEEP_MS = 1000;

export class EngineRanks {
  private readonly ranks = new Map<string, EngineValues>();
  /** When each rank's last line came (the caller's clock: read time in the daemon, line time in replay). */
  private readonly seen = new Map<string, number>();
  private totalled = true;
  private last: EngineValues = {};
  private newest = -Infinity;
  private sweptAt = -Infinity;
  /** Ranks that left since the caller last drained them (their series must go). */
  private left: string[] = [];
  /** Lines refused because their rank would pass MAX_ENGINE_RANKS. */
  refused = 0;

  constructor(
    private readonly maxRanks = MAX_ENGINE_RANKS,
    private readonly ttlMs = RANK_TTL_MS,
  ) {}

  /** Records one rank's line; returns the engine totals over every rank kept, or undefined when it was refused. */
  apply(line: EngineLine, at = 0): EngineValues | undefined {
    return this.record(line, at) ? this.total : undefined;
  }

  /**
   * Records one rank's line without totalling: replay merges most engine lines of a second into one signal and
   * totals only the last (see `total`). False when the line was refused (a new rank past the bound).
   */
  record(line: EngineLine, at = 0): boolean {
    if (at > this.newest) this.newest = at;
    if (this.newest - this.sweptAt >= SWEEP_MS) this.sweep();
    const prev = this.ranks.get(line.rank);
    if (prev === undefined) {
      if (this.ranks.size >= this.maxRanks) this.sweep();
      if (this.ranks.size >= this.maxRanks) {
        this.refused++;
        return false;
      }
      // The rank's values are this object's own (copied on first sight).
      this.ranks.set(line.rank, { ...line.values });
    } else Object.assign(prev, line.values); // merged in place, keys as a spread of the two would order them
    this.seen.set(line.rank, Math.max(at, this.seen.get(line.rank) ?? at));
    this.totalled = false;
    return true;
  }

  /** Whether a line of `rank` would be kept (counted as refused when not); `record` keeps it. */
  admits(rank: string): boolean {
    if (this.ranks.has(rank) || this.ranks.size < this.maxRanks) return true;
    this.refused++;
    return false;
  }

  /** Drops the ranks silent for ttlMs before the newest line. */
  private sweep(): void {
    this.sweptAt = this.newest;
    for (const [rank, t] of this.seen) {
      if (this.newest - t < this.ttlMs) continue;
      this.seen.delete(rank);
      this.ranks.delete(rank);
      this.left.push(rank);
      this.totalled = false;
    }
  }

  /** The ranks that left since the last call (their per-rank series are to be removed). */
  drainLeft(): string[] {
    if (this.left.length === 0) return NONE;
    const out = this.left;
    this.left = [];
    return out;
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

const NONE: string[] = [];

/**
 * Sets the rank's gauges and the engine totals, and builds the detector's signal from the totals; undefined (and
 * counted) when the line's rank is refused.
 */
export function applyEngineLine(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  ranks: EngineRanks,
  line: EngineLine,
  nowMs: number,
): EngineSignal | undefined {
  const total = ranks.apply(line, nowMs);
  removeLeft(metrics, labels, ranks);
  if (total === undefined) {
    metrics.engineRanksRefused.inc(labels);
    return undefined;
  }
  setRankGauges(metrics, labels, line.rank, line.values);
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
  removeLeft(metrics, labels, ranks);
  for (const [rank, v] of ranks.perRank()) setRankGauges(metrics, labels, rank, v);
  setEngineGauges(metrics, labels, ranks.total);
  if (ranks.refused > 0) metrics.engineRanksRefused.inc(labels, ranks.refused);
  metrics.engineLastBatch.set(labels, lastBatchMs / 1000);
}

/** Removes the series of the ranks that left (a gauge keeps a label set until told otherwise). */
function removeLeft(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  ranks: EngineRanks,
): void {
  for (const rank of ranks.drainLeft()) {
    const rl = { ...labels, rank };
    metrics.engineRankRunning.remove(rl);
    metrics.engineRankQueued.remove(rl);
    metrics.engineRankTokenUsage.remove(rl);
    metrics.engineRankGenThroughput.remove(rl);
  }
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
