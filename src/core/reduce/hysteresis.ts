// Hysteresis between the verdict (verdict.ts) and the state: worse verdicts apply at once, better ones wait until
// every passing slot has passed since its failures and some completion slot recoverAfter times; a transition clears
// the evidence the passes post-date.
import { countsForRecovery, diagnosisEntry, EVIDENCE_KINDS } from '../vocabulary.js';
import { isCompletion, recoverySlots } from '../vocabulary.js';
import { wrongHeld } from '../wrong-window.js';
import type { Verdict } from '../verdict/evaluate.js';
import { heldVerdict, trackIncident } from './incident.js';
import type { ClassifierConfig, DetectEvent, TargetMemory, Transition } from '../memory.js';
import type { TargetStateName } from '../vocabulary.js';

/** Hysteresis: worse verdicts apply at once; back to ok needs a pass on every slot, recoverAfter on one. */
export function applyVerdict(
  s: TargetMemory,
  verdict: Verdict,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): Transition | undefined {
  const held = heldVerdict(s, verdict, now);
  const t = apply(s, held, now, cfg, events);
  trackIncident(s, held, now);
  return t;
}

function apply(
  s: TargetMemory,
  v: Verdict,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): Transition | undefined {
  if (v.state === 'unknown') return undefined;
  if (v.state === 'ok') {
    if (s.state === 'ok') {
      s.lastOkAt = now;
      // Staying ok clears what the passes post-date too, or an old line would name a wedge hours later.
      const evidence = oldestPassingCompletion(s, now);
      s.criticalSinceOk = s.criticalSinceOk.filter((c) => c.time > evidence);
      return undefined;
    }
    if (!v.clean) return undefined;
  }
  // Getting better (wedged → degraded → ok) waits until the passing slots have passed recoverAfter times,
  // so one lucky probe mid-round does not flap the state.
  if (s.state !== 'unknown' && RANK[v.state] < RANK[s.state] && !recovered(s, v.state, cfg)) {
    // While the state waits to get better, stronger evidence that fits the state it holds still names it (issue
    // 41: a stall that cleared is the third of a recurrence while the target waits out the hang it caused).
    if (v.diagnosis !== null && v.diagnosis !== s.diagnosis && strongerFitting(v.diagnosis, s))
      rename(s, v, now, events);
    return undefined;
  }
  if (v.state === s.state) {
    if (v.diagnosis !== s.diagnosis) rename(s, v, now, events);
    return undefined;
  }
  const t: Transition = { from: s.state, to: v.state, at: now, diagnosis: v.diagnosis, cause: v.cause };
  if (s.state === 'ok') s.lastOkAt = now;
  s.state = v.state;
  s.since = now;
  s.diagnosis = v.diagnosis;
  s.cause = v.cause;
  s.counters.transitions++;
  if (v.state === 'wedged') s.counters.wedges++;
  if (v.state === 'ok') {
    s.lastOkAt = now;
    // Passes only clear what they post-date: a critical line written while the passing round was already in
    // flight (the first round after startup, say, when the thread dies mid-round) still stands.
    const evidence = oldestPassingCompletion(s, now);
    s.criticalSinceOk = s.criticalSinceOk.filter((c) => c.time > evidence);
    s.confirmedCritical = undefined;
    if (s.pendingCritical !== undefined && s.pendingCritical.time <= evidence) s.pendingCritical = undefined;
  } else if (v.state === 'degraded' && (t.from === 'wedged' || t.from === 'down')) {
    // Out of a wedge into serving: every completion passed recoverAfter times since the confirmed line (or the
    // verdict would still be wedged), so the line is spent. Kept until ok, it re-wedged the target with the old
    // diagnosis on the next single failure or wrong answer after the restart that fixed it (the e2e's bootstrap
    // thread death, held degraded by its own KV tail, re-wedged on one wrong canary answer): a new wedge needs
    // new evidence. The incident still remembers the diagnosis (incident.ts), for naming only.
    const evidence = oldestPassingCompletion(s, now);
    s.criticalSinceOk = s.criticalSinceOk.filter((c) => c.time > evidence);
    if (s.confirmedCritical !== undefined && s.confirmedCritical.time <= evidence)
      s.confirmedCritical = undefined;
    if (s.pendingCritical !== undefined && s.pendingCritical.time <= evidence) s.pendingCritical = undefined;
    // KV transfers that fail as the wedge's stuck requests time out after the restart are its tail, not a
    // transfer path failing now (verdict/candidates/counters.ts holds only on failures after this).
    if (s.incident !== undefined) s.incident.servesSince = now;
  }
  events.push({ type: 'transition', ...t });
  return t;
}

function rename(s: TargetMemory, v: Verdict, now: number, events: DetectEvent[]): void {
  events.push({
    type: 'diagnosis',
    at: now,
    state: s.state,
    from: s.diagnosis,
    to: v.diagnosis,
    cause: v.cause,
  });
  s.diagnosis = v.diagnosis;
  s.cause = v.cause;
}

/** `d` fits the state the target holds and is of stronger evidence than the diagnosis it shows. */
function strongerFitting(d: string, s: TargetMemory): boolean {
  const next = diagnosisEntry(d);
  if (next === undefined || !next.states.includes(s.state)) return false;
  const now = s.diagnosis === null ? undefined : diagnosisEntry(s.diagnosis);
  return now === undefined || EVIDENCE_KINDS.indexOf(next.evidence) < EVIDENCE_KINDS.indexOf(now.evidence);
}

/**
 * When the oldest passing completion probe started: what happened before then, the passes have seen past. Only the
 * slots whose passes show a recovery (recoverySlots, the verdict's own list): a long-input pass every 10 m from
 * before the confirmed line kept the line on a target the verdict had already let out of its wedge.
 */
function oldestPassingCompletion(s: TargetMemory, now: number): number {
  let oldest = Infinity;
  for (const m of recoverySlots(Object.values(s.slots))) {
    if (m.last?.result === 'ok') oldest = Math.min(oldest, m.last.start);
  }
  // With no completion passing, no pass has seen past anything: nothing is cleared.
  return oldest === Infinity ? -Infinity : Math.min(oldest, now);
}

const RANK: Record<TargetStateName, number> = { unknown: -1, ok: 0, degraded: 1, wedged: 2, down: 3 };

/**
 * Every slot that is passing now has passed recoverAfter times in a row. A move to a state that says requests
 * are served (degraded, ok) needs a completion slot among them too, when the target has any: with nothing passing,
 * nothing shows a recovery (a crawl whose every run fails or hangs read as "all passing slots recovered" and
 * flapped wedged ↔ degraded with each verdict: `slow` at factor 345). down → wedged needs no pass: it is the same
 * outage named better (a half-failed pair, not a dead target). Out of wedged or down, the pass must have started after
 * the state did: a structured probe every 2 m that last passed before the stall shows nothing of now (health_503 at
 * the example cadence went wedged → degraded → wedged on such a pass). A slot inside its wrong-answer window is not
 * passing, whatever its last answer (wrong-window.ts): the window, not the streak, says it answers wrong.
 */
function recovered(s: TargetMemory, to: TargetStateName, cfg: ClassifierConfig): boolean {
  const slots = Object.values(s.slots).filter((m) => countsForRecovery(m.probeKind) && m.last !== undefined);
  const passing = slots.filter((m) => m.failStreak === 0 && m.leakStreak === 0 && !wrongHeld(m));
  const serves = to === 'degraded' || to === 'ok';
  if (
    serves &&
    slots.some((m) => isCompletion(m.probeKind)) &&
    !passing.some((m) => isCompletion(m.probeKind) && (s.state === 'degraded' || m.last!.start >= s.since))
  )
    return false;
  // A slot that passed once since its failures is recovered for itself: a structured probe every 5 m held the
  // target 5–10 minutes past a recovery every faster slot had shown (issue 38). The flap guard stays where the
  // evidence is fast: some completion slot passed recoverAfter times in a row since the state began (one lucky
  // probe mid-round still moves nothing). Without completion slots, every slot needs recoverAfter as before.
  // Out of wedged or down into degraded, every passing slot still needs recoverAfter: a slot failing while the
  // rest of a round passes reads degraded for the moment, and the relaxed rule stopped there mid-round
  // (wedged → degraded → ok within one round of probes).
  const completionPassing = passing.filter((m) => isCompletion(m.probeKind));
  if (completionPassing.length === 0 || to !== 'ok')
    return passing.every((m) => m.okStreak >= cfg.detect.recoverAfter);
  return (
    passing.every((m) => m.okStreak >= 1) &&
    completionPassing.some(
      (m) => m.okStreak >= cfg.detect.recoverAfter && (s.state === 'degraded' || m.last!.start >= s.since),
    )
  );
}
