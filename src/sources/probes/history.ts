// Probe results over the last 24 hours for the status page's sparklines, per slot (target × probe × hop ×
// connection kind), in fixed-size buckets: one tier per span (5 min, 15 min, 1 h, 6 h, 24 h), each a ring of typed
// arrays indexed by bucket number, so memory is fixed per slot whatever the cadence or uptime: BYTES_PER_SLOT
// (6.6 KB), allocated on a slot's first result. A window is drawn from the finest tier that spans it, so a
// daemon started minutes ago (the demo) still gets one point per 2.5 s. The schedulers' own rings (100 results per target)
// cover minutes at the example cadence, not hours. Kept across reloads like the journal; slots the new config no
// longer has are dropped (retain()). Memory only: a restart starts the sparklines empty (the state strip comes
// from the journal, which is on disk).
import type { ConnKind, ProbeResultSignal } from '../../core/signals.js';

export const RANGES = { '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000 } as const;
export type RangeName = keyof typeof RANGES;
export const RANGE_NAMES = Object.keys(RANGES) as RangeName[];

/**
 * The tiers: span and buckets. At most 120 points a sparkline (a bucket is 2.5 s at 5 min, 10 s at 15 min, 1 min at 1 h, 5 min at
 * 6 h, 20 min at 24 h): fewer at the long spans keep 50 targets' page under 300 KB (bench:page-render).
 */
export const TIERS = [
  { spanMs: 300_000, buckets: 120 },
  { spanMs: 900_000, buckets: 90 },
  { spanMs: RANGES['1h'], buckets: 60 },
  { spanMs: RANGES['6h'], buckets: 72 },
  { spanMs: RANGES['24h'], buckets: 72 },
] as const;

/** Int32 bucket number, two Uint16 counts and two Float32 maxima per bucket. */
const BYTES_PER_BUCKET = 4 + 2 + 2 + 4 + 4;
export const BYTES_PER_SLOT = TIERS.reduce((n, t) => n + t.buckets * BYTES_PER_BUCKET, 0);

/** One bucket of a sparkline: the slowest passing run in it (NaN when none passed) and how many failed. */
export interface HistoryPoint {
  /** Start of the bucket, Unix ms. */
  t: number;
  /** Worst TTFT and duration of the runs that passed; undefined when none did (or the probe has no TTFT). */
  ttftMs?: number;
  durationMs?: number;
  runs: number;
  fails: number;
}

export interface SlotHistory {
  probe: string;
  endpoint: string;
  conn: ConnKind;
  bucketMs: number;
  /** The first and last bucket numbers of the window (bucket × bucketMs is its start). */
  firstBucket: number;
  lastBucket: number;
  /** Oldest first; buckets without a run are absent. */
  points: HistoryPoint[];
}

class Tier {
  readonly bucket: Int32Array;
  readonly runs: Uint16Array;
  readonly fails: Uint16Array;
  readonly ttft: Float32Array;
  readonly duration: Float32Array;

  constructor(
    readonly size: number,
    readonly widthMs: number,
  ) {
    this.bucket = new Int32Array(size).fill(-1);
    this.runs = new Uint16Array(size);
    this.fails = new Uint16Array(size);
    this.ttft = new Float32Array(size).fill(Number.NaN);
    this.duration = new Float32Array(size).fill(Number.NaN);
  }

  add(time: number, ok: boolean, ttftMs: number | undefined, durationMs: number): void {
    const b = Math.floor(time / this.widthMs);
    const i = b % this.size;
    if (this.bucket[i] !== b) {
      this.bucket[i] = b;
      this.runs[i] = 0;
      this.fails[i] = 0;
      this.ttft[i] = Number.NaN;
      this.duration[i] = Number.NaN;
    }
    // Saturating: a slot cannot run 65535 times in 20 minutes, but a counter must not wrap if it somehow did.
    if (this.runs[i]! < 0xffff) this.runs[i]!++;
    if (!ok) {
      if (this.fails[i]! < 0xffff) this.fails[i]!++;
      return;
    }
    // A NaN compares false: the first passing run sets the bucket's maximum.
    if (!(this.duration[i]! >= durationMs)) this.duration[i] = durationMs;
    if (ttftMs !== undefined && !(this.ttft[i]! >= ttftMs)) this.ttft[i] = ttftMs;
  }

  points(first: number, last: number): HistoryPoint[] {
    const out: HistoryPoint[] = [];
    for (let b = Math.max(first, last - this.size + 1); b <= last; b++) {
      const i = ((b % this.size) + this.size) % this.size;
      if (this.bucket[i] !== b) continue;
      const ttft = this.ttft[i]!;
      const duration = this.duration[i]!;
      out.push({
        t: b * this.widthMs,
        ...(Number.isNaN(ttft) ? {} : { ttftMs: ttft }),
        ...(Number.isNaN(duration) ? {} : { durationMs: duration }),
        runs: this.runs[i]!,
        fails: this.fails[i]!,
      });
    }
    return out;
  }
}

interface Slot {
  probe: string;
  endpoint: string;
  conn: ConnKind;
  tiers: Tier[];
}

const key = (probe: string, endpoint: string, conn: ConnKind) => `${probe}\u0000${endpoint}\u0000${conn}`;

export class ProbeHistory {
  private readonly targets = new Map<string, Map<string, Slot>>();

  record(r: ProbeResultSignal): void {
    // An overlap skip is not a run: the slot's run in flight will report.
    if (r.result === 'skipped_overlap') return;
    let slots = this.targets.get(r.target);
    if (slots === undefined) this.targets.set(r.target, (slots = new Map()));
    const k = key(r.probe, r.endpoint, r.conn);
    let slot = slots.get(k);
    if (slot === undefined) {
      const tiers = TIERS.map((t) => new Tier(t.buckets, t.spanMs / t.buckets));
      slot = { probe: r.probe, endpoint: r.endpoint, conn: r.conn, tiers };
      slots.set(k, slot);
    }
    for (const t of slot.tiers) t.add(r.start, r.result === 'ok', r.ttftMs, r.durationMs);
  }

  /** Every slot of `target` with its points from `from` to `now`, from the finest tier that spans them. */
  series(target: string, from: number, now: number): SlotHistory[] {
    const slots = this.targets.get(target);
    if (slots === undefined) return [];
    const spans = TIERS.findIndex((t) => t.spanMs >= now - from);
    const tier = spans < 0 ? TIERS.length - 1 : spans;
    return [...slots.values()].map((s) => {
      const t = s.tiers[tier]!;
      const lastBucket = Math.floor(now / t.widthMs);
      const firstBucket = Math.max(Math.floor(from / t.widthMs), lastBucket - t.size + 1);
      return {
        probe: s.probe,
        endpoint: s.endpoint,
        conn: s.conn,
        bucketMs: t.widthMs,
        firstBucket,
        lastBucket,
        points: t.points(firstBucket, lastBucket),
      };
    });
  }

  /** Drops the slots (and targets) `keep` says no longer exist, after a reload. */
  retain(keep: (target: string, probe: string, endpoint: string, conn: ConnKind) => boolean): void {
    for (const [target, slots] of this.targets) {
      for (const [k, s] of slots) if (!keep(target, s.probe, s.endpoint, s.conn)) slots.delete(k);
      if (slots.size === 0) this.targets.delete(target);
    }
  }

  /** How many slots are held (the memory bound is slots × BYTES_PER_SLOT). */
  slotCount(): number {
    let n = 0;
    for (const slots of this.targets.values()) n += slots.size;
    return n;
  }
}
