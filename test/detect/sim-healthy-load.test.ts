// A healthy simulator under C=32 load for 30 s: the watchdog must not leave `ok` (no false positives).
import { Pool } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness | undefined;
let pool: Pool | undefined;
afterEach(async () => {
  await pool?.close();
  await h?.stop();
  h = undefined;
  pool = undefined;
});

// 15 rounds of every probe under the load, and three leakAfter periods: a load mistaken for a fault shows well
// within it (it was 60 s, half of it the same rounds again; issue 39 cut the suite's waiting).
const LOAD_MS = 30_000;
const CONCURRENCY = 32;

// The example config's timeouts and TTFT objective (30 s, 5 s) at a faster cadence, so many probes run under
// the load: false positives are judged on the settings users deploy, not on the 1 s test timeout
// (docs/design.md#principles, 10).
const DEPLOYED = { timeout: '30s', ttftObjective: '5s', jitter: 0.1 };
const PROBES = [
  {
    name: 'chat',
    kind: 'chat',
    every: '2s',
    maxTokens: 8,
    endpoints: ['proxy', 'router'],
    conn: ['fresh', 'keepalive'],
    ...DEPLOYED,
  },
  { name: 'tools', kind: 'toolcall', every: '2s', endpoints: ['router'], conn: ['fresh'], ...DEPLOYED },
  {
    name: 'health',
    kind: 'health',
    every: '2s',
    timeout: '5s',
    path: '/health',
    endpoints: ['router', 'prefill', 'decode'],
  },
  {
    name: 'info',
    kind: 'serverinfo',
    every: '2s',
    timeout: '10s',
    path: '/get_server_info',
    endpoints: ['decode'],
  },
];

it('stays ok through 30 s of C=32 streaming load (no transition, no intermittent, no queue_leak)', async () => {
  // leakAfter far below its 10 m default, so a busy PD queue mistaken for a leak would show within the load; the
  // router's own metrics are scraped too, so a busy router mistaken for a stuck one would show.
  h = await startHarness({ proxy: true }, (sim) => ({
    probes: PROBES,
    detect: { stallAfter: '60s', leakAfter: '10s' },
    engines: [
      ...(['prefill', 'decode', 'router'] as const).map((service) => ({
        service,
        metrics: `${sim.urls[service]}/metrics`,
        every: '1s',
        timeout: '1s',
      })),
    ],
  }));
  await h.waitState('ok', { timeoutMs: 20_000 });
  const okAt = h.transitions.length;
  const finishedBefore = h.sim.state().finishedTotal;
  pool = new Pool(h.sim.urls.router, { connections: CONCURRENCY });
  const deadline = Date.now() + LOAD_MS;
  let completed = 0;
  let failed = 0;
  const body = JSON.stringify({
    model: 'sim-model',
    messages: [{ role: 'user', content: 'Tell me about GPUs.' }],
    stream: true,
    max_tokens: 48,
  });
  const worker = async () => {
    while (Date.now() < deadline) {
      try {
        const res = await pool!.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        const text = await res.body.text();
        if (res.statusCode === 200 && text.includes('[DONE]')) completed++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // The load was real: every worker kept its connection busy (thousands of completions on a quiet machine, a few
  // hundred under load 20: the count is the machine's, so the bound is the test's own concurrency).
  expect(completed).toBeGreaterThan(CONCURRENCY * 4);
  expect(failed).toBe(0);
  expect(h.sim.state().finishedTotal - finishedBefore).toBeGreaterThanOrEqual(completed);
  expect(h.transitions.slice(okAt)).toEqual([]);
  expect(h.wd.state.state).toBe('ok');
  // Nor a diagnosis change inside a state (e.g. a degraded detour would show as a transition; this catches any).
  const diagnoses = h.runtime.watchdog!.journal.query({ target: 'sim', type: 'diagnosis' });
  expect(diagnoses).toEqual([]);
  // Issue 13: no slot's window came near `intermittent` (3 of 10), no PD queue looked leaked, no rank stalled.
  const windows = Object.values(h.wd.state.slots).map((m) => (m.recent ?? []).reduce((a, b) => a + b, 0));
  expect(Math.max(...windows)).toBe(0);
  const journal = h.runtime.watchdog!.journal.query({ target: 'sim', limit: 100_000 });
  const naming = (d: string) => journal.filter((e) => JSON.stringify(e).includes(d));
  expect(naming('intermittent')).toEqual([]);
  expect(naming('queue_leak')).toEqual([]);
  expect(naming('rank_stalled')).toEqual([]);
  expect(naming('router_stuck')).toEqual([]);
  // …and the probes kept running through it (4 chat slots every 2 s: 60 runs in the load's 30 s).
  const runs = (await h.metrics.probesTotal.get()).values.filter((v) => v.labels.probe === 'chat');
  expect(runs.reduce((a, v) => a + v.value, 0)).toBeGreaterThan(50);
}, 90_000);
