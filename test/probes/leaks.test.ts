// 5,000 failing probes leave no file descriptor or handle behind: a watchdog that leaks a socket per
// failure would itself wedge after a long outage (docs/design.md#principles, 4).
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runProbe } from '../../src/sources/probes/runner.js';
import type { ConnKind } from '../../src/core/signals.js';
import { startServer, type TestServer } from './hostile.js';
import { hop, probe } from './fixtures.js';
import { waitFor } from '../helpers/wait.js';

let failing: TestServer;
let refusedUrl: string;
beforeAll(async () => {
  failing = await startServer((_q, res) => {
    res.statusCode = 500;
    res.end('internal error');
  });
  const gone = await startServer(() => {});
  refusedUrl = gone.url;
  await gone.close();
});
afterAll(async () => {
  await failing.close();
});

const openFds = () => readdirSync('/proc/self/fd').length;
const handles = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;

it('5,000 failing probes (connection refused, HTTP 500; fresh and keepalive) leave fds and handles where they were', async () => {
  // Warm up once so lazily created process-wide resources (DNS, TLS contexts, vitest's own pipes) exist
  // before the baseline is taken.
  const warm = [hop(refusedUrl), hop(failing.url)];
  for (const h of warm)
    await runProbe({ target: 't', model: 'm', probe: probe('chat'), hop: h, conn: 'fresh', headers: {} });
  await Promise.all(warm.map((h) => h.close()));
  const fd0 = openFds();
  const h0 = handles();

  const hops = [hop(refusedUrl), hop(failing.url)];
  const results = new Map<string, number>();
  const total = 5000;
  const concurrency = 20;
  let next = 0;
  // One worker per probe name: like the scheduler, at most one run in flight per keep-alive connection.
  const worker = async (w: number) => {
    while (next < total) {
      const i = next++;
      const conn: ConnKind = i % 4 < 2 ? 'fresh' : 'keepalive';
      const { signal } = await runProbe({
        target: 't',
        model: 'm',
        // A deadline far past any answer: under load a 3 s timeout fired before a refused connect was read,
        // and the run counted as a timeout; what is counted here is the failure the server gave.
        probe: probe(i % 3 === 0 ? 'health' : 'chat', { name: `p${w}`, every: '5m', timeout: '2m' }),
        hop: hops[i % 2]!,
        conn,
        headers: {},
      });
      results.set(signal.result, (results.get(signal.result) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  await Promise.all(hops.map((h) => h.close()));

  expect([...results.values()].reduce((a, b) => a + b, 0)).toBe(total);
  expect(results.get('connect_error')).toBe(total / 2);
  expect(results.get('http_error')).toBe(total / 2);
  // Tolerance of 2: closed sockets are released when libuv runs their close callbacks on a later loop turn,
  // and vitest's worker may open its own reporting pipe meanwhile. A leak per probe would show thousands.
  await waitFor(() => openFds() <= fd0 + 2 && handles() <= h0 + 2, {
    timeoutMs: 10_000,
    what: `fds back to ${fd0} (now ${openFds()}) and handles to ${h0} (now ${handles()})`,
  });
  expect(failing.connections).toBeGreaterThan(total / 8);
});
