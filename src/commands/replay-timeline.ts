// The verdict timeline `replay` prints: the signals a captured log carries (critical and abort lines, batch-line
// gauges), fed in the log's own time order through the detector's pure core (reduce), and what it concluded.
// No probes ran, so a critical line is reported as a daemon would have acted on it: wedged once a probe fails
// or hangs. The engine stall and the abort storm come out of the core exactly as the daemon computes them.
import { eventText } from '../core/event-text.js';
import { DETECT_DEFAULTS } from '../core/detect-settings.js';
import type { DetectConfig } from '../config/schema.js';
import { reduceInPlace } from '../core/reduce/reduce.js';
import { initialState, type ClassifierConfig, type DetectEvent, type TargetMemory } from '../core/memory.js';
import type { EngineSignal, LogEventSignal } from '../core/signals.js';

export type TimedSignal = LogEventSignal | EngineSignal;

export interface TimelineEntry {
  /** Unix ms on the log's clock (a line without a year gets the year of the last line that had one). */
  at: number;
  service: string;
  kind:
    'critical' | 'engine_stalled' | 'rank_stalled' | 'engine_progress' | 'abort_storm' | 'abort_storm_over';
  /** The diagnosis label the daemon would export (`kv_bootstrap_thread_dead`, `engine_stalled`, …). */
  diagnosis?: string;
  text: string;
}

export interface Timeline {
  entries: TimelineEntry[];
  /** A daemon watching these logs would have raised a wedge (critical line or engine stall). */
  caught: boolean;
}

/** Ticks between two signals further apart than this, so a stall is dated when it begins, not at the next line. */
const TICK_MS = 5_000;
/** Ticks in one gap at most (a log silent for days is ticked more coarsely). */
const MAX_TICKS_PER_GAP = 2_000;

/**
 * `clock`: times of stamped lines that are no signal (replay reads one per block it scans), `endAt`: the logs' last
 * stamped line. The daemon's clock runs on while an engine is quiet; replay's runs on every stamped line it knows,
 * so a stall is dated when the engine went quiet, not when its next line arrives.
 */
export function replayTimeline(
  signals: TimedSignal[],
  detect?: Partial<DetectConfig>,
  endAt?: number,
  clock: readonly number[] = [],
): Timeline {
  const cfg: ClassifierConfig = {
    detect: { ...DETECT_DEFAULTS, ...detect },
    hops: [],
    probes: {},
    engines: [...new Set(signals.map((s) => s.service))],
  };
  const ordered = signals.map((s, i) => [s, i] as const).sort((a, b) => a[0].time - b[0].time || a[1] - b[1]);
  const entries: TimelineEntry[] = [];
  if (ordered.length === 0) return { entries, caught: false };
  let state: TargetMemory = initialState('replay', ordered[0]![0].time);
  // The last throughput each service printed, and when: quoted for a stall only if printed during it.
  const gen = new Map<string, { tps: number; at: number }>();
  let storm = false;
  let now = ordered[0]![0].time;
  const step = (sig: TimedSignal | { kind: 'tick' }, at: number) => {
    const r = reduceInPlace(state, sig, at, cfg);
    state = r.state;
    for (const e of r.events) entries.push(...describe(e, gen));
    const inStorm = state.aborts.length >= cfg.detect.abortStormCount;
    if (inStorm !== storm) {
      storm = inStorm;
      entries.push({
        at,
        service: sig.kind === 'tick' ? '' : sig.service,
        kind: inStorm ? 'abort_storm' : 'abort_storm_over',
        ...(inStorm ? { diagnosis: 'abort_storm' } : {}),
        text: inStorm
          ? `abort_storm: ${state.aborts.length} aborts within ${cfg.detect.abortStormWindow / 1000} s`
          : 'abort storm over',
      });
    }
  };
  const clocks = [...clock].sort((a, b) => a - b);
  let ci = 0;
  for (const [sig] of ordered) {
    // Stamped lines between two signals move the clock (a stall shows while other lines go on).
    for (; ci < clocks.length && clocks[ci]! < sig.time; ci++) {
      if (clocks[ci]! - now > TICK_MS) {
        const every = Math.max(TICK_MS, Math.ceil((clocks[ci]! - now) / MAX_TICKS_PER_GAP));
        for (let t = now + every; t < clocks[ci]!; t += every) step({ kind: 'tick' }, t);
      }
      if (clocks[ci]! > now) {
        now = clocks[ci]!;
        step({ kind: 'tick' }, now);
      }
    }
    const gap = sig.time - now;
    if (gap > TICK_MS) {
      const every = Math.max(TICK_MS, Math.ceil(gap / MAX_TICKS_PER_GAP));
      for (let t = now + every; t < sig.time; t += every) step({ kind: 'tick' }, t);
    }
    now = Math.max(now, sig.time);
    if (sig.kind === 'engine' && sig.genThroughput !== undefined)
      gen.set(sig.service, { tps: sig.genThroughput, at: sig.time });
    step(sig, sig.time);
  }
  for (; ci < clocks.length; ci++) endAt = Math.max(endAt ?? clocks[ci]!, clocks[ci]!);
  // The log went quiet for the engine but its other lines went on: the clock runs to its last stamped line.
  if (endAt !== undefined && endAt > now) {
    const every = Math.max(TICK_MS, Math.ceil((endAt - now) / MAX_TICKS_PER_GAP));
    for (let t = now + every; t < endAt; t += every) step({ kind: 'tick' }, t);
    step({ kind: 'tick' }, endAt);
  }
  const caught = entries.some(
    (e) => e.kind === 'critical' || e.kind === 'engine_stalled' || e.kind === 'rank_stalled',
  );
  return { entries, caught };
}

function describe(e: DetectEvent, gen: Map<string, { tps: number; at: number }>): TimelineEntry[] {
  switch (e.type) {
    case 'critical_log':
      // A replayed log has no probes: the line is what would wedge the target once one fails or hangs.
      return [
        {
          at: e.at,
          service: e.service,
          kind: 'critical',
          diagnosis: e.diagnosis,
          text: `wedged (${e.diagnosis}) once a probe fails or hangs: ${eventText(e)}`,
        },
      ];
    case 'engine_stalled': {
      // A throughput only if a line printed it during the stall (vLLM's stats line does every 10 s; SGLang's last
      // batch line is from before it).
      const g = gen.get(e.service);
      const tps = g !== undefined && g.at > e.at - e.sinceMs ? g.tps : undefined;
      return [
        {
          at: e.at,
          service: e.service,
          kind: 'engine_stalled',
          diagnosis: 'engine_stalled',
          text: eventText(e, { tokensPerSecond: tps }),
        },
      ];
    }
    case 'rank_stalled':
      return [
        { at: e.at, service: e.service, kind: 'rank_stalled', diagnosis: 'rank_stalled', text: eventText(e) },
      ];
    case 'engine_progress':
      return [{ at: e.at, service: e.service, kind: 'engine_progress', text: eventText(e) }];
    default:
      return [];
  }
}

/** `2026-08-10 14:07:24` for a timeline line. */
export function formatAt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
