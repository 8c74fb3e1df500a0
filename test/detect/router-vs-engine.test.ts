// A router fault and an engine fault read differently (issue 41 item 6), end to end against the simulator with the
// reference layout: completions through the router, health probes of the router and of each engine directly, and
// every /metrics (the router's too). The router shutting out a decode that answers is router_circuit_open (or
// router_workers_unhealthy); decode itself gone is not a router_* label, whatever the router's breakers say.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sim } from '../../src/sim/index.js';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const probe = { every: '2s', timeout: '1s', jitter: 0 };
const layout = (sim: Sim) => ({
  probes: [
    {
      ...probe,
      name: 'chat',
      kind: 'chat',
      maxTokens: 2,
      endpoints: ['router'],
      conn: ['fresh', 'keepalive'],
    },
    { ...probe, name: 'health', kind: 'health', path: '/health', endpoints: ['router', 'prefill', 'decode'] },
  ],
  detect: { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '5s', hangAfter: '5s' },
  engines: (['prefill', 'decode', 'router'] as const).map((service) => ({
    service,
    metrics: `${sim.urls[service]}/metrics`,
    every: '1s',
    timeout: '1s',
  })),
});

describe('router fault vs engine fault', () => {
  it.each([
    ['open', 'router_circuit_open', /router holds 1 worker circuit breaker\(s\) open/],
    ['unhealthy', 'router_workers_unhealthy', /router marks 1 worker\(s\) unhealthy/],
  ])(
    'router_circuit_open mode=%s → wedged/%s while both engines answer; off → ok',
    async (mode, diagnosis, cause) => {
      h = await startHarness({}, layout);
      await h.waitHealthy();
      const from = h.transitions.length;
      h.sim.enableFault('router_circuit_open', { worker: 'decode', mode });
      await h.waitState('wedged', { diagnosis, timeoutMs: 30_000 });
      expect(h.wd.state.cause).toMatch(cause);
      expect(h.wd.state.cause).toContain('prefill, decode answer directly');
      // At most one label before it, and a weaker one (the failures read before the next router scrape).
      const seen = h.transitions.slice(from).map((t) => `${t.to}/${t.diagnosis}`);
      expect(seen.at(-1)).toBe(`wedged/${diagnosis}`);
      expect(seen.length).toBeLessThanOrEqual(2);
      for (const l of seen.slice(0, -1))
        expect(l).toMatch(/\/(completions_failing|completions_hung|intermittent)$/);
      h.sim.disableFault('router_circuit_open');
      await h.waitState('ok', { timeoutMs: 30_000 });
    },
  );

  it('decode crashed: the router shuts it out too, and the engine, not the router, is named', async () => {
    h = await startHarness({}, layout);
    await h.waitHealthy();
    const from = h.transitions.length;
    h.sim.enableFault('crash', { service: 'decode' });
    await h.waitState('down', { timeoutMs: 30_000 });
    const seen = h.transitions.slice(from).map((t) => t.diagnosis ?? '');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((d) => d.startsWith('router_'))).toEqual([]);
  });
});
