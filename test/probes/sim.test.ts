// Probes against the simulated SGLang PD deployment (src/sim): each fault shows up as the probe result
// the detector relies on.
import { Registry } from 'prom-client';
import { afterEach, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { createProbeMetrics } from '../../src/metrics.js';
import { ProbeScheduler } from '../../src/sources/probes/schedule.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { tripBootstrapThreadDeath } from '../helpers/sim.js';
import { quietLogger } from '../helpers/logger.js';

let sim: Sim | undefined;
let scheduler: ProbeScheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
  await sim?.stop();
  sim = undefined;
});

const quiet = quietLogger();

function probesFor(s: Sim, probesYaml: string): ProbeScheduler {
  const loaded = parseConfigText(
    `
targets:
  - name: sim
    endpoints:
${s.urls.proxy ? `      - { name: proxy, url: "${s.urls.proxy}" }` : ''}
      - { name: router, url: "${s.urls.router}" }
      - { name: decode, url: "${s.urls.decode}" }
    probes:
${probesYaml}
`,
    'sim.yaml',
    {},
  );
  const target = loaded.config.targets[0]!;
  scheduler = new ProbeScheduler({
    target,
    headers: loaded.headers.get('sim')!,
    metrics: createProbeMetrics(new Registry()),
    logger: quiet,
    onResult: () => {},
  });
  return scheduler;
}

// The router serves no /get_server_info in the simulator; the engine (decode) does.
const ALL = `
      - { name: chat, kind: chat, every: 1h, timeout: 10s, endpoints: [proxy, router] }
      - { name: tools, kind: toolcall, every: 1h, timeout: 10s, endpoints: [proxy, router], conn: [fresh, keepalive] }
      - { name: health, kind: health, every: 1h, timeout: 5s, path: /health, endpoints: [proxy, router] }
      - { name: info, kind: serverinfo, every: 1h, timeout: 5s, endpoints: [decode] }
`;

const summary = (
  rs: Array<{ probe: string; endpoint: string; conn: string; result: string; phase?: string }>,
) => rs.map((r) => `${r.probe}/${r.endpoint}/${r.conn}:${r.result}${r.phase ? `(${r.phase})` : ''}`).sort();

it('healthy simulator: every probe passes on every hop and connection kind (twice, so keep-alive is reused)', async () => {
  sim = await startSim({ proxy: true });
  const p = probesFor(sim, ALL);
  for (let round = 0; round < 2; round++) {
    const rs = await p.runNow();
    expect(rs).toHaveLength(11);
    expect(
      rs.filter((r) => r.result !== 'ok'),
      JSON.stringify(summary(rs)),
    ).toEqual([]);
  }
  expect(p.recent().results.some((r) => r.reusedConnection)).toBe(true);
});

it('keepalive_stall: keep-alive probes through the proxy time out while fresh ones pass', async () => {
  sim = await startSim({ proxy: true });
  const p = probesFor(sim, `      - { name: chat, kind: chat, every: 1h, timeout: 2s, endpoints: [proxy] }`);
  // Open the keep-alive connection first, healthy; then the fault holds the reused connection.
  expect(summary(await p.runNow())).toEqual(['chat/proxy/fresh:ok', 'chat/proxy/keepalive:ok']);
  sim.enableFault('keepalive_stall');
  const rs = await p.runNow();
  const ka = rs.find((r) => r.conn === 'keepalive')!;
  const fresh = rs.find((r) => r.conn === 'fresh')!;
  expect(fresh.result).toBe('ok');
  expect(ka.result).toBe('timeout');
  expect(ka.reusedConnection).toBe(true);
});

it('nixl_abort_unhandled tripped: chat times out in phase first_token while health passes', async () => {
  sim = await startSim({ faults: ['nixl_abort_unhandled'] });
  await tripBootstrapThreadDeath(sim);

  const p = probesFor(
    sim,
    `      - { name: chat, kind: chat, every: 1h, timeout: 2s, endpoints: [router] }
      - { name: health, kind: health, every: 1h, timeout: 2s, endpoints: [router] }`,
  );
  const rs = await p.runNow();
  expect(summary(rs)).toEqual([
    'chat/router/fresh:timeout(first_token)',
    'chat/router/keepalive:timeout(first_token)',
    'health/router/fresh:ok',
  ]);
});

it('toolcall_leak: the toolcall probe reports toolcall_leak', async () => {
  sim = await startSim({ faults: ['toolcall_leak'] });
  const p = probesFor(
    sim,
    `      - { name: tools, kind: toolcall, every: 1h, timeout: 10s, endpoints: [router] }`,
  );
  const rs = await p.runNow();
  expect(summary(rs)).toEqual(['tools/router/fresh:toolcall_leak']);
  expect(rs[0]!.error).toMatch(/DSML/);
});
