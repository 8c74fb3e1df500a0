// What the memory shows, read once per verdict: which completions pass, fail or hang (a run in flight is evidence
// before its timeout fires), health and ports, intermittence, the incident's warning, and the engines' and the
// router's own state. The state (./state.ts) and every candidate family read these, never the memory's raw slots.
import { confirmsLine } from '../confirm.js';
import { hangs as hangingKind, isCompletion, recoverySlots } from '../vocabulary.js';
import { incidentWarning } from '../memory-read.js';
import type { ClassifierConfig, SlotMemory, TargetMemory } from '../memory.js';
import { intermittence } from './candidates/pattern.js';
import { halfFailedPair, routerStuck } from './candidates/router.js';
import { busyEngine } from './candidates/saturation.js';
import { why } from './text.js';
import type { Hang, Symptoms } from './types.js';

function hangsOf(s: TargetMemory, now: number, cfg: ClassifierConfig): Hang[] {
  const d = cfg.detect;
  // The critical line a hang confirms (state/evidence.ts confirmByHang judges the same condition).
  const critical = (s.confirmedCritical ?? s.pendingCritical)?.time ?? Infinity;
  const out: Hang[] = [];
  for (const run of s.inflight ?? []) {
    const probe = cfg.probes[run.probe];
    if (!hangingKind(probe?.kind)) continue;
    const ageMs = now - run.startedAt;
    const objective = probe?.ttftObjective;
    out.push({
      run,
      ageMs,
      afterCritical:
        critical <= now &&
        confirmsLine(run.startedAt, run.firstTokenMs, critical, now, d.confirmAfter, s.servingAt),
      hung: ageMs >= d.hangAfter,
      // Age past the objective with no first token yet: the first token is late already.
      late: objective !== undefined && run.firstTokenMs === undefined && ageMs > objective,
    });
  }
  return out;
}

/**
 * The slots as the verdict sees them: a run in flight is evidence before its timeout fires. A hang past a
 * critical line fails its slot outright, a hang past hangAfter counts as one more failure, and a run past its
 * TTFT objective counts as one more slow run. Slots whose first run is still in flight appear here too.
 */
function withHangs(s: TargetMemory, hangs: Hang[], cfg: ClassifierConfig): SlotMemory[] {
  const d = cfg.detect;
  const slots = new Map(Object.entries(s.slots).filter(([, m]) => m.last !== undefined));
  for (const h of hangs) {
    if (!h.afterCritical && !h.hung && !h.late) continue;
    const key = `${h.run.probe}|${h.run.endpoint}|${h.run.conn}`;
    const m: SlotMemory = s.slots[key] ?? {
      probe: h.run.probe,
      probeKind: cfg.probes[h.run.probe]!.kind,
      endpoint: h.run.endpoint,
      conn: h.run.conn,
      failStreak: 0,
      okStreak: 0,
      slowStreak: 0,
      leakStreak: 0,
    };
    const error = `in flight for ${Math.round(h.ageMs / 1000)} s`;
    const last = { start: h.run.startedAt, durationMs: h.ageMs, error };
    if (h.afterCritical || h.hung) {
      const failStreak = h.afterCritical ? Math.max(m.failStreak + 1, d.wedgeAfter) : m.failStreak + 1;
      slots.set(key, {
        ...m,
        failStreak,
        failSince: m.failSince ?? h.run.startedAt,
        okStreak: 0,
        slowStreak: 0,
        leakStreak: 0,
        last: { ...last, result: 'timeout' },
      });
    } else if (m.failStreak === 0) {
      // Late but not hung: one more slow run in the slot's streak now, not when it finishes. One late run
      // alone is not `slow` (a single sample over an objective is noise, as for finished runs).
      slots.set(key, {
        ...m,
        okStreak: 0,
        slowStreak: m.slowStreak + 1,
        last: { ...last, result: 'ok' },
      });
    }
  }
  return [...slots.values()];
}

/**
 * Every completion hung: a run in flight hangAfter and nothing finished since it started (a partial hang, one hop
 * or keep-alive only, leaves passes after its start). No timeout needs to fire. The newest such run, as a cause.
 */
function hungText(s: TargetMemory, hangs: Hang[]): string | undefined {
  const hung = hangs.filter((h) => h.hung);
  if (hung.length === 0) return undefined;
  const newest = hung.reduce((a, b) => (b.run.startedAt > a.run.startedAt ? b : a));
  const finishedSince = Object.values(s.slots).some(
    (m) =>
      isCompletion(m.probeKind) &&
      (m.last?.result === 'ok' ||
        m.last?.result === 'toolcall_leak' ||
        m.last?.result === 'reasoning_runaway') &&
      m.last.start + m.last.durationMs > newest.run.startedAt,
  );
  if (finishedSince) return undefined;
  const r = newest.run;
  return `${r.probe} on ${r.endpoint}/${r.conn} in flight for ${Math.round(newest.ageMs / 1000)} s and no completion has finished since it started`;
}

export function symptomsOf(s: TargetMemory, now: number, cfg: ClassifierConfig): Symptoms {
  const d = cfg.detect;
  const hangs = hangsOf(s, now, cfg);
  const slots = withHangs(s, hangs, cfg);
  const completion = slots.filter((m) => isCompletion(m.probeKind));
  const failing = completion.filter((m) => m.failStreak >= d.wedgeAfter);
  // A pass that started before the failures did says nothing about now: a structured probe every 2 m that last
  // passed before the engine stalled read as "some completion passes", and every wedge went degraded between its
  // hung rounds (decode_stall at the example cadence: 4 state changes while the fault held).
  // A failure streak of unknown start (a memory kept by an older version) judges no pass stale.
  const failingSince =
    failing.length === 0 ? -Infinity : Math.min(...failing.map((m) => m.failSince ?? -Infinity));
  const passing = completion.filter(
    (m) => m.failStreak === 0 && (m.last?.start ?? -Infinity) >= failingSince,
  );
  // A hop whose own health or port fails while completions through a hop behind it pass is that hop's
  // problem (degraded, hop:<name>), not the deployment being down.
  const behindPasses = (hop: string) => {
    const i = cfg.hops.indexOf(hop);
    return completion.some((m) => cfg.hops.indexOf(m.endpoint) > i && m.failStreak === 0);
  };
  const hung = hungText(s, hangs);

  const failingEverywhere = failing.length > 0 && passing.length === 0;
  // Busy is not wedged (issue 41 item 9): completions that wait for a slot on an engine that makes tokens are no
  // wedge, however long they wait (./candidates/saturation.ts); nor is one of our probes waiting behind our own.
  const load = busyEngine(s, now, cfg, hangs, failing);
  // A load beside another engine's stall explains nothing (./candidates/saturation.ts stalledBeside): the wedge rules
  // decide, and the stall's candidates name both.
  const busy = load?.beside === undefined ? load : undefined;
  const saturated = busy?.ours === false ? busy.text : undefined;
  const stuck = busy === undefined && (failingEverywhere || hung !== undefined);
  const healthFailing = slots.filter((m) => m.probeKind === 'health' && m.failStreak >= d.downAfter);
  const health = healthFailing.find((m) => !behindPasses(m.endpoint));
  // A health endpoint that answers (503, or no answer in time on an accepted connection) is a live server. SGLang's
  // /health runs a 1-token generation and returns 503 once the detokenizer heartbeat is older than
  // SGLANG_HEALTH_CHECK_TIMEOUT (20 s): sgl-project/sglang python/sglang/srt/entrypoints/http_server.py,
  // health_generate ("Health check failed. Server couldn't get a response from detokenizer for last {N} seconds").
  // With completions failing too, that is a wedge a restart fixes, not `down` (refused ports, dead processes).
  // A timeout alone is not an answer: a process frozen by SIGSTOP has its kernel accept the connection and
  // nothing answer (issue 38). It is a live server only when something else from it answered since health began
  // failing: a probe got response headers, or an engine's metrics scrape passed (SGLang's /metrics keeps
  // answering while /health waits on the stopped detokenizer).
  const healthSince = health?.failSince ?? -Infinity;
  const answeredSince =
    slots.some((m) => m.last?.status !== undefined && m.last.start >= healthSince) ||
    Object.values(s.engines).some(
      (e) => e.lastSource === 'metrics' && e.unknown !== true && e.lastSignalAt >= healthSince,
    );
  const silent = health !== undefined && health.last!.result === 'timeout' && !answeredSince;
  const alive = health !== undefined && health.last!.result !== 'connect_error' && !silent;
  // Completions fail on the live server: refused ones (nothing listened then) say nothing of its completions. An engine
  // restarted after a kill answers /health 503 while it loads, and the refusals from before it listened read as
  // "completions fail while the server answers" (the real server: down → wedged/health_generate_failing → down → ok).
  const completionsFailing =
    failing.some((m) => m.last?.result !== 'connect_error') ||
    hangs.some((h) => h.hung || h.afterCritical) ||
    s.confirmedCritical !== undefined;
  // Passes from before the critical line are no evidence of recovery from it: every slot must pass again — every slot
  // whose passes count for recovery (the hysteresis's own list): a long-input probe every 10 m held a restarted
  // target wedged on the spent line until two of its runs came after it, 10-20 minutes. With no slot that counts,
  // every completion slot does (recoverySlots): an empty list held a long-input-only target wedged for ever.
  const c = s.confirmedCritical;
  const recovering = recoverySlots(completion);
  const confirmedHolds =
    c !== undefined &&
    !(
      recovering.length > 0 &&
      recovering.every(
        (m) =>
          m.failStreak === 0 &&
          m.okStreak >= d.recoverAfter &&
          m.last !== undefined &&
          m.last.start >= c.time,
      )
    );
  const flaky = intermittence(completion, cfg, now);
  const stuckRouter = routerStuck(s, now, cfg);
  const pair = halfFailedPair(s, now, cfg, stuck);
  const wedgeText =
    pair ??
    hung ??
    (failingEverywhere ? why(failing[0]!) : undefined) ??
    (flaky?.wedged ? flaky.text : undefined);
  return {
    hangs,
    slots,
    completion,
    passing,
    failing,
    stuck,
    hungText: hung,
    health,
    alive,
    silent,
    healthGenerate: alive && completion.length > 0 && passing.length === 0 && completionsFailing,
    healthFailed: healthFailing.find((h) => behindPasses(h.endpoint) || passing.length > 0),
    refused: slots.find(
      (m) => m.last!.result === 'connect_error' && m.failStreak >= d.downAfter && !behindPasses(m.endpoint),
    ),
    behindPasses,
    confirmedHolds,
    flaky,
    warned: incidentWarning(s, d.stallAfter),
    stalled: Object.values(s.engines).some((e) => e.stalled),
    stuckRouter,
    pair,
    saturated,
    ...(load?.beside !== undefined
      ? { besideLoad: { service: load.beside.stalled, load: load.beside.load, text: load.text } }
      : {}),
    wedgeText,
    degradedText: failing.length > 0 ? why(failing[0]!) : flaky?.text,
  };
}
