// Issue 37 (detection no slower): the Watchdog ticks a target at its pending critical line's confirmation deadline
// (Step.wakeAt, plus WAKE_SLACK_MS), not on its next periodic 1 s tick, which added up to 1 s to traceback → wedged.
// Fake timers and clock: the Watchdog's own interval and wake timers, nothing stepped by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { targetSchema } from '../../src/config/schema.js';
import type { InflightRun } from '../../src/core/signals.js';
import { createMetrics } from '../../src/metrics.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { TargetWatchdog, WAKE_SLACK_MS, Watchdog } from '../../src/watchdog.js';

const logger = pino({ level: 'silent' });
const T0 = 1_800_000_000_000;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-wake-'));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function make() {
  const target = targetSchema.parse({
    name: 'pd',
    endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
    probes: [{ name: 'chat', kind: 'chat', every: '15s', conn: ['fresh'] }],
  });
  const journal = new Journal({ dir, logger });
  const wd = new TargetWatchdog({ target, metrics: createMetrics({ defaults: false }), logger, journal });
  const inflight: InflightRun[] = [];
  // The confirmation round's run starts a few ms after the step that asked for it, and hangs.
  wd.setConfirmer({
    runNow: async () =>
      void inflight.push({ probe: 'chat', endpoint: 'router', conn: 'fresh', startedAt: Date.now() + 3 }),
    inflight: () => inflight,
  });
  const watchdog = new Watchdog(journal);
  watchdog.add(wd);
  const ok = () =>
    wd.handle({
      kind: 'probe',
      target: 'pd',
      probe: 'chat',
      probeKind: 'chat',
      endpoint: 'router',
      conn: 'fresh',
      result: 'ok',
      start: Date.now() - 300,
      durationMs: 300,
      ttftMs: 100,
    });
  const death = () =>
    wd.handle({
      kind: 'log',
      target: 'pd',
      service: 'prefill',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      severity: 'critical',
      line: "Exception in thread Thread-3 (bootstrap_thread):\nAssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
      file: '/p.log',
      offset: 0,
      time: Date.now(),
      fields: { thread: 'bootstrap_thread' },
    });
  return { wd, watchdog, ok, death, confirmAfter: target.detect.confirmAfter };
}

describe('the confirmation deadline wakes the watchdog (issue 37)', () => {
  it('a hung confirmation run confirms the thread death at its deadline, not on the next periodic tick', async () => {
    const { wd, watchdog, ok, death, confirmAfter } = make();
    watchdog.start();
    ok();
    ok();
    expect(wd.state.state).toBe('ok');
    // 100 ms after a periodic tick: the run's deadline falls 103 ms past one, the next periodic tick 897 ms later.
    await vi.advanceTimersByTimeAsync(1100);
    const line = Date.now();
    death();
    const deadline = line + 3 + confirmAfter;
    await vi.advanceTimersByTimeAsync(deadline - Date.now() - 1);
    expect(wd.state.state).toBe('ok');
    await vi.advanceTimersByTimeAsync(WAKE_SLACK_MS + 1);
    expect(wd.state.state).toBe('wedged');
    expect(wd.state.diagnosis).toBe('kv_bootstrap_thread_dead');
    await watchdog.stop();
  });

  it('a stopped watchdog sets no wake and ticks nothing after stop', async () => {
    const { wd, watchdog, ok, death, confirmAfter } = make();
    watchdog.start();
    ok();
    ok();
    await vi.advanceTimersByTimeAsync(1100);
    death();
    await vi.advanceTimersByTimeAsync(1000);
    await watchdog.stop();
    await vi.advanceTimersByTimeAsync(confirmAfter + 2000);
    expect(vi.getTimerCount()).toBe(0);
    // Its wake was cleared: no tick came to confirm the line.
    expect(wd.state.state).toBe('ok');
  });
});
