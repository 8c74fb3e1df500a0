// Issue 26: the wrong-answer page must not depend on the diagnosis the target shows. A stranded decode transfer
// entry makes the target degraded/queue_leak (engine evidence), then every canary answer comes back wrong: engine
// evidence outranks answer evidence, so the shown diagnosis stays queue_leak and
// wedgewatch_target_diagnosis{diagnosis="wrong_output"} never appears — the canary slot's
// wedgewatch_probe_wrong_output_held (what WedgewatchWrongOutput selects on) is 1 all the same, and 0 once the
// fault is off and a full window of clean answers has come. The watchdog and its metrics on a virtual clock: the
// simulator's faults behind these signals are tested end to end on their own (stranded_queue_entry in
// sim-signals.test.ts, kv_corruption in answer-faults.test.ts); their ranking and the hold are logic, and a window
// of clean answers is WRONG_WINDOW canary runs (a minute of wall clock at the shortest interval).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { targetSchema } from '../../src/config/schema.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { WRONG_WINDOW } from '../../src/core/wrong-window.js';
import { createMetrics } from '../../src/metrics.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { TargetWatchdog } from '../../src/watchdog.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-wrong-held-engine-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const CANARY = { target: 'sim', probe: 'canary', endpoint: 'router', conn: 'fresh', kind: 'canary' };
const EVERY_MS = 1000;

function make() {
  const metrics = createMetrics({ defaults: false });
  const clock = { now: 1_700_000_000_000 };
  // The canary every 1 s (the shortest interval the config accepts) and a health probe on the router hop, the
  // decode engine's metrics scraped every 1 s, as the end-to-end version ran it.
  const probe = { every: '1s', timeout: '1s', jitter: 0, endpoints: ['router'] };
  const target = targetSchema.parse({
    name: 'sim',
    endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
    probes: [
      { name: 'canary', kind: 'canary', ...probe },
      { name: 'health', kind: 'health', path: '/health', ...probe },
    ],
    engines: [{ service: 'decode', metrics: 'http://127.0.0.1:1/metrics', every: '1s', timeout: '1s' }],
    detect: { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '10s', leakAfter: '6s' },
  });
  const wd = new TargetWatchdog({
    target,
    metrics,
    logger,
    journal: new Journal({ dir, logger }),
    now: () => clock.now,
  });
  const probeRun = (name: 'canary' | 'health', result: ProbeResultSignal['result']) =>
    wd.handle({
      kind: 'probe',
      target: 'sim',
      probe: name,
      probeKind: name,
      endpoint: 'router',
      conn: 'fresh',
      result,
      start: clock.now - 10,
      durationMs: 10,
      ...(result === 'wrong_output' ? { error: 'wrong answer: expected "7748", got "7749"' } : {}),
    });
  let finished = 100;
  let tick = 0;
  /**
   * One second: the decode scrape (busy under traffic, its transfer queue never below `floor`), then the health
   * probe and the canary, whose answer is `canary`.
   */
  const second = (floor: number, canary: ProbeResultSignal['result']) => {
    clock.now += EVERY_MS;
    finished += 3;
    tick++;
    wd.handle({
      kind: 'engine',
      target: 'sim',
      service: 'decode',
      source: 'metrics',
      time: clock.now,
      scrapeOk: true,
      running: 6,
      transferQueue: floor + (tick % 3),
      finishedTotal: finished,
    });
    probeRun('health', 'ok');
    probeRun('canary', canary);
  };
  const gauge = async (name: 'probeWrongOutputHeld' | 'probeWrongAnswers') =>
    (await metrics[name].get()).values.find((v) =>
      Object.entries(CANARY).every(([k, s]) => (v.labels as Record<string, unknown>)[k] === s),
    )?.value;
  return { wd, metrics, second, gauge };
}

describe('the wrong-answer hold while an engine diagnosis is shown', () => {
  it('stranded_queue_entry (queue_leak shown) + kv_corruption: the canary slot’s hold is 1, the label is not wrong_output; off → 0', async () => {
    const { wd, metrics, second, gauge } = make();
    const verdict = () => `${wd.state.state}/${wd.state.diagnosis}`;
    for (let i = 0; i < 5; i++) second(0, 'ok');
    expect(verdict()).toBe('ok/null');
    expect(await gauge('probeWrongOutputHeld')).toBe(0);

    // stranded_queue_entry: one entry the transfer queue never gives back, under traffic.
    for (let i = 0; i < 30 && verdict() !== 'degraded/queue_leak'; i++) second(1, 'ok');
    expect(verdict()).toBe('degraded/queue_leak');
    // kv_corruption at rate 1: every canary answer wrong.
    second(1, 'wrong_output');
    expect(await gauge('probeWrongOutputHeld')).toBe(1);
    // A few more wrong answers: the label stays the engine's, the hold stays on and counts them.
    second(1, 'wrong_output');
    second(1, 'wrong_output');
    expect(await gauge('probeWrongAnswers')).toBe(3);
    expect(verdict()).toBe('degraded/queue_leak');
    expect(await gauge('probeWrongOutputHeld')).toBe(1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('wedgewatch_target_diagnosis{target="sim",diagnosis="queue_leak"} 1');
    // What the old alert selected on is absent: it would not have paged.
    expect(text).not.toContain('diagnosis="wrong_output"');
    expect(text).toContain(
      'wedgewatch_probe_wrong_output_held{target="sim",probe="canary",endpoint="router",conn="fresh",kind="canary"} 1',
    );

    // Both faults off: the hold ends with the window, after WRONG_WINDOW clean answers in a row, not before.
    for (let i = 0; i < WRONG_WINDOW - 1; i++) {
      second(0, 'ok');
      expect(await gauge('probeWrongOutputHeld')).toBe(1);
    }
    second(0, 'ok');
    expect(await gauge('probeWrongOutputHeld')).toBe(0);
    expect(await gauge('probeWrongAnswers')).toBe(0);
    expect(wd.state.slots['canary|router|fresh']?.wrongHeld).toBe(false);
    for (let i = 0; i < 5 && wd.state.state !== 'ok'; i++) second(0, 'ok');
    expect(verdict()).toBe('ok/null');
  });
});
