// The verdict timeline `replay` prints: the signals a captured log carries (critical and abort lines, batch-line
// gauges), fed in the log's own time order through the detector's pure core (reduce), and what it concluded.
// No probes ran, so a critical line is reported as a daemon would have acted on it: wedged once a probe fails
// or hangs. The engine stall and the abort storm come out of the core exactly as the daemon computes them.
import { DETECT_DEFAULTS } from '../config/detect-defaults.js';
import type { DetectConfig } from '../config/schema.js';
import { reduceInPlace } from '../core/state/reduce.js';
import {
  initialState,
  type ClassifierConfig,
  type DetectEvent,
  type TargetState,
} from '../core/state/memory.js';
import type { EngineSignal, LogEventSignal } from '../core/signals.js';

export type TimedSignal = LogEventSignal | EngineSignal;

export interface TimelineEntry {
  /** Unix ms on the log's clock (a line without a year gets the year of the last line that had one). */
  at: number;
  service: string;
  kind: 'critical' | 'engine_stalled' | 'engine_progress' | 'abort_storm' | 'abort_storm_over';
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

export function replayTimeline(signals: TimedSignal[], detect?: Partial<DetectConfig>): Timeline {
  const cfg: ClassifierConfig = {
    detect: { ...DETECT_DEFAULTS, ...detect },
    hops: [],
    probes: {},
    engines: [...new Set(signals.map((s) => s.service))],
  };
  const ordered = signals.map((s, i) => [s, i] as const).sort((a, b) => a[0].time - b[0].time || a[1] - b[1]);
  const entries: TimelineEntry[] = [];
  if (ordered.length === 0) return { entries, caught: false };
  let state: TargetState = initialState('replay', ordered[0]![0].time);
  const gen = new Map<string, number>();
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
  for (const [sig] of ordered) {
    const gap = sig.time - now;
    if (gap > TICK_MS) {
      const every = Math.max(TICK_MS, Math.ceil(gap / MAX_TICKS_PER_GAP));
      for (let t = now + every; t < sig.time; t += every) step({ kind: 'tick' }, t);
    }
    now = Math.max(now, sig.time);
    if (sig.kind === 'engine' && sig.genThroughput !== undefined) gen.set(sig.service, sig.genThroughput);
    step(sig, sig.time);
  }
  const caught = entries.some((e) => e.kind === 'critical' || e.kind === 'engine_stalled');
  return { entries, caught };
}

function describe(e: DetectEvent, gen: Map<string, number>): TimelineEntry[] {
  switch (e.type) {
    case 'critical_log':
      return [
        {
          at: e.at,
          service: e.service,
          kind: 'critical',
          diagnosis: e.diagnosis,
          text: `wedged (${e.diagnosis}) once a probe fails or hangs: ${e.rule} on ${e.service}`,
        },
      ];
    case 'engine_stalled': {
      const tps = gen.get(e.service);
      const load = [
        `${e.running} running`,
        ...(e.queued > 0 ? [`${e.queued} queued`] : []),
        ...(e.transferQueue > 0 ? [`${e.transferQueue} in transfer`] : []),
        ...(e.preallocQueue > 0 ? [`${e.preallocQueue} in prealloc`] : []),
      ].join(', ');
      return [
        {
          at: e.at,
          service: e.service,
          kind: 'engine_stalled',
          diagnosis: 'engine_stalled',
          text: `engine_stalled: ${load}${tps !== undefined ? `, ${Math.round(tps)} tokens/s` : ''} for ${Math.round(e.sinceMs / 1000)} s on ${e.service}`,
        },
      ];
    }
    case 'engine_progress':
      return [
        { at: e.at, service: e.service, kind: 'engine_progress', text: `${e.service} makes progress again` },
      ];
    default:
      return [];
  }
}

/** `2026-08-10 14:07:24` for a timeline line. */
export function formatAt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
