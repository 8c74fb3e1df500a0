// The engine's own failure counters (KV transfers failed, KV expired, requests aborted or preempted), as the
// increase since the last scrape: exported as wedgewatch_engine_failures_total{kind} so an alert can ask for
// `increase(...)` without knowing each engine's family names. A counter that goes down is a restarted engine:
// its new value is the increase since the restart.
import type { EngineFields } from './mappings/index.js';

/** The `kind` label of wedgewatch_engine_failures_total, and the field each reads (a closed set). */
export const ENGINE_FAILURE_KINDS = {
  kv_transfer_failed: 'kvTransferFailedTotal',
  kv_expired: 'kvExpiredTotal',
  aborted: 'abortedTotal',
  preempted: 'preemptedTotal',
} as const satisfies Record<string, keyof EngineFields>;

export type EngineFailureKind = keyof typeof ENGINE_FAILURE_KINDS;
export const ENGINE_FAILURE_KIND_NAMES = Object.keys(ENGINE_FAILURE_KINDS) as EngineFailureKind[];

export class FailureCounters {
  private readonly prev = new Map<EngineFailureKind, number>();

  /** The increase of each counter the fields carry; the first reading of a counter is its baseline, not an increase. */
  increase(fields: EngineFields): Partial<Record<EngineFailureKind, number>> {
    const out: Partial<Record<EngineFailureKind, number>> = {};
    for (const kind of ENGINE_FAILURE_KIND_NAMES) {
      const v = fields[ENGINE_FAILURE_KINDS[kind]];
      if (v === undefined || !Number.isFinite(v)) continue;
      const before = this.prev.get(kind);
      this.prev.set(kind, v);
      if (before === undefined) continue;
      const delta = v >= before ? v - before : v;
      if (delta > 0) out[kind] = delta;
    }
    return out;
  }
}
