// wedgewatch_probe_wrong_output_held and wedgewatch_probe_wrong_answers follow the probe slot's wrong-answer window
// (src/core/wrong-window.ts) the verdict reads: on at the first wrong answer, on through passes, off after
// WRONG_WINDOW clean answers in a row or WRONG_HOLD_MS of them; exported again by a watchdog that carries a reloaded
// state; removed with the slot by a reload that drops it. WedgewatchWrongOutput pages on the first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { targetSchema } from '../../src/config/schema.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { WRONG_HOLD_MS, WRONG_WINDOW, wrongHeld } from '../../src/core/wrong-window.js';
import { forgetRemovedSeries } from '../../src/outputs/metrics/forget-series.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { slotKey } from '../../src/core/memory.js';
import { slotSpecs } from '../../src/sources/probes/schedule.js';
import { TargetWatchdog } from '../../src/watchdog.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-wrong-held-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const CANARY = { target: 'pd', probe: 'canary', endpoint: 'router', conn: 'fresh', kind: 'canary' };

function make(everyMs = 2000, metrics: Metrics = createMetrics({ defaults: false })) {
  const journal = new Journal({ dir, logger });
  const clock = { now: 1_700_000_000_000 };
  const target = targetSchema.parse({
    name: 'pd',
    endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
    probes: [
      { name: 'canary', kind: 'canary', every: '30s' },
      { name: 'chat', kind: 'chat', every: '30s' },
      { name: 'health', kind: 'health', every: '30s', path: '/health' },
    ],
  });
  const now = () => clock.now;
  const wd = new TargetWatchdog({ target, metrics, logger, journal, now });
  const run = (probe: 'canary' | 'chat' | 'health', result: ProbeResultSignal['result']) => {
    clock.now += everyMs;
    wd.handle({
      kind: 'probe',
      target: 'pd',
      probe,
      probeKind: probe,
      endpoint: 'router',
      conn: 'fresh',
      result,
      start: clock.now - 10,
      durationMs: 10,
      ...(result === 'wrong_output' ? { error: 'wrong answer: expected "7748", got "7749"' } : {}),
    });
  };
  return { metrics, wd, run, target, journal, clock };
}

async function value(g: Metrics['probeWrongOutputHeld'], labels: Record<string, string>) {
  return (await g.get()).values.find((v) =>
    Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  )?.value;
}
const held = (m: Metrics, l = CANARY) => value(m.probeWrongOutputHeld, l);
const wrong = (m: Metrics, l = CANARY) => value(m.probeWrongAnswers, l);

describe('the wrong-answer hold as a gauge per probe slot', () => {
  it('on at the first wrong answer, on through passes, off after WRONG_WINDOW clean answers; equal to the window at every step', async () => {
    const { metrics, wd, run } = make();
    run('canary', 'ok');
    // A completion slot that never answered wrong exports 0: the series exists before the first wrong answer.
    expect(await held(metrics)).toBe(0);
    expect(await wrong(metrics)).toBe(0);
    run('canary', 'wrong_output');
    expect(await held(metrics)).toBe(1);
    expect(await wrong(metrics)).toBe(1);
    run('canary', 'ok');
    run('canary', 'wrong_output');
    expect(await wrong(metrics)).toBe(2);
    const slot = () => wd.state.slots['canary|router|fresh']!;
    for (let i = 0; i < WRONG_WINDOW - 1; i++) {
      run('canary', 'ok');
      // The gauge is the window the verdict reads, run for run.
      expect(await held(metrics)).toBe(wrongHeld(slot()) ? 1 : 0);
      expect(await held(metrics)).toBe(1);
    }
    // The first wrong answer has left the window of the last WRONG_WINDOW, the second is its oldest.
    expect(await wrong(metrics)).toBe(1);
    run('canary', 'ok');
    expect(wrongHeld(slot())).toBe(false);
    expect(await held(metrics)).toBe(0);
    expect(await wrong(metrics)).toBe(0);
    expect(wd.state.state).toBe('ok');
  });

  it('ends after WRONG_HOLD_MS of clean answers at a slower cadence, with the window', async () => {
    // Every 2 minutes: WRONG_WINDOW answers would take 80 minutes; the time bound ends the hold at 20.
    const { metrics, run } = make(120_000);
    run('canary', 'wrong_output');
    expect(await held(metrics)).toBe(1);
    const runs = WRONG_HOLD_MS / 120_000;
    for (let i = 0; i < runs; i++) {
      run('canary', 'ok');
      expect(await held(metrics)).toBe(1);
    }
    run('canary', 'ok');
    expect(await held(metrics)).toBe(0);
  });

  it('a timeout is no answer: it neither ends the hold nor counts as wrong', async () => {
    const { metrics, run } = make();
    run('canary', 'wrong_output');
    for (let i = 0; i < WRONG_WINDOW + 5; i++) run('canary', 'timeout');
    expect(await held(metrics)).toBe(1);
    expect(await wrong(metrics)).toBe(1);
  });

  it('every completion slot is exported (chat at 0), a health slot is not', async () => {
    const { metrics, run } = make();
    run('chat', 'ok');
    run('health', 'ok');
    expect(await held(metrics, { ...CANARY, probe: 'chat', kind: 'chat' })).toBe(0);
    expect(await held(metrics, { ...CANARY, probe: 'health', kind: 'health' })).toBeUndefined();
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'wedgewatch_probe_wrong_output_held{target="pd",probe="chat",endpoint="router",conn="fresh",kind="chat"} 0',
    );
    expect(text).not.toMatch(/wedgewatch_probe_wrong_output_held\{[^}]*probe="health"/);
  });

  it('a watchdog that carries a reloaded state exports the hold at once; a reload without the probe removes it', async () => {
    const first = make();
    first.run('canary', 'wrong_output');
    // The replacing watchdog on a fresh registry: only its constructor can have set the gauge.
    const metrics = createMetrics({ defaults: false });
    new TargetWatchdog({
      target: first.target,
      metrics,
      logger,
      journal: first.journal,
      now: () => first.clock.now,
      previous: first.wd.carry(),
    });
    expect(await held(metrics)).toBe(1);
    expect(await wrong(metrics)).toBe(1);
    await forgetRemovedSeries(first.metrics, {
      targets: new Map([['pd', new Set<string>()]]),
      probeSlots: new Set(['pd|chat|router|fresh|chat']),
    });
    expect(await held(first.metrics)).toBeUndefined();
    expect(await wrong(first.metrics)).toBeUndefined();
  });

  it('a reload that moves the probe to another connection kind drops the old slot and its hold (found in review)', async () => {
    const first = make();
    // It answered right once: later wrong answers are wrong_output, not canary_never_passed.
    first.run('canary', 'ok');
    first.run('canary', 'wrong_output');
    expect(first.wd.state.diagnosis).toBe('wrong_output');
    const target = targetSchema.parse({
      name: 'pd',
      endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
      probes: [
        { name: 'canary', kind: 'canary', every: '30s', conn: ['keepalive'] },
        { name: 'chat', kind: 'chat', every: '30s' },
        { name: 'health', kind: 'health', every: '30s', path: '/health' },
      ],
    });
    const clock = first.clock;
    const next = new TargetWatchdog({
      target,
      metrics: createMetrics({ defaults: false }),
      logger,
      journal: first.journal,
      now: () => clock.now,
      previous: first.wd.carry(),
      slots: new Set(slotSpecs(target).map((x) => slotKey(x.probe.name, x.endpoint, x.conn))),
    });
    // The fresh canary no longer runs: its window, with nothing left to end it, is not carried.
    expect(next.state.slots['canary|router|fresh']).toBeUndefined();
    expect(next.state.slots['canary|router|keepalive']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      for (const [probe, conn] of [
        ['canary', 'keepalive'],
        ['chat', 'fresh'],
        ['chat', 'keepalive'],
      ] as const) {
        clock.now += 2000;
        next.handle({
          kind: 'probe',
          target: 'pd',
          probe,
          probeKind: probe,
          endpoint: 'router',
          conn,
          result: 'ok',
          start: clock.now - 10,
          durationMs: 10,
        });
      }
    }
    expect(next.state.state).toBe('ok');
  });
});
