// The verdict for a target's current memory, before hysteresis: which state the evidence points at, with
// a diagnosis from a small fixed vocabulary (a metric label) and a cause a person can read.
import { countsForRecovery, type Diagnosis, wedgeCauses } from './vocabulary.js';
import { noFirstTokenWithin } from './confirm.js';
import { hangs as hangingKind, isCompletion } from './kinds.js';
import { mostSpecific } from './log-classes.js';
import { probeShapeVerdict } from './evidence/probe-shapes.js';
import { hungWithNothingFinished } from './shapes/context.js';
import { shapeVerdict } from './shapes/index.js';
import { incidentWarning, warningText } from './state/warnings.js';
import { wrongCause, wrongHeld } from './wrong-window.js';
import type {
  ClassifierConfig,
  CriticalMemory,
  EngineMemory,
  InflightRun,
  SlotMemory,
  TargetState,
  TargetStateName,
} from './state/memory.js';

/** The causes a wedge can have in full (log:<rule> causes come from critical rules outside the NIXL one). */
export const WEDGE_CAUSES: readonly string[] = wedgeCauses();

export interface Verdict {
  state: TargetStateName;
  diagnosis: Diagnosis | null;
  cause: string;
  /** For `ok`: no slot is part-way into a failure streak (unknown → ok waits for that). */
  clean: boolean;
}

const label = (m: SlotMemory) => `${m.probe} on ${m.endpoint}/${m.conn}`;
const why = (m: SlotMemory) =>
  `${label(m)}: ${m.last?.result ?? '?'}${m.last?.error ? ` (${m.last.error})` : ''}, ${m.failStreak} in a row`;

/** A completion run still in flight, and what its age already proves. */
interface Hang {
  run: InflightRun;
  ageMs: number;
  /** In flight confirmAfter past a critical line (or its own start, if later): a failure now. */
  afterCritical: boolean;
  /** In flight hangAfter: hung, whatever the logs say. */
  hung: boolean;
  /** In flight past the probe's TTFT objective: its first token is late already. */
  late: boolean;
}

function hangsOf(s: TargetState, now: number, cfg: ClassifierConfig): Hang[] {
  const d = cfg.detect;
  // The critical line a hang confirms (state.ts confirmByHang judges the same condition).
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
        critical <= now && noFirstTokenWithin(run.startedAt, run.firstTokenMs, critical, now, d.confirmAfter),
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
function withHangs(s: TargetState, hangs: Hang[], cfg: ClassifierConfig): SlotMemory[] {
  const d = cfg.detect;
  const slots = new Map(
    Object.entries(s.slots)
      .filter(([, m]) => m.last !== undefined)
      .map(([k, m]) => [k, m]),
  );
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

export function evaluate(s: TargetState, now: number, cfg: ClassifierConfig): Verdict {
  const d = cfg.detect;
  const hangs = hangsOf(s, now, cfg);
  const slots = withHangs(s, hangs, cfg);
  const verdict = (state: TargetStateName, diagnosis: Diagnosis | null, cause: string): Verdict => ({
    state,
    diagnosis,
    cause,
    clean: true,
  });

  const completion = slots.filter((m) => isCompletion(m.probeKind));
  // A hop whose own health or port fails while completions through a hop behind it pass is that hop's
  // problem (degraded, hop:<name>), not the deployment being down.
  const behindPasses = (hop: string) => {
    const i = cfg.hops.indexOf(hop);
    return completion.some((m) => cfg.hops.indexOf(m.endpoint) > i && m.failStreak === 0);
  };

  // The engine's counters, a crawl, a leak floor, the router's view (src/core/shapes/, issue 26): stronger evidence
  // of where to look than how the completions fail, which they are told too. A half-failed PD pair comes before
  // `down`: one refused leg while the router and the other leg answer is that pair's failure, not a dead target.
  const shapeCtx = {
    passing: completion.some((m) => m.failStreak === 0),
    stuck:
      (completion.some((m) => m.failStreak >= d.wedgeAfter) && !completion.some((m) => m.failStreak === 0)) ||
      hungWithNothingFinished(s, now, cfg),
  };
  const pair = shapeVerdict(s, now, cfg, shapeCtx, 'pair');
  if (pair) return verdict(pair.state, pair.diagnosis, pair.cause);
  // down: the health endpoint fails, or a port refuses.
  const healthFailing = slots.filter((m) => m.probeKind === 'health' && m.failStreak >= d.downAfter);
  const health = healthFailing.find((m) => !behindPasses(m.endpoint));
  // A health endpoint that answers (503, or no answer in time on an accepted connection) is a live server. SGLang's
  // /health runs a 1-token generation and returns 503 once the detokenizer heartbeat is older than
  // SGLANG_HEALTH_CHECK_TIMEOUT (20 s): sgl-project/sglang python/sglang/srt/entrypoints/http_server.py,
  // health_generate ("Health check failed. Server couldn't get a response from detokenizer for last {N} seconds").
  // With completions failing too, that is a wedge a restart fixes, not `down` (refused ports, dead processes).
  const alive = health !== undefined && health.last!.result !== 'connect_error';
  const anyPassing = completion.some((m) => m.failStreak === 0);
  const completionsFailing =
    completion.some((m) => m.failStreak >= d.wedgeAfter) ||
    hangs.some((h) => h.hung || h.afterCritical) ||
    s.confirmedCritical !== undefined;
  if (health && alive && completion.length > 0 && !anyPassing) {
    if (completionsFailing) {
      const c = s.confirmedCritical;
      if (c) return verdict('wedged', c.diagnosis, `${lineText(c)}, confirmed; ${why(health)}`);
      return verdict(
        'wedged',
        'health_generate_failing',
        `${why(health)} while the server answers; completions fail too`,
      );
    }
    // Completions are part-way into their own streak: they decide (wedged) within a round, no `down` detour.
  }
  // A live server whose completions still pass somewhere is degraded (below), never down: a completion slot
  // that last ran before the fault must not turn a 503 into `down` for a round.
  if (health && (!alive || completion.length === 0)) return verdict('down', 'health_failing', why(health));
  const refused = slots.find(
    (m) => m.last!.result === 'connect_error' && m.failStreak >= d.downAfter && !behindPasses(m.endpoint),
  );
  if (refused) return verdict('down', 'connection_refused', why(refused));
  const failing = completion.filter((m) => m.failStreak >= d.wedgeAfter);
  const passing = completion.filter((m) => m.failStreak === 0);
  const stalledEngine = Object.values(s.engines).find((e) => e.stalled);
  const serverinfoHang = slots.find(
    (m) => m.probeKind === 'serverinfo' && m.failStreak >= 1 && m.last!.result === 'timeout',
  );
  const stuckRouter = routerStuck(s, now, cfg);
  // A warning that came with the incident names it when nothing stronger does (EVIDENCE: below the engine's
  // own state and the path, above the bare symptom).
  const warned = incidentWarning(s, d.stallAfter);
  const flaky = intermittence(completion, cfg);

  // wedged: a confirmed critical signature, completions failing on every hop, or an engine with no progress.
  // A confirmed signature holds until completions pass again everywhere (the engine was restarted).
  // Passes from before the critical line are no evidence of recovery from it: every slot must pass again.
  const completionsBack = (since: number) =>
    completion.length > 0 &&
    completion.every(
      (m) =>
        m.failStreak === 0 && m.okStreak >= d.recoverAfter && m.last !== undefined && m.last.start >= since,
    );
  if (s.confirmedCritical && !completionsBack(s.confirmedCritical.time)) {
    const c = s.confirmedCritical;
    return verdict('wedged', c.diagnosis, `${lineText(c)}, confirmed by a failing or hung probe`);
  }
  const shaped = shapeVerdict(s, now, cfg, shapeCtx);
  if (shaped) return verdict(shaped.state, shaped.diagnosis, shaped.cause);
  // Every completion hung: a run has been in flight hangAfter and nothing has finished since it started (a
  // partial hang, one hop or keep-alive only, leaves passes after its start). No timeout needs to fire.
  const hungRuns = hangs.filter((h) => h.hung);
  if (hungRuns.length > 0) {
    const newest = hungRuns.reduce((a, b) => (b.run.startedAt > a.run.startedAt ? b : a));
    const finishedSince = Object.values(s.slots).some(
      (m) =>
        isCompletion(m.probeKind) &&
        (m.last?.result === 'ok' || m.last?.result === 'toolcall_leak') &&
        m.last.start + m.last.durationMs > newest.run.startedAt,
    );
    if (!finishedSince) {
      const r = newest.run;
      const text = `${r.probe} on ${r.endpoint}/${r.conn} in flight for ${Math.round(newest.ageMs / 1000)} s and no completion has finished since it started`;
      const critical = mostSpecific(s.criticalSinceOk);
      if (critical) return verdict('wedged', critical.diagnosis, `${text}; after ${lineText(critical)}`);
      if (stuckRouter) return verdict('wedged', 'router_stuck', `${text}; ${stuckRouter}`);
      if (stalledEngine)
        return verdict('wedged', 'engine_stalled', `${text}; ${stallText(stalledEngine, now)}`);
      // The engine's own health check fails on a live server: the engine, as when the completions fail.
      if (health && alive)
        return verdict(
          'wedged',
          'health_generate_failing',
          `${text}; ${why(health)} while the server answers`,
        );
      // The scheduler's own round trip hangs as well: the engine, not the path (as in the failing branch).
      if (serverinfoHang)
        return verdict(
          'wedged',
          'engine_stalled',
          `${text}; scheduler round trip hangs: ${why(serverinfoHang)}`,
        );
      if (warned)
        return verdict('wedged', `warning:${warned.class}`, `${text}; after ${warningText(warned)}`);
      return verdict('wedged', 'completions_hung', text);
    }
  }
  if (failing.length > 0 && passing.length === 0) {
    const critical = mostSpecific(s.criticalSinceOk);
    if (critical)
      return verdict('wedged', critical.diagnosis, `${why(failing[0]!)}; after ${lineText(critical)}`);
    if (stuckRouter) return verdict('wedged', 'router_stuck', `${why(failing[0]!)}; ${stuckRouter}`);
    if (stalledEngine) {
      return verdict('wedged', 'engine_stalled', `${why(failing[0]!)}; ${stallText(stalledEngine, now)}`);
    }
    if (serverinfoHang) {
      return verdict(
        'wedged',
        'engine_stalled',
        `${why(failing[0]!)}; scheduler round trip hangs: ${why(serverinfoHang)}`,
      );
    }
    if (warned)
      return verdict(
        'wedged',
        `warning:${warned.class}`,
        `${why(failing[0]!)}; after ${warningText(warned)}`,
      );
    if (flaky?.wedged) return verdict('wedged', 'intermittent', flaky.text);
    return verdict('wedged', 'completions_failing', why(failing[0]!));
  }
  // Most runs fail on every completion slot, with passes in between: the streaks come and go, the wedge stays.
  if (flaky?.wedged) {
    if (warned)
      return verdict('wedged', `warning:${warned.class}`, `${flaky.text}; after ${warningText(warned)}`);
    return verdict('wedged', 'intermittent', flaky.text);
  }
  // The router holds requests no engine is working on: nothing passes through it.
  if (stuckRouter && passing.length === 0) return verdict('wedged', 'router_stuck', stuckRouter);
  // A stall alone is a wedge only while no completion probe passes: gauges can freeze on an idle engine.
  if (stalledEngine && passing.length === 0)
    return verdict('wedged', 'engine_stalled', stallText(stalledEngine, now));

  // degraded: wrong answers, part of the path fails, tool calls leak, completions are slow, or aborts storm.
  // Serving garbage is as bad as serving nothing: it outranks every other degradation.
  const wrong = completion.find(wrongHeld);
  if (wrong) return verdict('degraded', 'wrong_output', wrongCause(wrong, label(wrong)));
  if (failing.length > 0) {
    // Long inputs or growing conversations fail while short completions pass (core/evidence/probe-shapes.ts).
    const shaped = probeShapeVerdict(failing, passing, cfg);
    if (shaped) return verdict(shaped.state, shaped.diagnosis, shaped.cause);
    // Only structured output fails while other completions finish: the grammar backend, not the engine.
    const otherPasses = passing.some((m) => m.probeKind !== 'structured');
    if (otherPasses && failing.every((m) => m.probeKind === 'structured')) {
      return verdict(
        'degraded',
        'structured_output_stalled',
        `${why(failing[0]!)}; completions without a response_format pass`,
      );
    }
    for (const f of failing) {
      if (f.conn !== 'keepalive') continue;
      // Keep-alive *only*: every other completion slot on the hop passed its whole window too. An intermittent
      // hang whose period lines up with the probe rounds can fail the keep-alive slot every time, but it hits
      // the tool-call matrix or the canary on the same hop as well.
      const othersClean = completion.every(
        (m) => m === f || m.endpoint !== f.endpoint || !(m.recent ?? []).includes(1),
      );
      const fresh = passing.find(
        (p) =>
          othersClean &&
          p.conn === 'fresh' &&
          p.endpoint === f.endpoint &&
          p.probe === f.probe &&
          reuseFails(f, p, d.intermittentWindow),
      );
      if (fresh) {
        return verdict(
          'degraded',
          'keepalive_only',
          `${why(f)}; ${label(fresh)} passes: look at the proxy/LB`,
        );
      }
    }
    const hopState = (hop: string) => {
      const on = completion.filter((m) => m.endpoint === hop);
      if (on.length === 0) return 'none';
      if (on.some((m) => m.failStreak === 0)) return 'pass';
      return on.some((m) => m.failStreak >= d.wedgeAfter) ? 'fail' : 'pending';
    };
    const probed = cfg.hops.filter((h) => hopState(h) !== 'none');
    for (let i = 0; i < probed.length - 1; i++) {
      if (hopState(probed[i]!) === 'fail' && hopState(probed[i + 1]!) === 'pass') {
        const f = failing.find((m) => m.endpoint === probed[i])!;
        return verdict('degraded', `hop:${probed[i]}`, `${why(f)}; ${probed[i + 1]} behind it passes`);
      }
    }
    // Some slot fails outright while others fail now and then (a tool-call matrix of 7 requests hits a hang in
    // three every run): the hangs are intermittent, the failing slot is their most visible symptom.
    if (warned)
      return verdict(
        'degraded',
        `warning:${warned.class}`,
        `${why(failing[0]!)}; after ${warningText(warned)}`,
      );
    if (flaky) return verdict('degraded', 'intermittent', `${flaky.text}; ${why(failing[0]!)}`);
    return verdict('degraded', 'completions_failing', why(failing[0]!));
  }
  const healthFailed = healthFailing.find((h) => behindPasses(h.endpoint) || anyPassing);
  if (healthFailed) {
    const h = healthFailed;
    if (!behindPasses(h.endpoint)) return verdict('degraded', 'health_failing', why(h));
    return verdict('degraded', `hop:${h.endpoint}`, `${why(h)}; completions through the hops behind it pass`);
  }
  if (stalledEngine) return verdict('degraded', 'engine_stalled', stallText(stalledEngine, now));
  const rank = stalledRank(s, now);
  if (rank) return verdict('degraded', 'rank_stalled', rank);
  if (flaky) {
    if (warned)
      return verdict('degraded', `warning:${warned.class}`, `${flaky.text}; after ${warningText(warned)}`);
    return verdict('degraded', 'intermittent', flaky.text);
  }
  const leak = completion.find((m) => m.leakStreak >= 1);
  if (leak)
    return verdict('degraded', 'toolcall_leak', `${label(leak)}: tool call markup leaked into content`);
  const slow = completion.find((m) => m.slowStreak >= d.wedgeAfter);
  if (slow) {
    const objective = cfg.probes[slow.probe]?.ttftObjective;
    const late = slow.last!.ttftMs === undefined && slow.last!.error !== undefined;
    return verdict(
      'degraded',
      'slow',
      late
        ? `${label(slow)}: no answer ${slow.last!.error}, over its ${objective} ms time-to-first-token objective`
        : `${label(slow)}: time to first token ${Math.round(slow.last!.ttftMs ?? 0)} ms over its ${objective} ms objective, ${slow.slowStreak} in a row`,
    );
  }
  const leaked = queueLeak(s, now, cfg);
  if (leaked) return verdict('degraded', 'queue_leak', leaked);
  const counted = shapeVerdict(s, now, cfg, shapeCtx, 'late');
  if (counted) return verdict(counted.state, counted.diagnosis, counted.cause);
  if (s.aborts.length >= d.abortStormCount) {
    return verdict(
      'degraded',
      'abort_storm',
      `${s.aborts.length} aborts within ${d.abortStormWindow / 1000} s`,
    );
  }

  if (slots.length === 0)
    return { state: 'unknown', diagnosis: null, cause: 'no probe result yet', clean: false };
  // Health answering is not the truth: with completion probes configured, ok waits for one to finish.
  const completionConfigured = Object.values(cfg.probes).some((p) => isCompletion(p.kind));
  if (completionConfigured && completion.length === 0)
    return { state: 'unknown', diagnosis: null, cause: 'no completion probe has finished yet', clean: false };
  const clean = slots
    .filter((m) => countsForRecovery(m.probeKind))
    .every((m) => m.failStreak === 0 && m.leakStreak === 0 && !m.wrongStreak);
  return { state: 'ok', diagnosis: null, cause: 'completions finish on every probed hop', clean };
}

/**
 * Failures that never line up into a streak: `intermittentFailures` of a completion slot's last
 * `intermittentWindow` runs failed (degraded). `wedged` when every completion slot's window is mostly failures and
 * passes come in between them (a solid run of failures after passes is a plain wedge, named by the streak).
 */
function intermittence(
  completion: SlotMemory[],
  cfg: ClassifierConfig,
): { wedged: boolean; text: string } | undefined {
  const d = cfg.detect;
  const fails = (m: SlotMemory) => (m.recent ?? []).reduce((a, b) => a + b, 0);
  // Two or more separate episodes of failure in the window: failures that come and go. One solid streak,
  // recovered or not, is a wedge, judged as failing, and names its own diagnosis.
  const interleaved = (m: SlotMemory) => episodes(m.recent ?? []) >= 2;
  const windowed = completion.filter((m) => (m.recent?.length ?? 0) > 0);
  const worst = windowed
    .filter(interleaved)
    .reduce<SlotMemory | undefined>((a, m) => (a === undefined || fails(m) > fails(a) ? m : a), undefined);
  if (worst === undefined || fails(worst) < d.intermittentFailures) return undefined;
  const wedged =
    windowed.length === completion.length &&
    windowed.every((m) => fails(m) * 2 > d.intermittentWindow) &&
    windowed.some(interleaved);
  const text = `${label(worst)}: ${fails(worst)} of its last ${worst.recent!.length} runs failed${
    worst.last && worst.last.result !== 'ok'
      ? ` (last: ${worst.last.result}${worst.last.error ? `, ${worst.last.error}` : ''})`
      : ''
  }${wedged ? '; most runs fail on every completion slot' : ', with passes in between'}`;
  return { wedged, text };
}

/** Maximal runs of failures (1s) in a window. */
function episodes(r: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < r.length; i++) if (r[i] === 1 && r[i - 1] !== 1) n++;
  return n;
}

/**
 * Reused connections fail where new ones pass: the failing keep-alive slot's failures in its window all went
 * over a reused connection and no reused run passed since the first of them, and the fresh slot of the same probe
 * and hop passed every run of a full window. Without that, a keep-alive slot that happens to fail
 * while its fresh twin passes is intermittence, not the proxy.
 */
export function reuseFails(keepalive: SlotMemory, fresh: SlotMemory, window: number): boolean {
  const r = keepalive.recent ?? [];
  const reused = keepalive.recentReused ?? [];
  if (reused.length !== r.length || keepalive.last?.reusedConnection !== true) return false;
  const first = r.indexOf(1);
  if (first < 0) return false;
  for (let i = first; i < r.length; i++) if (reused[i] === 1 && r[i] === 0) return false;
  if (r.some((f, i) => f === 1 && reused[i] !== 1)) return false;
  // A full window of fresh passes: two keep-alive failures beside two fresh passes are what intermittence
  // looks like too, and a keepalive_only named that early would hold for the whole incident.
  const f = fresh.recent ?? [];
  return f.length >= window && !f.includes(1);
}

/** A data-parallel rank stalled while its siblings produce tokens (state.ts judgeRanks). */
function stalledRank(s: TargetState, now: number): string | undefined {
  for (const e of Object.values(s.engines)) {
    for (const [id, r] of Object.entries(e.ranks ?? {})) {
      if (!r.stalled) continue;
      const working = Object.entries(e.ranks ?? {})
        .filter(([other, o]) => other !== id && !o.stalled)
        .map(([other]) => other);
      return `${e.service} rank ${id} holds ${r.running} running requests with no tokens for ${Math.round((now - r.lastProgressAt) / 1000)} s while rank${working.length > 1 ? 's' : ''} ${working.join(', ')} progress`;
    }
  }
  return undefined;
}

/**
 * PD queues that have held entries for leakAfter while the engine was seen running and queueing nothing in the
 * last stallAfter: the entries are not work waiting, they are leaked slots. Only reached while completions pass.
 */
function queueLeak(s: TargetState, now: number, cfg: ClassifierConfig): string | undefined {
  const d = cfg.detect;
  for (const e of Object.values(s.engines)) {
    if (e.unknown === true || e.queuedSince === undefined || e.queuedIdleAt === undefined) continue;
    if (now - e.queuedSince < d.leakAfter || now - e.queuedIdleAt >= d.stallAfter) continue;
    return `${e.service} holds ${e.preallocQueue} bootstrapping and ${e.transferQueue} in-transfer requests for ${Math.round((now - e.queuedSince) / 60_000)} min while it runs nothing and completions pass`;
  }
  return undefined;
}

/**
 * A router with requests in flight for stallAfter while every engine behind it has run, queued and held nothing
 * for as long: the requests are stuck in the router itself.
 */
function routerStuck(s: TargetState, now: number, cfg: ClassifierConfig): string | undefined {
  const engines = Object.values(s.engines).filter((e) => e.routerInflight === undefined);
  if (engines.length === 0) return undefined;
  if (engines.some((e) => e.unknown === true || e.idleSince === undefined)) return undefined;
  const idleFor = now - Math.max(...engines.map((e) => e.idleSince!));
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || r.routerBusySince === undefined || r.unknown === true) continue;
    const since = Math.min(now - r.routerBusySince, idleFor);
    if (since < cfg.detect.stallAfter) continue;
    return `${r.service} holds ${r.routerInflight} requests in flight while ${engines.map((e) => e.service).join(', ')} run and queue nothing, for ${Math.round(since / 1000)} s`;
  }
  return undefined;
}

/** A critical line as a cause: its rule and service, and the exception that ended its chain (issue 27). */
function lineText(c: CriticalMemory): string {
  return `${c.rule} on ${c.service}${c.rootCause !== undefined ? ` (root cause: ${c.rootCause})` : ''}`;
}

function stallText(e: EngineMemory, now: number) {
  return `${e.service} holds ${e.running} running and ${e.queued} queued requests (${e.transferQueue} in transfer, ${e.preallocQueue} bootstrapping) with no progress for ${Math.round((now - e.lastProgressAt) / 1000)} s`;
}
