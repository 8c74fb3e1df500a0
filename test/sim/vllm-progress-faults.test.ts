// The vLLM simulator's issue-41 faults, as the watchdog sees them from outside: metrics_frozen (the core hangs with
// no log line; gauges and counters freeze, or /metrics stops answering), recurring_stall (the loop pauses and
// resumes by itself), requests_lost (accepted, counted in /load, never at the engine) and saturation (a capped batch:
// the rest wait in the queue while tokens flow).
import { afterEach, describe, expect, it } from 'vitest';
import { vllmMapping } from '../../src/sources/engines/mappings/vllm.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';
import { startVllmSim, type VllmSim } from '../../src/sim/vllm/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream, post } from './client.js';

let sim: VllmSim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const fields = async () =>
  vllmMapping.map(parsePrometheusText((await get(`${sim!.urls.server}/metrics`)).text).samples);

describe('vLLM simulator: issue 41 faults', () => {
  it('metrics_frozen: a request hangs, the gauges stay at 0/0 and the counters still, no log line; disabling resumes it', async () => {
    sim = await startVllmSim({});
    const url = sim.urls.server;
    expect((await post(`${url}/v1/chat/completions`, chatBody({ max_tokens: 5 }))).status).toBe(200);
    const before = await fields();
    sim.enableFault('metrics_frozen');
    const stream = openStream(url, chatBody({ max_tokens: 5 }));
    await waitFor(() => sim!.state().inflight === 1, { what: 'the request at the engine' });
    const during = await fields();
    expect(during.running).toBe(0);
    expect(during.queued).toBe(0);
    expect(during.generatedTokensTotal).toBe(before.generatedTokensTotal);
    expect(stream.ended).toBe(false);
    expect((await get(`${url}/health`)).status).toBe(200);
    sim.disableFault('metrics_frozen');
    await waitFor(() => stream.ended, { what: 'the request to finish after the core resumes' });
    expect((await fields()).generatedTokensTotal).toBeGreaterThan(before.generatedTokensTotal!);
  });

  it('metrics_frozen mode=absent: /metrics does not answer while /health does', async () => {
    sim = await startVllmSim({});
    sim.enableFault('metrics_frozen', { mode: 'absent' });
    await waitFor(() => Object.keys(sim!.state().faults as object).includes('metrics_frozen'), {
      what: 'the fault on',
    });
    await expect(get(`${sim.urls.server}/metrics`, { timeoutMs: 500 })).rejects.toThrow();
    expect((await get(`${sim.urls.server}/health`)).status).toBe(200);
  });

  it('requests_lost every=1: the request is counted in /load and never reaches the engine', async () => {
    sim = await startVllmSim({});
    sim.enableFault('requests_lost', { every: 1 });
    const stream = openStream(sim.urls.server, chatBody({ max_tokens: 5 }));
    await waitFor(async () => JSON.parse((await get(`${sim!.urls.server}/load`)).text).server_load === 1, {
      what: 'the request counted by the API server',
    });
    expect(sim.state().inflight).toBe(0);
    const f = await fields();
    expect([f.running, f.queued]).toEqual([0, 0]);
    expect(stream.ended).toBe(false);
    stream.cut();
  });

  it('saturation slots=1: a second request waits in the queue while the first makes tokens', async () => {
    sim = await startVllmSim({});
    sim.enableFault('saturation', { slots: 1 });
    const url = sim.urls.server;
    const long = openStream(url, chatBody({ max_tokens: 100_000 }));
    await waitFor(() => sim!.state().running === 1, { what: 'the long generation running' });
    const probe = openStream(url, chatBody({ max_tokens: 5 }));
    await waitFor(async () => (await fields()).queued === 1, { what: 'the second request waiting' });
    const a = (await fields()).generatedTokensTotal!;
    await waitFor(async () => (await fields()).generatedTokensTotal! > a + 10, { what: 'tokens flowing' });
    expect(probe.ended).toBe(false);
    long.cut();
    await waitFor(() => probe.ended, { what: 'the waiting request served once the slot frees' });
  });

  it('recurring_stall: a request sent as a stall begins waits the stall out, then finishes', async () => {
    sim = await startVllmSim({});
    sim.enableFault('recurring_stall', { stall: 1, every: 60 });
    const url = sim.urls.server;
    const t0 = Date.now();
    const r = await post(`${url}/v1/chat/completions`, chatBody({ max_tokens: 3 }));
    expect(r.status).toBe(200);
    // The loop made no step for the stall (1 s from enabling): the request could not finish sooner.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(sim.state().counters).toMatchObject({ finished: { stop: 1 } });
  });
});
