// Whether a target, or one hop of it, should receive user traffic: a pure function of what the core remembers,
// so /ready, the agent-check port and the drainer all answer the same and tests read as plain data.
import type { TargetMemory } from '../../core/memory.js';
import { isCompletion, type TargetStateName } from '../../core/vocabulary.js';

/** Why a backend is not ready (a closed set: the route, the agent and the status page print it). */
export type NotReadyReason = 'state' | 'hop_failing';

export interface Readiness {
  target: string;
  /** The hop asked about; absent for the whole target. */
  endpoint?: string;
  ready: boolean;
  state: TargetStateName;
  diagnosis: string | null;
  /** Unix ms the target entered its state. */
  since: number;
  cause: string;
  reason?: NotReadyReason;
}

export interface ReadinessRules {
  /** States that are ready (web.readiness.ready). */
  ready: readonly TargetStateName[];
  /** Failed completions in a row that make a hop's slot failing (detect.wedgeAfter). */
  wedgeAfter: number;
  /** Failed health checks in a row, for a hop probed by health checks only (detect.downAfter). */
  downAfter: number;
}

/**
 * A hop is failing when every completion slot on it (each connection kind) is `wedgeAfter` failures deep, or, with
 * no completion probe on it, every health slot is `downAfter` deep; or when the verdict names the hop itself. A hop
 * with one connection kind passing still serves (keep-alive only failing is `degraded`, not out).
 */
export function hopFailing(m: TargetMemory, endpoint: string, rules: ReadinessRules): boolean {
  if (m.diagnosis === `hop:${endpoint}`) return true;
  const slots = Object.values(m.slots).filter((s) => s.endpoint === endpoint && s.last !== undefined);
  const completions = slots.filter((s) => isCompletion(s.probeKind));
  const judged = completions.length > 0 ? completions : slots;
  const depth = completions.length > 0 ? rules.wedgeAfter : rules.downAfter;
  return judged.length > 0 && judged.every((s) => s.failStreak >= depth);
}

export function readinessOf(m: TargetMemory, rules: ReadinessRules, endpoint?: string): Readiness {
  const base = {
    target: m.target,
    ...(endpoint !== undefined ? { endpoint } : {}),
    state: m.state,
    diagnosis: m.diagnosis,
    since: m.since,
    cause: m.cause,
  };
  // The target's verdict covers every hop: a wedged engine behind a passing proxy hop still hangs the proxy's users.
  if (!rules.ready.includes(m.state)) return { ...base, ready: false, reason: 'state' };
  if (endpoint !== undefined && hopFailing(m, endpoint, rules))
    return { ...base, ready: false, reason: 'hop_failing' };
  return { ...base, ready: true };
}
