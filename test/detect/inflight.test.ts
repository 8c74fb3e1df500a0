// In-flight evidence (issue 13, item 1): a hung completion counts for the verdict before its timeout fires.
// Run on a virtual clock with the example config's cadence and timeouts, after a long healthy period.
import { describe, expect, it } from 'vitest';
import type { LogEventSignal } from '../../src/core/signals.js';
import { exampleTarget, healthy, rng, VirtualDeployment, type RunInfo } from './virtual-deployment.js';
import type { ProbeOf } from '../../src/config/schema.js';
import { isCompletion } from '../../src/core/vocabulary.js';

const THREAD_DEATH = [
  'Exception in thread Thread-7 (bootstrap_thread):',
  'Traceback (most recent call last):',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
].join('\n');

function tracebackAt(time: number): LogEventSignal {
  return {
    kind: 'log',
    target: 'dsv4-pd',
    service: 'prefill',
    rule: 'nixl_bootstrap_thread_died',
    class: 'kv_bootstrap_dead',
    severity: 'critical',
    line: THREAD_DEATH,
    file: '/var/log/sglang/prefill.log',
    offset: 0,
    time,
    fields: { thread: 'bootstrap_thread' },
  };
}

/**
 * From `faultAt` on, every completion hangs (the bootstrap thread is dead) — the example's canary and structured
 * probes too; health and serverinfo still pass.
 */
const wedgedFrom = (faultAt: () => number, hangs: (r: RunInfo) => boolean = () => true) => {
  return (r: RunInfo) =>
    isCompletion(r.probe.kind) && r.start >= faultAt() && hangs(r) ? ('hang' as const) : healthy(r);
};

const target = exampleTarget();
const chat = target.probes.find((p): p is ProbeOf<'chat'> => p.name === 'chat' && p.kind === 'chat')!;
const d = target.detect;
const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);

describe('in-flight evidence on deployed settings (example config cadence)', () => {
  it('uses the example cadence this test claims to (chat every 15 s, timeout 30 s; confirmAfter 5 s, hangAfter 20 s)', () => {
    expect([chat.every, chat.timeout, chat.conn]).toEqual([15_000, 30_000, ['fresh', 'keepalive']]);
    expect([d.confirmAfter, d.hangAfter]).toEqual([5000, 20_000]);
  });

  it.each(SEEDS)(
    'after ≥ 10 healthy rounds, a thread death is wedged/kv_bootstrap_thread_dead within confirmAfter + 1 s of the traceback (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      const v = new VirtualDeployment(
        target,
        wedgedFrom(() => faultAt),
        seed,
      );
      // ≥ 10 rounds of chat at 15 s, plus a random phase of the traceback against the probe schedule.
      const healthyUntil = v.t0 + 10 * chat.every! + 10_000 + rng(seed * 7919)() * chat.every!;
      v.runUntil(healthyUntil);
      expect(v.s.state).toBe('ok');
      expect(v.transitions()).toEqual(['ok/-']);
      expect(Object.values(v.s.slots).find((m) => m.probe === 'chat')!.okStreak).toBeGreaterThanOrEqual(9);
      // Completions that start from here on hang; those in flight with no first token yet hang too (they are waiting
      // on the thread; before rejudgeInflight their outcome, drawn at launch, let them finish just after the line).
      faultAt = v.now - chat.timeout!;
      v.rejudgeInflight();
      v.feed(tracebackAt(v.now));
      const traceback = v.now;
      const wedgedAt = v.runUntilTrue(
        () => v.s.state === 'wedged',
        traceback + d.confirmAfter + 1000 + 60_000,
      );
      expect(v.s.diagnosis).toBe('kv_bootstrap_thread_dead');
      expect(wedgedAt! - traceback).toBeLessThanOrEqual(d.confirmAfter + 1000);
      // And it stays wedged with that diagnosis while nothing completes.
      v.runUntil(traceback + 5 * 60_000);
      expect(v.s.state).toBe('wedged');
      expect(v.s.diagnosis).toBe('kv_bootstrap_thread_dead');
      expect(v.transitions()).toEqual(['ok/-', 'wedged/kv_bootstrap_thread_dead']);
    },
  );

  it.each(SEEDS)(
    'a silent wedge (no log line) is wedged/completions_hung within one probe interval + hangAfter (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      const v = new VirtualDeployment(
        target,
        wedgedFrom(() => faultAt),
        seed,
      );
      v.runUntil(v.t0 + 4 * chat.every! + rng(seed * 7919)() * chat.every!);
      expect(v.s.state).toBe('ok');
      faultAt = v.now;
      const at = v.runUntilTrue(() => v.s.state === 'wedged', faultAt + 120_000);
      expect(v.s.diagnosis).toBe('completions_hung');
      // The interval's jitter (10 %) is part of the interval a user configured.
      expect(at! - faultAt).toBeLessThanOrEqual(chat.every! * (1 + chat.jitter) + d.hangAfter + 1000);
      // No detour: one late run after fast ones is not `slow`; the first verdict after ok is the wedge.
      expect(v.transitions()).toEqual(['ok/-', 'wedged/completions_hung']);
    },
  );

  it('a hang on keep-alive only is not completions_hung: fresh runs finish after it started (degraded/keepalive_only)', () => {
    let faultAt = Infinity;
    const v = new VirtualDeployment(
      target,
      wedgedFrom(
        () => faultAt,
        (r) => r.conn === 'keepalive' && r.probe.kind === 'chat',
      ),
      7,
    );
    v.runUntil(v.t0 + 5 * chat.every!);
    faultAt = v.now;
    v.runUntil(faultAt + 10 * 60_000);
    expect(v.transitions()).not.toContain('wedged/completions_hung');
    expect(v.s.state).toBe('degraded');
    expect(v.s.diagnosis).toBe('keepalive_only');
  });

  it('a run in flight past its TTFT objective counts as slow now: the second slow run is slow before it finishes', () => {
    let slowFrom = Infinity;
    const v = new VirtualDeployment(
      target,
      (r) =>
        r.probe.kind === 'chat' && r.conn === 'fresh' && r.start >= slowFrom
          ? { ms: 25_000, ttftMs: 24_000 }
          : healthy(r),
      3,
    );
    v.runUntil(v.t0 + 5 * chat.every!);
    slowFrom = v.now;
    const at = v.runUntilTrue(() => v.s.state === 'degraded', slowFrom + 120_000);
    expect(v.s.diagnosis).toBe('slow');
    expect(v.s.cause).toContain('in flight');
    // The first slow run finishes (slow, 1 in a row); the second is late 5 s after it starts, 20 s before it
    // finishes. Runs of a slot do not overlap, so the second starts on the first round after the first ended.
    const firstEnds = slowFrom + chat.every! * (1 + chat.jitter) + 25_000;
    expect(at! - slowFrom).toBeLessThanOrEqual(
      firstEnds - slowFrom + chat.every! * (1 + chat.jitter) + chat.ttftObjective! + 1000,
    );
    const second = v.steps.findLast((s) => s.at <= at! && s.state.inflight?.some((i) => i.conn === 'fresh'));
    const started = second!.state.inflight!.find((i) => i.probe === 'chat' && i.conn === 'fresh')!.startedAt;
    expect(at! - started).toBeLessThan(25_000);
    expect(at! - started).toBeGreaterThanOrEqual(chat.ttftObjective!);
    slowFrom = Infinity;
    v.runUntil(v.now + 10 * chat.every!);
    expect(v.s.state).toBe('ok');
  });

  it('one slot hung past hangAfter counts as one failure of that slot, not a wedge', () => {
    let faultAt = Infinity;
    const v = new VirtualDeployment(
      target,
      wedgedFrom(
        () => faultAt,
        (r) => r.conn === 'fresh' && r.probe.kind === 'chat' && r.start < faultAt + 1000,
      ),
      11,
    );
    v.runUntil(v.t0 + 5 * chat.every!);
    // Exactly one hung run on chat/fresh, then healthy again.
    faultAt = v.now;
    v.runUntil(faultAt + 4 * chat.every!);
    expect(v.transitions()).toEqual(['ok/-']);
  });
});

describe('back from a confirmed thread death on the example cadence (its long-input probe every 10 m)', () => {
  const long = target.probes.find((p) => p.kind === 'longinput')!;

  it.each(SEEDS.slice(0, 6))(
    'after the restart, ok within 5 minutes: the long-input slot, whose passes hold no recovery, holds no confirmed line either (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      let endAt = Infinity;
      const v = new VirtualDeployment(
        target,
        (r) => (isCompletion(r.probe.kind) && r.start >= faultAt && r.start < endAt ? 'hang' : healthy(r)),
        seed,
      );
      // Long enough for the long-input probe to have passed before the line (its phase is up to one interval).
      v.runUntil(v.t0 + long.every! * (1 + long.jitter) + 60_000 + rng(seed * 7919)() * chat.every!);
      expect(v.s.state).toBe('ok');
      expect(Object.values(v.s.slots).find((m) => m.probe === long.name)?.okStreak).toBeGreaterThanOrEqual(1);
      faultAt = v.now - chat.timeout!;
      v.rejudgeInflight();
      v.feed(tracebackAt(v.now));
      v.runUntil(v.now + 2 * 60_000);
      expect(`${v.s.state}/${v.s.diagnosis}`).toBe('wedged/kv_bootstrap_thread_dead');
      // The prefill restarted: every completion from here on finishes.
      endAt = v.now;
      const okAt = v.runUntilTrue(() => v.s.state === 'ok', endAt + 25 * 60_000);
      expect(okAt).toBeDefined();
      expect(okAt! - endAt).toBeLessThan(5 * 60_000);
    },
  );
});
