import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import { reduce } from '../../src/core/reduce/reduce.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const cfg: ClassifierConfig = {
  detect: detectSchema.parse({
    stallAfter: '10s',
    abortStormCount: 3,
    abortStormWindow: '10s',
    confirmInterval: '5s',
  }),
  hops: ['proxy', 'router'],
  probes: {
    chat: { kind: 'chat', ttftObjective: 500 },
    tools: { kind: 'toolcall' },
    health: { kind: 'health' },
    info: { kind: 'serverinfo' },
  },
};

/** Passing chat probes report a 20 ms first token: the chat probe has a ttft objective. */
const run = () => new Run(cfg, { okTtftMs: 20 });

const THREAD_DEATH = [
  'Exception in thread Thread-7 (bootstrap_thread):',
  'Traceback (most recent call last):',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
].join('\n');

describe('classifier: basic transitions and hysteresis', () => {
  it('starts unknown and goes ok on the first clean round', () => {
    const r = run();
    expect(r.s.state).toBe('unknown');
    r.round();
    expect(r.s.state).toBe('ok');
    expect(r.transitions()).toEqual(['ok/-']);
  });

  it('stays unknown while a slot is part-way into a failure streak', () => {
    const r = run();
    r.probe({ endpoint: 'router', result: 'timeout' });
    expect(r.s.state).toBe('unknown');
  });

  it('a single failure does not leave ok; wedgeAfter failures on every slot wedge it', () => {
    const r = run();
    r.round();
    r.round('timeout');
    expect(r.s.state).toBe('ok');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('completions_failing');
    expect(r.s.counters.wedges).toBe(1);
    const ev = r.steps.flatMap((s) => s.events).filter((e) => e.type === 'probe_failing');
    expect(ev).toHaveLength(4);
  });

  it('back to ok: recoverAfter passes on one completion slot, one conclusive pass on every other (issue 38)', () => {
    const r = run();
    r.round();
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    r.round();
    // The fresh slots passed once: not recoverAfter (2) yet. The keep-alive slots' first pass after a failure ran
    // on a new connection: it does not count at all.
    expect(r.s.state).toBe('wedged');
    expect(r.s.slots['chat|router|keepalive']!.okStreak).toBe(0);
    r.round();
    // Fresh slots twice, keep-alive once over a reused connection: each slot has passed since its failures.
    expect(r.s.slots['chat|router|keepalive']!.okStreak).toBe(1);
    expect(r.s.state).toBe('ok');
    expect(r.transitions()).toEqual(['ok/-', 'wedged/completions_failing', 'ok/-']);
    expect(r.steps.flatMap((s) => s.events).filter((e) => e.type === 'probe_recovered')).toHaveLength(4);
  });

  it('ignores skipped_overlap results', () => {
    const r = run();
    r.round();
    for (let i = 0; i < 5; i++) r.probe({ endpoint: 'router', result: 'skipped_overlap' });
    expect(r.s.state).toBe('ok');
    expect(r.s.slots['chat|router|fresh']!.failStreak).toBe(0);
  });

  it('does not mutate the state it is given', () => {
    const r = run();
    r.round();
    const before = structuredClone(r.s);
    const frozen = r.s;
    reduce(
      frozen,
      {
        kind: 'probe',
        target: 't',
        probe: 'chat',
        probeKind: 'chat',
        endpoint: 'router',
        conn: 'fresh',
        result: 'timeout',
        start: 0,
        durationMs: 1,
      },
      r.now,
      cfg,
    );
    expect(frozen).toEqual(before);
  });
});

describe('classifier: diagnoses', () => {
  it('critical thread death asks for a confirmation round, rate limited, and one failing probe confirms it', () => {
    const r = run();
    r.round();
    const step = r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_died',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      fields: { thread: 'bootstrap_thread' },
    });
    expect(step.actions).toEqual([{ kind: 'confirm', reason: 'nixl_bootstrap_thread_died on prefill' }]);
    expect(step.events.map((e) => e.type)).toContain('critical_log');
    expect(r.s.state).toBe('ok');
    // Within confirmInterval: no second round.
    const again = r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_died',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
    });
    expect(again.actions).toEqual([]);
    r.now += 500;
    r.probe({ endpoint: 'router', result: 'timeout', start: r.now, durationMs: 1000, confirmation: true });
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(r.s.cause).toContain('confirmed by a failing or hung probe');
    // After confirmInterval a new critical line asks again.
    r.now += cfg.detect.confirmInterval;
    expect(
      r.log({
        severity: 'critical',
        rule: 'x_thread_died',
        class: 'kv_bootstrap_dead',
        line: 'Exception in thread Thread-9 (bootstrap_thread):',
      }).actions,
    ).toHaveLength(1);
  });

  it('a confirmation probe still in flight confirmAfter after the critical line confirms it (no waiting for its timeout)', () => {
    const r = run();
    r.round();
    r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      time: r.now,
    });
    const startedAt = r.now;
    const inflight = [{ probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt }];
    r.feed({ kind: 'tick', inflight }, cfg.detect.confirmAfter - 500);
    // Not confirmed yet (late for its TTFT objective, it is one slow run: not enough to leave ok).
    expect(r.s.state).toBe('ok');
    // A health probe hanging is not a completion and confirms nothing.
    r.feed(
      { kind: 'tick', inflight: [{ probe: 'health', endpoint: 'router', conn: 'fresh', startedAt }] },
      1000,
    );
    expect(r.s.state).toBe('ok');
    const step = r.feed({ kind: 'tick', inflight }, 0);
    expect(step.events).toContainEqual(
      expect.objectContaining({ type: 'critical_confirmed', by: expect.stringContaining('in flight') }),
    );
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  // Issue 24: a prompt wrote a fake traceback into the log and a merely slow engine "confirmed" it (wedged, a
  // bundle, remediation next). Confirmed means no first token within confirmAfter; a slow stream is not that.
  it('a slow stream confirms nothing: in flight past confirmAfter with its first token, or cut mid-stream', () => {
    const r = run();
    r.round();
    r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      time: r.now,
    });
    const startedAt = r.now;
    const streaming = [
      { probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt, firstTokenMs: 300 },
    ];
    // Three times confirmAfter, short of hangAfter (a run in flight that long is hung whatever the logs say).
    for (let i = 0; i < 3; i++) r.feed({ kind: 'tick', inflight: streaming }, cfg.detect.confirmAfter);
    expect(r.steps.flatMap((s) => s.events).map((e) => e.type)).not.toContain('critical_confirmed');
    expect(r.s.confirmedCritical).toBeUndefined();
    // It times out in the stream phase: a failure, but its first token came at once.
    r.probe({
      endpoint: 'router',
      result: 'timeout',
      phase: 'stream',
      start: startedAt,
      durationMs: r.now - startedAt,
      ttftMs: 300,
    });
    expect(r.s.confirmedCritical).toBeUndefined();
    expect(r.s.state).not.toBe('wedged');
    // A run whose first token does not come within confirmAfter does confirm.
    const late = [{ probe: 'chat', endpoint: 'proxy', conn: 'fresh' as const, startedAt: r.now }];
    r.feed({ kind: 'tick', inflight: late }, 0);
    r.feed({ kind: 'tick', inflight: late }, cfg.detect.confirmAfter);
    expect(r.s.confirmedCritical?.rule).toBe('nixl_bootstrap_thread_dead');
  });

  it('a failure whose first token came only after confirmAfter confirms (no first token in time)', () => {
    const r = run();
    r.round();
    r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      time: r.now,
    });
    const start = r.now;
    r.probe({
      endpoint: 'router',
      result: 'timeout',
      phase: 'stream',
      start,
      durationMs: cfg.detect.confirmAfter * 3,
      ttftMs: cfg.detect.confirmAfter * 2,
    });
    expect(r.s.confirmedCritical?.rule).toBe('nixl_bootstrap_thread_dead');
  });

  it('stays unknown while only health has answered: ok needs a finished completion', () => {
    const r = run();
    r.probe({ probe: 'health', probeKind: 'health', endpoint: 'router' });
    r.probe({ probe: 'health', probeKind: 'health', endpoint: 'proxy' });
    expect(r.s.state).toBe('unknown');
    r.probe({ endpoint: 'router' });
    expect(r.s.state).toBe('ok');
  });

  it('a thread death during the first round, which then passes, still names the wedge that follows', () => {
    const r = run();
    const roundStart = r.now;
    r.log({
      severity: 'critical',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
      time: r.now + 50,
    });
    // The round was in flight before the thread died: it passes, and the target is ok for now.
    for (const endpoint of ['proxy', 'router']) {
      for (const conn of ['fresh', 'keepalive'] as const) r.probe({ endpoint, conn, start: roundStart });
    }
    expect(r.s.state).toBe('ok');
    // The next completion fails: that confirms the thread death rather than an anonymous failure.
    r.probe({ endpoint: 'router', result: 'timeout', phase: 'first_token', start: r.now, durationMs: 1000 });
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('names the thread from the line when the rule has no field', () => {
    const r = run();
    r.round();
    r.log({
      severity: 'critical',
      rule: 'python_thread_exception',
      class: 'kv_bootstrap_dead',
      line: THREAD_DEATH,
    });
    r.probe({ endpoint: 'router', result: 'http_error', start: r.now + 200 });
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('a probe started after the critical line that passes leaves it unconfirmed', () => {
    const r = run();
    r.round();
    r.log({ severity: 'critical', rule: 'other_fatal', line: 'boom' });
    expect(r.s.pendingCritical?.diagnosis).toBe('log:other_fatal');
    const step = r.probe({ endpoint: 'router', start: r.now + 1000 });
    expect(step.events.map((e) => e.type)).toContain('critical_unconfirmed');
    expect(r.s.state).toBe('ok');
    expect(r.s.pendingCritical).toBeUndefined();
  });

  it('a failure before the critical line does not confirm it', () => {
    const r = run();
    r.round();
    const t = r.now;
    r.log({ severity: 'critical', rule: 'other_fatal', line: 'boom', time: t + 5000 });
    r.probe({ endpoint: 'router', result: 'timeout', start: t, durationMs: 100 });
    expect(r.s.state).toBe('ok');
    expect(r.s.pendingCritical).toBeDefined();
  });

  it('keepalive_only: reused connections fail while fresh ones pass, even with new-connection passes in between', () => {
    const r = run();
    // A healthy period: the fresh slot's whole window passed (keepalive_only needs that much evidence).
    for (let i = 0; i < 10; i++) r.round();
    const ka = (result: ProbeResultSignal['result'], reused: boolean) =>
      r.probe({ endpoint: 'proxy', conn: 'keepalive', result, reusedConnection: reused });
    ka('timeout', true);
    ka('ok', false); // the timeout closed the connection; a new one passes its first request
    r.probe({ endpoint: 'proxy', conn: 'fresh' });
    expect(r.s.state).toBe('ok');
    ka('timeout', true);
    // Two reused failures are a failing slot (a fault that fails one request in N gives that by chance); the
    // third names the proxy.
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('completions_failing');
    ka('ok', false);
    r.probe({ endpoint: 'proxy', conn: 'fresh' });
    ka('timeout', true);
    expect(r.s.diagnosis).toBe('keepalive_only');
    expect(r.s.cause).toContain('look at the proxy/LB');
  });

  it('keepalive_only: the pass right after a keep-alive failure is on a new connection, whatever the client reports', () => {
    const r = run();
    for (let i = 0; i < 10; i++) r.round();
    // The fresh slots run on the same schedule and pass: a pass from before the failures began would be stale.
    const ka = (result: ProbeResultSignal['result']) => {
      r.probe({ endpoint: 'proxy', conn: 'keepalive', result, reusedConnection: true });
      for (const endpoint of r.cfg.hops) r.probe({ endpoint, conn: 'fresh', reusedConnection: false });
    };
    ka('timeout');
    ka('ok');
    ka('timeout');
    ka('ok');
    ka('timeout');
    expect(r.s.diagnosis).toBe('keepalive_only');
    // Fixed: ok once the three failures have left the window (they came and went, which the window keeps).
    for (let i = 0; i < 10; i++) ka('ok');
    expect(r.s.state).toBe('ok');
  });

  it('a pass from before the failures began is stale: chat failing everywhere beside a 2-minute probe that last passed before them is wedged', () => {
    const r = run();
    r.round();
    // Another completion probe that runs rarely passed once, before the failures.
    r.probe({ endpoint: 'router', conn: 'fresh', probe: 'structured', probeKind: 'structured' });
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    // It runs again and passes: that pass post-dates the failures, so part of the deployment serves.
    r.probe({ endpoint: 'router', conn: 'fresh', probe: 'structured', probeKind: 'structured' });
    r.probe({ endpoint: 'router', conn: 'fresh', probe: 'structured', probeKind: 'structured' });
    r.round('timeout');
    expect(r.s.state).toBe('degraded');
  });

  it('a keep-alive slot whose server closes idle connections recovers on new-connection passes', () => {
    const r = run();
    r.round();
    r.round();
    const ka = (result: ProbeResultSignal['result']) => {
      r.probe({ endpoint: 'router', conn: 'keepalive', result, reusedConnection: false });
      for (const endpoint of r.cfg.hops) r.probe({ endpoint, conn: 'fresh', reusedConnection: false });
    };
    ka('timeout');
    ka('timeout');
    expect(r.s.state).toBe('degraded');
    ka('ok');
    ka('ok');
    expect(r.s.state).toBe('ok');
  });

  it('a reused failure followed only by new-connection passes stops holding the slot after recoverAfter of them', () => {
    const r = run();
    r.round();
    r.round();
    r.probe({ endpoint: 'router', conn: 'keepalive', result: 'timeout', reusedConnection: true });
    r.probe({ endpoint: 'router', conn: 'keepalive', result: 'timeout', reusedConnection: true });
    for (let i = 0; i < 2; i++) r.probe({ endpoint: 'router', conn: 'keepalive', reusedConnection: false });
    expect(r.s.slots['chat|router|keepalive']!.failStreak).toBe(2);
    for (let i = 0; i < 2; i++) r.probe({ endpoint: 'router', conn: 'keepalive', reusedConnection: false });
    expect(r.s.state).toBe('ok');
  });

  it('hop:<name>: the outer hop fails while the hop behind it passes', () => {
    const r = run();
    r.round();
    r.round('http_error', { endpoint: 'proxy' });
    r.round('http_error', { endpoint: 'proxy' });
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('hop:proxy');
  });

  it('toolcall_leak degrades at once and recovers after passes', () => {
    const r = run();
    r.round();
    const tools = (result: ProbeResultSignal['result']) =>
      r.probe({ probe: 'tools', probeKind: 'toolcall', endpoint: 'router', result });
    tools('ok');
    tools('toolcall_leak');
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('toolcall_leak');
    tools('ok');
    expect(r.s.state).toBe('degraded'); // no completion slot has passed recoverAfter times yet
    r.round();
    // One pass of the leaking slot after its leak is enough for it (issue 38): it needs no second one.
    expect(r.s.state).toBe('ok');
  });

  it('slow: time to first token over the objective wedgeAfter times in a row', () => {
    const r = run();
    r.round();
    r.probe({ endpoint: 'router', ttftMs: 900 });
    expect(r.s.state).toBe('ok');
    r.probe({ endpoint: 'router', ttftMs: 900 });
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('slow');
    expect(r.s.cause).toContain('500 ms objective');
  });

  it("slow is the engine's TTFT: the time our own loop lost before reading the first token is not counted", () => {
    const r = run();
    r.round();
    // 900 ms to the first token, 600 of them our event loop unable to run (a loaded host): 300 ms, within 500.
    r.probe({ endpoint: 'router', ttftMs: 900, ttftLoopLostMs: 600 });
    r.probe({ endpoint: 'router', ttftMs: 900, ttftLoopLostMs: 600 });
    r.probe({ endpoint: 'router', ttftMs: 900, ttftLoopLostMs: 600 });
    expect(r.s.state).toBe('ok');
    // Lost time that leaves the engine's own part past the objective is still slow.
    r.probe({ endpoint: 'router', ttftMs: 900, ttftLoopLostMs: 300 });
    r.probe({ endpoint: 'router', ttftMs: 900, ttftLoopLostMs: 300 });
    expect(r.s).toMatchObject({ state: 'degraded', diagnosis: 'slow' });
  });

  it('health_failing: a health check that cannot connect downAfter times → down, and back after passes', () => {
    const r = run();
    r.round();
    const health = (result: ProbeResultSignal['result']) =>
      r.probe({ probe: 'health', probeKind: 'health', endpoint: 'router', result });
    health('ok');
    health('connect_error');
    expect(r.s.state).toBe('ok');
    health('connect_error');
    expect(r.s.state).toBe('down');
    expect(r.s.diagnosis).toBe('health_failing');
    health('ok');
    health('ok');
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('health_failing: a live server answering 503 while completions pass is degraded, never down', () => {
    const r = run();
    r.round();
    const health = () =>
      r.probe({ probe: 'health', probeKind: 'health', endpoint: 'router', result: 'http_error' });
    health();
    health();
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('health_failing');
    health();
    r.round();
    expect(r.s.state).toBe('degraded');
  });

  it('connection_refused: a chat probe whose port refuses → down (down outranks wedged)', () => {
    const r = run();
    r.round();
    r.round('connect_error');
    r.round('connect_error');
    expect(r.s.state).toBe('down');
    expect(r.s.diagnosis).toBe('connection_refused');
  });

  it('hop:<name> also when the outer hop refuses connections or fails its health check while the inner passes', () => {
    const r = run();
    r.round();
    r.round('connect_error', { endpoint: 'proxy' });
    r.round('connect_error', { endpoint: 'proxy' });
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('hop:proxy');
    const h = run();
    h.round();
    h.probe({ probe: 'health', probeKind: 'health', endpoint: 'proxy', result: 'http_error' });
    h.probe({ probe: 'health', probeKind: 'health', endpoint: 'proxy', result: 'http_error' });
    expect(h.s.state).toBe('degraded');
    expect(h.s.diagnosis).toBe('hop:proxy');
    h.probe({ probe: 'health', probeKind: 'health', endpoint: 'router', result: 'connect_error' });
    h.probe({ probe: 'health', probeKind: 'health', endpoint: 'router', result: 'connect_error' });
    expect(h.s.state).toBe('down');
  });

  it('abort_storm: abortStormCount abort lines within the window → degraded, ok once the window passes', () => {
    const r = run();
    r.round();
    r.round();
    const abort = () =>
      r.log({
        rule: 'prefill_bootstrap_failed',
        class: 'abort',
        severity: 'warning',
        line: 'KVTransferError(bootstrap_room=1): Aborted by AbortReq.',
      });
    abort();
    abort();
    expect(r.s.state).toBe('ok');
    abort();
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('abort_storm');
    r.feed({ kind: 'tick' }, cfg.detect.abortStormWindow + 1000);
    expect(r.s.state).toBe('ok');
    expect(r.s.aborts).toEqual([]);
  });

  it('aborts before a wedge are attributed to it: recovery does not stop at abort_storm', () => {
    const r = run();
    r.round();
    r.round();
    for (let i = 0; i < 3; i++)
      r.log({
        rule: 'sglang_decode_transfer_aborted',
        class: 'abort',
        severity: 'warning',
        line: 'Aborted by AbortReq.',
      });
    expect(r.s.diagnosis).toBe('abort_storm');
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    for (let i = 0; i < 3; i++) r.round();
    expect(r.s.state).toBe('ok');
  });

  it('engine_stalled: requests held with flat counters for stallAfter → degraded while the last probes passed, wedged once they fail', () => {
    const r = run();
    r.round();
    r.round();
    r.engine({ running: 3, queued: 1, finishedTotal: 10, generatedTokensTotal: 500 });
    r.engine({ running: 3, queued: 1, finishedTotal: 10, generatedTokensTotal: 500 }, 5000);
    expect(r.s.state).toBe('ok');
    const step = r.engine({ running: 3, queued: 1, finishedTotal: 10, generatedTokensTotal: 500 }, 5500);
    expect(step.events.map((e) => e.type)).toContain('engine_stalled');
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('engine_stalled');
    expect(r.s.cause).toContain('decode holds 3 running and 1 queued');
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('engine_stalled');
    const moved = r.engine({ running: 3, queued: 1, finishedTotal: 11, generatedTokensTotal: 510 });
    expect(moved.events.map((e) => e.type)).toContain('engine_progress');
    // Keep-alive slots after a reused failure need passes over reused connections too (see keepalive tests).
    for (let i = 0; i < 4; i++) r.round();
    expect(r.s.state).toBe('ok');
  });

  it('frozen gauges on an idle engine: passing completions count as progress, so no stall and no wedge', () => {
    const r = run();
    r.round();
    // SGLang's log gauges keep the last logged batch (running 2) after the engine went idle.
    r.feed({ kind: 'engine', target: 't', service: 'decode', source: 'log', time: r.now, running: 2 });
    for (let i = 0; i < 12; i++) {
      r.feed({ kind: 'tick' }, 5000);
      r.round();
    }
    expect(r.s.engines.decode!.stalled).toBe(false);
    expect(r.transitions()).toEqual(['ok/-']);
  });

  it('a failed scrape makes the busy state unknown: no stall from stale values while chat passes', () => {
    const r = run();
    r.round();
    r.engine({ running: 3, finishedTotal: 10 });
    for (let i = 0; i < 12; i++) {
      r.engine({ scrapeOk: false, running: undefined }, 5000);
      // Only the health probe answers here, so no completion pass refreshes the stall clock.
      r.probe({ probe: 'health', probeKind: 'health', endpoint: 'router' });
    }
    expect(r.s.engines.decode!.stalled).toBe(false);
    expect(r.steps.flatMap((s) => s.events).map((e) => e.type)).not.toContain('engine_stalled');
    expect(r.transitions()).toEqual(['ok/-']);
    // Scrapes back with flat counters: the stall clock starts again from there, not from before the outage.
    r.engine({ running: 3, finishedTotal: 10 });
    r.engine({ running: 3, finishedTotal: 10 }, 5000);
    expect(r.s.engines.decode!.stalled).toBe(false);
    r.engine({ running: 3, finishedTotal: 10 }, 5500);
    expect(r.s.engines.decode!.stalled).toBe(true);
  });

  it('a scraped engine whose reports stop arriving is unknown after stallAfter, not stalled', () => {
    const r = run();
    r.round();
    r.engine({ running: 3, finishedTotal: 10 });
    r.feed({ kind: 'tick' }, 11_000);
    expect(r.s.engines.decode!.stalled).toBe(false);
    expect(r.s.state).toBe('ok');
  });

  it('an idle engine with flat counters is not stalled', () => {
    const r = run();
    r.round();
    for (let i = 0; i < 5; i++) r.engine({ running: 0, queued: 0, finishedTotal: 10 }, 5000);
    r.feed({ kind: 'tick' }, 30_000);
    expect(r.s.state).toBe('ok');
    expect(r.s.engines.decode!.stalled).toBe(false);
  });

  it('batch log lines count as progress while counters only move on finish', () => {
    const r = run();
    r.round();
    r.engine({ running: 2, finishedTotal: 10 });
    for (let i = 0; i < 6; i++) {
      r.engine({ running: 2, finishedTotal: 10 }, 2500);
      r.feed(
        {
          kind: 'engine',
          target: 't',
          service: 'decode',
          source: 'log',
          time: r.now,
          running: 2,
          genThroughput: 50,
          progress: true,
        },
        100,
      );
    }
    expect(r.s.engines.decode!.stalled).toBe(false);
    expect(r.s.state).toBe('ok');
  });

  it('a stall is judged on ticks when a log-only engine goes quiet', () => {
    const r = run();
    r.round();
    r.feed({ kind: 'engine', target: 't', service: 'decode', source: 'log', time: r.now, running: 1 }, 1000);
    r.feed({ kind: 'tick' }, 9000);
    expect(r.s.state).toBe('ok');
    r.feed({ kind: 'tick' }, 2000);
    expect(r.s.diagnosis).toBe('engine_stalled');
  });

  it('failing completions with a hung scheduler round trip (serverinfo timeout) → engine_stalled', () => {
    const r = run();
    r.round();
    r.probe({ probe: 'info', probeKind: 'serverinfo', endpoint: 'router', result: 'timeout' });
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('engine_stalled');
    expect(r.s.cause).toContain('scheduler round trip hangs');
  });

  it('a thread death seen before completions fail names the wedge even if unconfirmed by its own round', () => {
    const r = run();
    r.round();
    r.log({ severity: 'critical', rule: 'other_fatal', line: 'boom', time: r.now + 1e9 });
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('log:other_fatal');
  });

  it('critical lines the passes have seen past (or left unconfirmed) do not name a later wedge', () => {
    const r = run();
    r.round();
    r.log({ severity: 'critical', rule: 'first_fatal', line: 'boom' });
    r.log({ severity: 'critical', rule: 'other_fatal', line: 'boom' });
    // other_fatal is left unconfirmed by this round; first_fatal was never pending on its own.
    r.round();
    r.round();
    expect(r.s.criticalSinceOk).toEqual([]);
    r.feed({ kind: 'tick' }, 3_600_000);
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('completions_failing');
  });

  it('slow → ok needs recoverAfter fast passes, not one (slow passes do not count toward recovery)', () => {
    const r = run();
    r.probe({ endpoint: 'router' });
    expect(r.s.state).toBe('ok');
    r.probe({ endpoint: 'router', ttftMs: 900 });
    r.probe({ endpoint: 'router', ttftMs: 900 });
    expect(r.s).toMatchObject({ state: 'degraded', diagnosis: 'slow' });
    r.probe({ endpoint: 'router' });
    expect(r.s.state).toBe('degraded');
    r.probe({ endpoint: 'router' });
    expect(r.s.state).toBe('ok');
  });

  it('records a diagnosis change inside one state as its own event', () => {
    const r = run();
    r.round();
    r.round('timeout');
    r.round('timeout');
    expect(r.s.diagnosis).toBe('completions_failing');
    r.feed({ kind: 'engine', target: 't', service: 'decode', source: 'log', time: r.now, running: 2 }, 1000);
    const step = r.feed({ kind: 'tick' }, 11_000);
    expect(step.events).toContainEqual(
      expect.objectContaining({ type: 'diagnosis', from: 'completions_failing', to: 'engine_stalled' }),
    );
    expect(step.transition).toBeUndefined();
  });
});

describe('classifier: the most specific evidence names the wedge (issue 16, item 8)', () => {
  const death = {
    severity: 'critical' as const,
    rule: 'nixl_bootstrap_thread_died',
    class: 'kv_bootstrap_dead' as const,
    line: THREAD_DEATH,
  };
  const userLine = {
    severity: 'critical' as const,
    rule: 'oom_killed',
    line: 'CUDA out of memory',
    user: true,
  };

  it('a user rule line after a confirmed thread death does not replace kv_bootstrap_thread_dead', () => {
    const r = run();
    r.round();
    r.log(death);
    r.probe({ endpoint: 'router', result: 'timeout', start: r.now, durationMs: 1000 });
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
    r.now += cfg.detect.confirmInterval;
    r.log(userLine);
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(r.steps.flatMap((s) => s.events).filter((e) => e.type === 'diagnosis')).toEqual([]);
  });

  it('a user rule line between the thread death and its confirmation does not take its place', () => {
    const r = run();
    r.round();
    r.log(death);
    r.log(userLine);
    expect(r.s.pendingCritical?.diagnosis).toBe('kv_bootstrap_thread_dead');
    r.probe({ endpoint: 'router', result: 'timeout', start: r.now, durationMs: 1000 });
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('without a confirmation, failing completions name the most specific line, not the latest', () => {
    const r = run();
    r.round();
    r.log(death);
    r.log(userLine);
    r.s = { ...r.s, pendingCritical: undefined }; // as if its confirmation round had passed the line by
    r.round('timeout');
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('a built-in rule outranks a user rule; a thread death seen later still upgrades a pending user rule', () => {
    const r = run();
    r.round();
    r.log(userLine);
    expect(r.s.pendingCritical?.diagnosis).toBe('log:oom_killed');
    r.log({ severity: 'critical', rule: 'sglang_scheduler_exception', line: 'Scheduler hit an exception' });
    expect(r.s.pendingCritical?.diagnosis).toBe('log:sglang_scheduler_exception');
    r.log(death);
    expect(r.s.pendingCritical?.diagnosis).toBe('kv_bootstrap_thread_dead');
  });

  it('many later lines do not push the most specific one out of the bounded memory', () => {
    const r = run();
    r.round();
    r.log(death);
    for (let i = 0; i < 30; i++) r.log({ ...userLine, time: r.now + 100 + i });
    r.s = { ...r.s, pendingCritical: undefined };
    r.round('timeout');
    r.round('timeout');
    expect(r.s.criticalSinceOk.length).toBeLessThanOrEqual(10);
    expect(r.s.diagnosis).toBe('kv_bootstrap_thread_dead');
  });
});

describe('classifier: /health failing on a live server (issue 13, item 3)', () => {
  const health = (r: Run, result: ProbeResultSignal['result'], status?: number) =>
    r.probe({ probe: 'health', probeKind: 'health', endpoint: 'router', result, status });

  it('503 from /health while completions fail → wedged/health_generate_failing, never down', () => {
    const r = run();
    r.round();
    health(r, 'http_error', 503);
    r.round('timeout');
    health(r, 'http_error', 503);
    expect(r.s.state).toBe('ok'); // completions one failure in: no `down` detour while they decide
    r.round('timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('health_generate_failing');
    expect(r.transitions()).toEqual(['ok/-', 'wedged/health_generate_failing']);
  });

  it('a /health that times out is a live server when something else from it answers (a metrics scrape)', () => {
    const r = run();
    r.round();
    r.round('timeout');
    r.round('timeout');
    health(r, 'timeout');
    r.engine({ running: 1, queued: 0 });
    health(r, 'timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('health_generate_failing');
    expect(r.s.cause).toMatch(/while the server answers/);
  });

  it('a /health that times out with nothing answering (SIGSTOP) is not "the server answers", nor down', () => {
    // Issue 38: a frozen llama-server; the kernel accepts the connections, every request and scrape times out.
    const r = run();
    r.round();
    r.round('timeout');
    health(r, 'timeout');
    r.engine({ scrapeOk: false });
    r.round('timeout');
    health(r, 'timeout');
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).not.toBe('health_generate_failing');
    expect(r.s.cause).not.toMatch(/answers/);
    expect(r.transitions().every((t) => !t.startsWith('down'))).toBe(true);
  });

  it('an engine restarting after a kill answers /health 503 while it loads: still down (its completions were refused), never wedged', () => {
    // Issue 38, the real server: kill -9, then a restart; /health 503 while the model loads made the refusals from
    // before it read as "completions fail while the server answers": down → wedged/health_generate_failing → down.
    const r = run();
    r.round();
    r.round('connect_error');
    health(r, 'connect_error');
    r.round('connect_error');
    health(r, 'connect_error');
    expect(r.s.state).toBe('down');
    health(r, 'http_error', 503);
    health(r, 'http_error', 503);
    expect(r.s.state).toBe('down');
    health(r, 'ok');
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
    expect(r.transitions().filter((t) => t.startsWith('wedged'))).toEqual([]);
    // A completion that fails on the live server (not refused) is evidence again: wedged as before.
    health(r, 'http_error', 503);
    r.round('timeout');
    health(r, 'http_error', 503);
    r.round('timeout');
    expect(r.verdict).toBe('wedged/health_generate_failing');
  });

  it('a /health that times out with no completion probe to say more is down', () => {
    const r = new Run({ ...cfg, probes: { health: { kind: 'health' } } });
    health(r, 'timeout');
    health(r, 'timeout');
    expect(r.s.state).toBe('down');
    expect(r.s.diagnosis).toBe('health_failing');
  });

  it('a refused /health port is down whatever the completions do', () => {
    const r = run();
    r.round();
    r.round('timeout');
    r.round('timeout');
    health(r, 'connect_error');
    health(r, 'connect_error');
    expect(r.s.state).toBe('down');
    expect(r.s.diagnosis).toBe('health_failing');
  });
});
