// Target memories built by hand for the verdict's unit tests: a slot, an engine, a critical line, a state around
// them at a fixed time. Only what a test names differs from a quiet, healthy default.
import { detectSchema } from '../../src/config/schema.js';
import {
  initialState,
  type ClassifierConfig,
  type CriticalMemory,
  type EngineMemory,
  type SlotMemory,
  type TargetMemory,
} from '../../src/core/memory.js';
import type { ConnKind, ProbeKind } from '../../src/core/signals.js';

export const NOW = 50_000_000;

export const cfg = (hops: string[] = ['router'], detect: Record<string, unknown> = {}): ClassifierConfig => ({
  detect: detectSchema.parse(detect),
  hops,
  probes: {
    chat: { kind: 'chat' },
    health: { kind: 'health' },
    info: { kind: 'serverinfo' },
    canary: { kind: 'canary' },
  },
});

type SlotResult = NonNullable<SlotMemory['last']>['result'];

/** A slot whose last run (finished `agoMs` before NOW) gave `result`; passing slots have passed twice. */
export function slot(
  probe: string,
  probeKind: ProbeKind,
  endpoint: string,
  result: SlotResult,
  more: Partial<SlotMemory> & { conn?: ConnKind; agoMs?: number; error?: string; status?: number } = {},
): SlotMemory {
  const { conn = 'fresh', agoMs = 5_000, error, status, ...rest } = more;
  const ok = result === 'ok';
  return {
    probe,
    probeKind,
    endpoint,
    conn,
    failStreak: ok || result === 'wrong_output' || result === 'toolcall_leak' ? 0 : 2,
    okStreak: ok ? 2 : 0,
    slowStreak: 0,
    leakStreak: 0,
    last: {
      result,
      start: NOW - agoMs,
      durationMs: 100,
      ...(error !== undefined ? { error } : {}),
      ...(status !== undefined ? { status } : {}),
    },
    ...rest,
  };
}

/** An engine scraped a second ago, idle and making progress, unless `more` says otherwise. */
export function engine(service: string, more: Partial<EngineMemory> = {}): EngineMemory {
  return {
    service,
    running: 0,
    queued: 0,
    transferQueue: 0,
    preallocQueue: 0,
    lastSignalAt: NOW - 1_000,
    lastProgressAt: NOW - 1_000,
    lastSource: 'metrics',
    stalled: false,
    ...more,
  };
}

export function critical(rule: string, service: string, more: Partial<CriticalMemory> = {}): CriticalMemory {
  return {
    time: NOW - 10_000,
    service,
    rule,
    diagnosis: `log:${rule}`,
    line: `${rule} line`,
    ...more,
  };
}

/** A target that left ok a while ago, with these slots and engines and whatever else `more` sets. */
export function target(
  slots: SlotMemory[],
  engines: EngineMemory[] = [],
  more: Partial<TargetMemory> = {},
): TargetMemory {
  return {
    ...initialState('t', NOW - 3_600_000),
    state: 'ok',
    lastOkAt: NOW - 120_000,
    slots: Object.fromEntries(slots.map((m) => [`${m.probe}|${m.endpoint}|${m.conn}`, m])),
    engines: Object.fromEntries(engines.map((e) => [e.service, e])),
    ...more,
  };
}
