// Issue 26: the wrong-answer page must not depend on the diagnosis the target shows. Against the SGLang PD simulator,
// a stranded decode transfer entry makes the target degraded/queue_leak (engine evidence), then kv_corruption makes
// every canary answer wrong: engine evidence outranks answer evidence, so the shown diagnosis stays queue_leak and
// wedgewatch_target_diagnosis{diagnosis="wrong_output"} never appears — the canary slot's
// wedgewatch_probe_wrong_output_held (what WedgewatchWrongOutput selects on) is 1 all the same, and 0 once the
// fault is off and a full window of clean answers has come.
import { afterEach, describe, expect, it } from 'vitest';
import { WRONG_WINDOW } from '../../src/core/wrong-window.js';
import type { Sim } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness<Sim> | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The canary (every 1 s, the shortest interval the config accepts) and a health probe on the router hop. */
const probe = { every: '1s', timeout: '1s', jitter: 0, endpoints: ['router'] };
const PROBES = [
  { name: 'canary', kind: 'canary', ...probe },
  { name: 'health', kind: 'health', path: '/health', ...probe },
];

const CANARY = { target: 'sim', probe: 'canary', endpoint: 'router', conn: 'fresh', kind: 'canary' };

async function gauge(x: Harness<Sim>, name: 'probeWrongOutputHeld' | 'probeWrongAnswers') {
  return (await x.metrics[name].get()).values.find((v) =>
    Object.entries(CANARY).every(([k, s]) => (v.labels as Record<string, unknown>)[k] === s),
  )?.value;
}

describe('the wrong-answer hold while an engine diagnosis is shown', () => {
  it('stranded_queue_entry (queue_leak shown) + kv_corruption: the canary slot’s hold is 1, the label is not wrong_output; off → 0', async () => {
    const x = await startHarness({}, (sim) => ({
      probes: PROBES,
      engines: (['prefill', 'decode'] as const).map((service) => ({
        service,
        metrics: `${sim.urls[service]}/metrics`,
        every: '1s',
        timeout: '1s',
      })),
      detect: { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '10s', leakAfter: '6s' },
    }));
    h = x;
    await x.waitHealthy();
    expect(await gauge(x, 'probeWrongOutputHeld')).toBe(0);

    x.sim.enableFault('stranded_queue_entry', { count: 1 });
    await x.waitState('degraded', { diagnosis: 'queue_leak', timeoutMs: 30_000 });
    x.sim.enableFault('kv_corruption', { rate: 1, seed: 0 });
    await waitFor(async () => (await gauge(x, 'probeWrongOutputHeld')) === 1, {
      timeoutMs: 20_000,
      intervalMs: 20,
      what: 'the canary slot’s wrong-answer hold',
    });
    // A few more wrong answers: the label stays the engine's, the hold stays on and counts them.
    await waitFor(async () => ((await gauge(x, 'probeWrongAnswers')) ?? 0) >= 3, {
      timeoutMs: 20_000,
      intervalMs: 20,
      what: '3 wrong answers in the window',
    });
    expect(`${x.wd.state.state}/${x.wd.state.diagnosis}`).toBe('degraded/queue_leak');
    expect(await gauge(x, 'probeWrongOutputHeld')).toBe(1);
    const text = await x.metrics.registry.metrics();
    expect(text).toContain('wedgewatch_target_diagnosis{target="sim",diagnosis="queue_leak"} 1');
    // What the old alert selected on is absent: it would not have paged.
    expect(text).not.toContain('diagnosis="wrong_output"');
    expect(text).toContain(
      'wedgewatch_probe_wrong_output_held{target="sim",probe="canary",endpoint="router",conn="fresh",kind="canary"} 1',
    );

    // The hold ends with the window, after WRONG_WINDOW clean answers in a row (1 s canaries).
    x.sim.disableFault('kv_corruption');
    x.sim.disableFault('stranded_queue_entry');
    await waitFor(async () => (await gauge(x, 'probeWrongOutputHeld')) === 0, {
      timeoutMs: (WRONG_WINDOW + 30) * 1000,
      intervalMs: 50,
      what: () => `the hold to end (${x.wd.state.state}/${x.wd.state.diagnosis})`,
    });
    expect(await gauge(x, 'probeWrongAnswers')).toBe(0);
    expect(x.wd.state.slots['canary|router|fresh']?.wrongHeld).toBe(false);
    await x.waitState('ok', { timeoutMs: 30_000 });
  }, 180_000);
});
