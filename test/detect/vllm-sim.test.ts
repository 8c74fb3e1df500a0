// Integration: the real daemon runtime (probes, log watcher with the vllm pack, engine scrapes, watchdog)
// against the vLLM simulator (`sim --engine vllm`), one fault at a time.
import { afterEach, describe, expect, it } from 'vitest';
import { startVllmHarness, type Harness } from './sim-harness.js';
import type { VllmSim } from '../../src/sim/vllm/index.js';
import { chatBody, openStream } from '../sim/client.js';
import { waitFor } from '../helpers/wait.js';

let h: Harness<VllmSim> | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const SETTLE = { timeoutMs: 20_000 };

/** The incident bundle a bad transition captures is written before the test stops the runtime under it. */
async function incidentWritten(x: Harness<VllmSim>): Promise<void> {
  await waitFor(() => x.runtime.watchdog!.journal.query({ target: 'sim', type: 'incident' }).length > 0, {
    what: 'the incident bundle',
  });
}

describe('detection against the vLLM simulator', () => {
  it('healthy: ok with every probe slot passing, no critical log event', async () => {
    h = await startVllmHarness();
    await h.waitHealthy(SETTLE);
    const types = h.runtime.watchdog!.journal.query({ target: 'sim' }).map((e) => e.type);
    expect(types).not.toContain('critical_log');
    expect(h.transitions.map((t) => t.to)).not.toContain('wedged');
  });

  it('engine_core_death, API server kept alive: wedged with the engine-death rule as diagnosis', async () => {
    h = await startVllmHarness();
    await h.waitHealthy(SETTLE);
    h.sim.enableFault('engine_core_death', { keep_alive: 1 });
    // The first thing that broke: the core's fatal record (the API server's EngineDeadError is the same incident).
    // On a loaded machine the failing probes can turn the target wedged before the follower has read that record
    // (a wedge named by the probes for a moment); the diagnosis must then become the record's, so wait for both.
    await h.waitState('wedged', { diagnosis: 'log:vllm_engine_core_fatal', ...SETTLE });
    const types = h.runtime.watchdog!.journal.query({ target: 'sim' }).map((e) => e.type);
    expect(types).toContain('critical_log');
    await incidentWritten(h);
  });

  it('rank_stall: one data-parallel engine holds requests with no tokens while engine 0 serves → degraded/rank_stalled naming it; off → ok', async () => {
    h = await startVllmHarness();
    await h.waitHealthy(SETTLE);
    const from = h.transitions.length;
    h.sim.enableFault('rank_stall', { engine: 1, running: 2 });
    await h.waitState('degraded', { diagnosis: 'rank_stalled', ...SETTLE });
    expect(h.wd.state.cause).toMatch(
      /^server rank 1 holds 2 running requests with no tokens for \d+ s while rank 0 progress/,
    );
    // The sibling kept serving: nothing was wedged or down on the way.
    expect(h.transitions.slice(from).map((t) => t.to)).not.toContain('wedged');
    expect(h.transitions.slice(from).map((t) => t.to)).not.toContain('down');
    h.sim.disableFault('rank_stall');
    await h.waitState('ok', SETTLE);
  });

  it('engine_core_death, API server exits (upstream default): down', async () => {
    h = await startVllmHarness({ watchdogMs: 500 });
    await h.waitHealthy(SETTLE);
    h.sim.enableFault('engine_core_death');
    await h.waitState('down', SETTLE);
    expect(h.sim.state().up).toBe(false);
    await incidentWritten(h);
  });

  it('shm_broadcast_hang: wedged (engine stalled or completions hung) while /health stays 200', async () => {
    h = await startVllmHarness();
    await h.waitHealthy(SETTLE);
    // A user's long generation is running when a rank hangs: the frozen gauges show it (Running: 1 reqs).
    const long = openStream(h.sim.urls.server, chatBody({ max_tokens: 100_000 }));
    await long.firstData;
    h.sim.enableFault('shm_broadcast_hang', { interval: 1 });
    // The frozen gauges hold the running request with no progress: an engine stall, not just a hung probe. The
    // stall needs stallAfter (3 s) of frozen scrapes while a hung probe can wedge the target sooner on a loaded
    // machine (wedged/completions_hung for a moment): wait for the stall's diagnosis, not the first wedge.
    await h.waitState('wedged', { diagnosis: 'engine_stalled', ...SETTLE });
    const health = Object.values(h.wd.state.slots).find((m) => m.probe === 'health');
    expect(health?.last?.result).toBe('ok');
    expect(long.ended).toBe(false);
    long.cut();
    await incidentWritten(h);
  });

  // Issue 26 item 6: with no user request running the gauges show nothing stuck; vLLM's own warning line
  // (`No available shared memory broadcast block found in N seconds`) names the hang the probes confirm.
  it('shm_broadcast_hang with no traffic: wedged/warning:shm_hang, the warning naming what the probes see', async () => {
    h = await startVllmHarness();
    await h.waitHealthy(SETTLE);
    h.sim.enableFault('shm_broadcast_hang', { interval: 1 });
    await h.waitState('wedged', { diagnosis: 'warning:shm_hang', ...SETTLE });
    expect(h.wd.state.cause).toMatch(/\(shm_hang\) on server/);
    await incidentWritten(h);
  });
});
