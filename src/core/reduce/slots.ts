// The probe case of the reducer: one probe result moves its slot (probe × endpoint × connection kind) —
// streaks, the intermittence window, the keep-alive reuse rule — and may confirm or clear a critical line.
import type { ProbeResultClass, ProbeResultSignal } from '../signals.js';
import { failThreshold, hangs as hangingKind, isCompletion } from '../vocabulary.js';
import { noteAnswer } from '../wrong-window.js';
import { noteServing } from './serving.js';
import { servedSince } from '../confirm.js';
import { slotKey, type ClassifierConfig, type DetectEvent, type TargetMemory } from '../memory.js';

/** Request ids of our own probes remembered (a toolcall matrix sends 7 a run, a canary a few). */
const OWN_IDS_KEEP = 256;
/** Abort lines one of our ids may discount: one per TP rank on each PD side of a large deployment. */
const OWN_ID_ABORTS = 16;

/** The run finished with an answer the probe rejected: the engine is not wedged, its output is wrong. */
const answeredWrong = (r: ProbeResultClass) =>
  r === 'toolcall_leak' || r === 'wrong_output' || r === 'reasoning_runaway';

export function onProbe(
  s: TargetMemory,
  signal: ProbeResultSignal,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): void {
  if (signal.result === 'skipped_overlap') return;
  rememberOwnIds(s, signal.requestIds);
  // The run has finished: its result replaces what its time in flight suggested.
  s.inflight = s.inflight?.filter(
    (i) => !(i.probe === signal.probe && i.endpoint === signal.endpoint && i.conn === signal.conn),
  );
  const kind = cfg.probes[signal.probe]?.kind ?? signal.probeKind;
  const key = slotKey(signal.probe, signal.endpoint, signal.conn);
  const slot = (s.slots[key] ??= {
    probe: signal.probe,
    probeKind: kind,
    endpoint: signal.endpoint,
    conn: signal.conn,
    failStreak: 0,
    okStreak: 0,
    slowStreak: 0,
    leakStreak: 0,
  });
  const threshold = failThreshold(kind, cfg.detect);
  const wasFailing = slot.failStreak >= threshold;
  // A pass over a new connection says nothing about reused ones: after a failure on a reused keep-alive
  // connection it neither clears the failure nor counts toward recovery ("fresh is fast, reused stalls").
  // The run right after a failure is on a new connection whatever the client believes: the failed run
  // (a timeout, a reset) closed the old one.
  // Bounded: a server that closes every idle connection never lets a reused run happen, and must not hold
  // the state hostage.
  const prevFailed = slot.last !== undefined && slot.last.result !== 'ok' && !answeredWrong(slot.last.result);
  const inconclusive =
    signal.conn === 'keepalive' &&
    signal.result === 'ok' &&
    slot.failStreak > 0 &&
    slot.reusedFailed === true &&
    // A primed run went second on a connection it opened itself: a reuse whatever came before.
    (signal.reusedConnection === false || (prevFailed && signal.primedConnection !== true)) &&
    (slot.inconclusive ?? 0) < cfg.detect.recoverAfter;
  if (inconclusive) slot.inconclusive = (slot.inconclusive ?? 0) + 1;
  else slot.inconclusive = 0;
  if (signal.conn === 'keepalive' && signal.reusedConnection !== false) {
    if (signal.result === 'ok') slot.reusedFailed = false;
    else if (!answeredWrong(signal.result)) slot.reusedFailed = true;
  }
  if (signal.result === 'ok') {
    if (!inconclusive) {
      // A finished completion went through this target's engines: they are not stuck, whatever their
      // gauges say (SGLang's log-derived gauges freeze at the last logged batch).
      if (isCompletion(kind)) for (const e of Object.values(s.engines)) e.lastProgressAt = now;
      slot.failStreak = 0;
      slot.okStreak++;
      slot.leakStreak = 0;
      const objective = cfg.probes[signal.probe]?.ttftObjective;
      // The engine's TTFT: what our own loop lost before reading the first token is ours (a loaded host).
      const slow =
        objective !== undefined &&
        signal.ttftMs !== undefined &&
        signal.ttftMs - (signal.ttftLoopLostMs ?? 0) > objective;
      slot.slowStreak = slow ? slot.slowStreak + 1 : 0;
      // A slow pass is no evidence of recovery from slow: back to ok needs recoverAfter fast ones.
      if (slow) slot.okStreak = 0;
      // Nor is a pass that was in flight hangAfter evidence of recovery from a hang: while it was in flight the
      // verdict called it hung, and counting it would flap wedged ↔ degraded on a crawling engine (vLLM
      // `slow` at the example's settings: every run 20–30 s).
      if (hangingKind(kind) && signal.durationMs >= cfg.detect.hangAfter) slot.okStreak = 0;
    }
  } else if (signal.result === 'toolcall_leak' || signal.result === 'reasoning_runaway') {
    // The completion finished, so the engine is not wedged: a parser (or model) problem, counted on its own; the
    // last result says which (verdict/candidates/format.ts).
    slot.failStreak = 0;
    slot.okStreak = 0;
    slot.slowStreak = 0;
    slot.leakStreak++;
  } else if (signal.result === 'wrong_output') {
    // Finished too, and worse: the deployment serves garbage. Degraded at once (verdict/candidates/answers.ts).
    slot.failStreak = 0;
    slot.okStreak = 0;
    slot.slowStreak = 0;
    slot.leakStreak = 0;
  } else {
    if (slot.failStreak === 0) slot.failSince = signal.start;
    slot.failStreak++;
    slot.okStreak = 0;
    slot.slowStreak = 0;
    slot.leakStreak = 0;
  }
  if (slot.failStreak === 0) slot.failSince = undefined;
  slot.last = {
    result: signal.result,
    start: signal.start,
    durationMs: signal.durationMs,
    ttftMs: signal.ttftMs,
    status: signal.status,
    phase: signal.phase,
    error: signal.error,
    reusedConnection: signal.reusedConnection,
  };
  // Wrong answers by window: a pass does not forget them (src/core/wrong-window.ts).
  if (isCompletion(kind)) noteAnswer(slot, signal.result, signal.error, signal.start);
  if (isCompletion(kind)) {
    const failed = signal.result !== 'ok' && !answeredWrong(signal.result);
    const window = cfg.detect.intermittentWindow;
    // The window outlives streaks: a wedge's solid streak is one episode and never reads as intermittence
    // (verdict/candidates/pattern.ts counts episodes), and clearing it on recovery made a steady intermittent fault restart its
    // count each time two failures happened to line up.
    const prev = slot.recent ?? [];
    // A memory from an older version has no times: its runs count as of now, and age out of the time bound.
    const prevAt = slot.recentAt?.length === prev.length ? slot.recentAt : prev.map(() => signal.start);
    slot.recent = [...prev, failed ? 1 : 0].slice(-window);
    slot.recentAt = [...prevAt, signal.start].slice(-window);
    // Whether each run went over a reused connection (kept, or primed by the run itself): keepalive_only
    // needs the failures to be reuses, not only to land in the keep-alive slot.
    // The run right after a failure is on a new connection whatever the client reports (as for `inconclusive`).
    // A primed run the hop made reconnect reports reusedConnection false (runner.ts): not a reuse.
    const reused = signal.reusedConnection === true && (signal.primedConnection === true || !prevFailed);
    slot.recentReused = [...(slot.recentReused ?? []), reused ? 1 : 0].slice(-window);
  }
  const label = `${signal.probe} on ${signal.endpoint}/${signal.conn}`;
  if (slot.failStreak === threshold && signal.result !== 'ok') {
    events.push({
      type: 'probe_failing',
      at: now,
      probe: signal.probe,
      endpoint: signal.endpoint,
      conn: signal.conn,
      result: signal.result,
      streak: slot.failStreak,
      error: signal.error,
    });
  } else if (wasFailing && slot.failStreak === 0) {
    events.push({
      type: 'probe_recovered',
      at: now,
      probe: signal.probe,
      endpoint: signal.endpoint,
      conn: signal.conn,
    });
  }
  const pending = s.pendingCritical;
  if (pending && isCompletion(kind)) {
    const failed = signal.result !== 'ok' && !answeredWrong(signal.result);
    // A failure confirms when it came with no first token in time; a run cut mid-stream is a slow stream.
    const end = signal.start + signal.durationMs;
    const noToken =
      signal.ttftMs === undefined ||
      signal.start + signal.ttftMs > Math.max(signal.start, pending.time) + cfg.detect.confirmAfter;
    // Nor while the engine served as the run waited (confirm.ts confirmsLine: queueing on a loaded engine).
    const served = servedSince(
      s.servingAt,
      Math.max(signal.start, pending.time),
      now,
      cfg.detect.confirmAfter,
    );
    if (failed && end >= pending.time && noToken && !served) {
      s.confirmedCritical = pending;
      s.pendingCritical = undefined;
      events.push({
        type: 'critical_confirmed',
        at: now,
        rule: pending.rule,
        diagnosis: pending.diagnosis,
        by: `${label}: ${signal.result}`,
      });
    } else if (signal.result === 'ok' && !inconclusive && signal.start >= pending.time) {
      s.pendingCritical = undefined;
      // A line a later completion passed past is not the cause of a wedge that comes afterwards.
      s.criticalSinceOk = s.criticalSinceOk.filter(
        (c) => !(c.time === pending.time && c.rule === pending.rule && c.service === pending.service),
      );
      events.push({ type: 'critical_unconfirmed', at: now, rule: pending.rule, by: `${label} passed` });
    }
  }
  if (isCompletion(kind)) {
    // A first token, or a whole answer (right or wrong): the engine served then. Noted after the run was judged:
    // its own late first token is no evidence against its own failure.
    if (signal.ttftMs !== undefined) noteServing(s, signal.start + signal.ttftMs);
    if (signal.result === 'ok' || answeredWrong(signal.result))
      noteServing(s, signal.start + signal.durationMs);
  }
}

/** Adds ids our probes sent to the bounded recent set (an id already there keeps its count). */
export function rememberOwnIds(s: TargetMemory, ids: readonly string[] | undefined): void {
  if (ids === undefined || ids.length === 0) return;
  const own = (s.ownIds ??= []);
  for (const id of ids) {
    if (own.some((o) => o.id === id)) continue;
    own.push({ id, left: OWN_ID_ABORTS });
  }
  if (own.length > OWN_IDS_KEEP) own.splice(0, own.length - OWN_IDS_KEEP);
}
