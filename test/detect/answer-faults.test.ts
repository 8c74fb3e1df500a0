// The runtime against the simulator with the answer-checking probes: one wrong answer degrades the target; a stalled grammar backend is told apart from a stalled engine.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const EVERY_MS = 2000;
const TIMEOUT_MS = 1000;
const probe = (name: string, kind: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind,
  every: `${EVERY_MS}ms`,
  timeout: `${TIMEOUT_MS}ms`,
  jitter: 0,
  endpoints: ['router'],
  ...extra,
});
const PROBES = {
  probes: [
    probe('chat', 'chat', { maxTokens: 2, conn: ['fresh', 'keepalive'] }),
    probe('canary', 'canary'),
    probe('json', 'structured'),
    { ...probe('health', 'health'), path: '/health' },
  ],
};

describe('answer faults against the simulator', () => {
  it('kv_corruption → degraded/wrong_output at the first canary run it spoils, quoting the answer; held past passes', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    const canaryRuns = async (result?: string) =>
      (await h!.metrics.probesTotal.get()).values
        .filter((v) => v.labels.probe === 'canary' && (result === undefined || v.labels.result === result))
        .reduce((n, v) => n + v.value, 0);
    const before = await canaryRuns();
    h.sim.enableFault('kv_corruption');
    await h.waitState('degraded', { diagnosis: 'wrong_output', timeoutMs: 10_000 });
    // Counted in canary runs, not in milliseconds: the first run that answers after the fault is wrong, and that
    // one run is enough. At most one run before it (one in flight when the fault came) passed.
    const after = await canaryRuns();
    expect(await canaryRuns('wrong_output')).toBe(1);
    expect(after - before).toBeGreaterThanOrEqual(1);
    expect(after - before).toBeLessThanOrEqual(2);
    expect(h.wd.state.cause).toMatch(
      /canary on router\/fresh: wrong answer to ".+": expected ".+", got ".+"/,
    );
    const metrics = await h.metrics.registry.metrics();
    expect(metrics).toContain('wedgewatch_target_diagnosis{target="sim",diagnosis="wrong_output"} 1');
    // A pass no longer forgets the wrong answer (issue 26): the label holds until WRONG_WINDOW clean answers in a
    // row, which wrong-window.test.ts follows on the virtual clock.
    h.sim.disableFault('kv_corruption');
    const passes = await canaryRuns('ok');
    await waitFor(async () => (await canaryRuns('ok')) >= passes + 2, {
      timeoutMs: 15_000,
      what: 'two clean canary answers after the fault',
    });
    expect(`${h.wd.state.state}/${h.wd.state.diagnosis}`).toBe('degraded/wrong_output');
  });

  it('grammar_stall → degraded/structured_output_stalled while chat and canary pass; off → ok', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    const from = h.transitions.length;
    h.sim.enableFault('grammar_stall');
    await h.waitState('degraded', { diagnosis: 'structured_output_stalled', timeoutMs: 15_000 });
    expect(h.wd.state.cause).toContain('json on router/fresh: timeout');
    // From the fault on: a start on a loaded machine can show a wedge of its own before the first healthy round.
    expect(h.transitions.slice(from).some((t) => t.to === 'wedged')).toBe(false);
    h.sim.disableFault('grammar_stall');
    await h.waitState('ok', { timeoutMs: 15_000 });
  });
});
