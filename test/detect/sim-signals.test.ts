// Issue 26's diagnoses end to end: the real runtime (probes, log watcher, engine and router scrapes, watchdog)
// against the simulators, one new fault at a time: KV-transfer failure counters, a crawl, orphaned requests, a
// stranded PD queue entry under traffic, a half-failed PD pair; and the vLLM NIXL variant.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sim } from '../../src/sim/index.js';
import type { VllmSim } from '../../src/sim/vllm/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, openStream, streamChat } from '../sim/client.js';
import { startHarness, startVllmHarness, type Harness } from './sim-harness.js';

let h: Harness<Sim> | Harness<VllmSim> | undefined;
const streams: Array<{ cut(): void }> = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.cut();
  await h?.stop();
  h = undefined;
});

const chat = (extra: Record<string, unknown> = {}) => ({
  name: 'chat',
  kind: 'chat',
  every: '2s',
  timeout: '1s',
  jitter: 0,
  maxTokens: 2,
  endpoints: ['router'],
  conn: ['fresh', 'keepalive'],
  ...extra,
});
const health = {
  name: 'health',
  kind: 'health',
  every: '2s',
  timeout: '1s',
  jitter: 0,
  path: '/health',
  endpoints: ['router'],
};
const DETECT = { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '3s', confirmInterval: '2s' };
const scrapes = (sim: Sim, withRouter = false) => [
  ...(['prefill', 'decode'] as const).map((service) => ({
    service,
    metrics: `${sim.urls[service]}/metrics`,
    every: '1s',
    timeout: '1s',
  })),
  ...(withRouter
    ? [{ service: 'router', metrics: `${sim.urls.router}/metrics`, every: '1s', timeout: '1s' }]
    : []),
];

describe('issue 26 shapes against the SGLang simulator', () => {
  it('kv_transfer_failure: the engines count failed transfers → kv_transfer_failing, exported by kind; off → ok', async () => {
    const x = await startHarness({}, (sim) => ({
      probes: [chat(), health],
      engines: scrapes(sim),
      detect: { ...DETECT, failureWindow: '10s' },
    }));
    h = x;
    await x.waitHealthy();
    x.sim.enableFault('kv_transfer_failure', { rate: 0.5 });
    // Degraded while some transfers get through, wedged when every probe slot fails too: the counters name it.
    await waitFor(() => x.wd.state.diagnosis === 'kv_transfer_failing', {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: () =>
        `kv_transfer_failing (now ${x.wd.state.state}/${x.wd.state.diagnosis}: ${x.wd.state.cause})`,
    });
    expect(['degraded', 'wedged']).toContain(x.wd.state.state);
    expect(x.wd.state.cause).toMatch(
      /^(prefill|decode): \d+ KV transfers failed within \d+ s \(its own counters\)/,
    );
    const failures = (await x.metrics.engineFailures.get()).values.filter(
      (v) => v.labels.kind === 'kv_transfer_failed' && v.value > 0,
    );
    expect(failures.map((v) => v.labels.service).sort()).toEqual(['decode', 'prefill']);
    x.sim.disableFault('kv_transfer_failure');
    await x.waitState('ok', { timeoutMs: 90_000 });
  }, 180_000);

  it('crawl: tokens per running request collapse against the baseline while requests run → engine_crawling; off → ok', async () => {
    const x = await startHarness({}, (sim) => ({
      probes: [chat(), health],
      engines: scrapes(sim),
      detect: { ...DETECT, stallAfter: '10s', crawlFraction: 0.1 },
    }));
    h = x;
    await x.waitHealthy();
    // A user's long generation keeps a request running, so the engine has a throughput of its own to compare with.
    const long = openStream(x.sim.urls.router, chatBody({ max_tokens: 10_000_000 }));
    streams.push(long);
    await long.firstData;
    await waitFor(() => (x.wd.state.engines.decode?.crawl?.samples ?? 0) >= 5, {
      timeoutMs: 20_000,
      what: () => `a decode baseline (${x.wd.state.engines.decode?.crawl?.samples ?? 0} samples)`,
    });
    x.sim.enableFault('crawl', { factor: 30 });
    await waitFor(() => x.wd.state.diagnosis === 'engine_crawling', {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: () => `engine_crawling (now ${x.wd.state.state}/${x.wd.state.diagnosis}: ${x.wd.state.cause})`,
    });
    expect(['degraded', 'wedged']).toContain(x.wd.state.state);
    expect(x.wd.state.cause).toMatch(/^decode makes [\d.]+ % of its own tokens per running request/);
    const crawling = (await x.metrics.engineCrawling.get()).values.find((v) => v.labels.service === 'decode');
    expect(crawling?.value).toBe(1);
    expect(x.wd.state.engines.decode!.stalled).toBe(false);
    x.sim.disableFault('crawl');
    long.cut();
    await x.waitState('ok', { timeoutMs: 60_000 });
  }, 180_000);

  it("orphaned_requests: the router's oldest in-flight request ages past orphanAfter while completions pass → degraded/requests_orphaned", async () => {
    const x = await startHarness({}, (sim) => ({
      probes: [chat(), health],
      engines: scrapes(sim, true),
      // The simulator's router buckets ages at 0/30/60 s: the oldest request is known older than 30 s after 30 s.
      detect: { ...DETECT, stallAfter: '10s', orphanAfter: '30s' },
    }));
    h = x;
    await x.waitHealthy();
    // Orphaned 27 s before they show: they cross the 30 s bucket on the wall clock 3 s in, not 30 (how long
    // orphanAfter waits is the reducer's, on the virtual clock in state-signals.test.ts).
    x.sim.enableFault('orphaned_requests', { count: 2, age: 27 });
    await x.waitState('degraded', { diagnosis: 'requests_orphaned', timeoutMs: 40_000 });
    expect(x.wd.state.cause).toMatch(
      /^router holds a request in flight for over 30 s \(\d+ in flight\) while completions pass: nothing finishes it$/,
    );
    const age = (await x.metrics.engineOldestRequestAge.get()).values.find(
      (v) => v.labels.service === 'router',
    );
    expect(age?.value).toBeGreaterThanOrEqual(30);
    x.sim.disableFault('orphaned_requests');
    await x.waitState('ok', { timeoutMs: 30_000 });
  }, 180_000);

  it('stranded_queue_entry under continuous traffic: the transfer queue never reaches 0 → degraded/queue_leak (the floor); off → ok', async () => {
    const x = await startHarness({}, (sim) => ({
      probes: [chat(), health],
      engines: scrapes(sim),
      detect: { ...DETECT, stallAfter: '10s', leakAfter: '6s' },
    }));
    h = x;
    await x.waitHealthy();
    let traffic = true;
    const users = (async () => {
      // Continuous user traffic, bounded: at most 400 requests, two at a time.
      for (let i = 0; i < 200 && traffic; i++) {
        await Promise.all([
          streamChat(x.sim.urls.router, chatBody({ max_tokens: 20 })),
          streamChat(x.sim.urls.router, chatBody({ max_tokens: 20 })),
        ]);
      }
    })();
    try {
      x.sim.enableFault('stranded_queue_entry', { count: 1 });
      await x.waitState('degraded', { diagnosis: 'queue_leak', timeoutMs: 30_000 });
      expect(x.wd.state.cause).toMatch(
        /^decode holds 0 bootstrapping and \d+ in-transfer requests, never fewer than 1 for /,
      );
    } finally {
      traffic = false;
      await users;
    }
    x.sim.disableFault('stranded_queue_entry');
    await x.waitState('ok', { timeoutMs: 30_000 });
  }, 180_000);

  it('pd_half_failed: the router holds requests, prefill is down, decode up → wedged/pd_pair_half_failed naming both legs; off → ok', async () => {
    const x = await startHarness({}, (sim) => ({
      probes: [chat({ timeout: '30s' }), health],
      engines: scrapes(sim, true),
      detect: { ...DETECT, hangAfter: '5s' },
    }));
    h = x;
    await x.waitHealthy();
    x.sim.enableFault('pd_half_failed', { leg: 'prefill' });
    await x.waitState('wedged', { diagnosis: 'pd_pair_half_failed', timeoutMs: 40_000 });
    expect(x.wd.state.cause).toMatch(
      /^router holds requests nothing completes \(\d+ in flight at its last scrape\) while prefill is down \((its \/metrics scrape fails|refusing connections)\) and decode is up; it reports 1 worker\(s\) unhealthy(; after \w+ on decode)?$/,
    );
    x.sim.disableFault('pd_half_failed');
    await x.waitState('ok', { timeoutMs: 60_000 });
  }, 180_000);
});

describe('issue 26 shapes against the vLLM simulator', () => {
  it('crawl: the token counter per running request collapses against its baseline → engine_crawling; off → ok', async () => {
    const x = await startVllmHarness({}, { detect: { ...DETECT, stallAfter: '10s' } });
    h = x;
    await x.waitHealthy({ timeoutMs: 30_000 });
    const long = openStream(x.sim.urls.server, chatBody({ max_tokens: 10_000_000 }));
    streams.push(long);
    await long.firstData;
    await waitFor(() => (x.wd.state.engines.server?.crawl?.samples ?? 0) >= 5, {
      timeoutMs: 20_000,
      what: () => `a baseline (${x.wd.state.engines.server?.crawl?.samples ?? 0} samples)`,
    });
    x.sim.enableFault('crawl', { factor: 30 });
    await waitFor(() => x.wd.state.diagnosis === 'engine_crawling', {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: () => `engine_crawling (now ${x.wd.state.state}/${x.wd.state.diagnosis}: ${x.wd.state.cause})`,
    });
    expect(x.wd.state.cause).toMatch(/^server makes [\d.]+ % of its own tokens per running request/);
    x.sim.disableFault('crawl');
    long.cut();
    await x.waitState('ok', { timeoutMs: 60_000 });
  }, 180_000);

  it('nixl_transfer_failure at rate 0.3: the NIXL failure counter rises while completions pass → degraded/kv_transfer_failing', async () => {
    const x = await startVllmHarness({}, { detect: { ...DETECT, failureWindow: '10s' } });
    h = x;
    await x.waitHealthy({ timeoutMs: 30_000 });
    x.sim.enableFault('nixl_transfer_failure', { rate: 0.3 });
    await x.waitState('degraded', { diagnosis: 'kv_transfer_failing', timeoutMs: 40_000 });
    expect(x.wd.state.cause).toMatch(/^server: \d+ KV transfers failed within \d+ s \(its own counters\)$/);
    x.sim.disableFault('nixl_transfer_failure');
    await x.waitState('ok', { timeoutMs: 90_000 });
  }, 180_000);
});
