// A healthy simulator under C=32 load for 30 s: the watchdog must not leave `ok` (no false positives).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { startHarness, type Harness } from './sim-harness.js';

const LOAD = fileURLToPath(new URL('../helpers/stream-load.mjs', import.meta.url));

let h: Harness | undefined;
let load: ChildProcess | undefined;
afterEach(async () => {
  if (load && load.exitCode === null) load.kill('SIGKILL');
  await h?.stop();
  h = undefined;
  load = undefined;
});

/**
 * The load from its own process (test/helpers/stream-load.mjs): in this one, its 32 streams' parsing shared the
 * daemon's event loop, and at load 17 the probes' TTFT read past the 5 s objective (`degraded/slow`): the test's
 * client starving the daemon, not the deployment's slowness.
 */
function runLoad(
  url: string,
  concurrency: number,
  ms: number,
): Promise<{ completed: number; failed: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD, JSON.stringify({ url, concurrency, ms })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    load = child;
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`stream-load exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as { completed: number; failed: number });
    });
  });
}

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
  const { completed, failed } = await runLoad(h.sim.urls.router, CONCURRENCY, LOAD_MS);
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
