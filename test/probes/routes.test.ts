import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import { probeRoutes } from '../../src/server/probe-routes.js';
import { healthyHandler, startServer, type TestServer } from './hostile.js';
import { waitFor } from '../helpers/wait.js';
import { PROBES } from '../../src/probes/registry.js';

const TOKEN = 'tok-9f8e7d6c5b4a';
let servers: TestServer[] = [];
let daemon: Daemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(good: string, bad: string) {
  dir = mkdtempSync(join(tmpdir(), 'ww-probe-routes-'));
  const file = join(dir, 'wedgewatch.yaml');
  writeFileSync(
    file,
    `
stateDir: ${dir}
targets:
  - name: pd
    endpoints:
      - { name: proxy, url: "${good}", bearerToken: "\${LLM_KEY}" }
      - { name: router, url: "${bad}", headers: { X-Api-Key: "\${LLM_KEY}" } }
    probes:
      - { name: chat, kind: chat, every: 1h, jitter: 0 }
      - { name: health, kind: health, every: 1h, jitter: 0, endpoints: [proxy] }
`,
  );
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(c, _e, cb) {
        lines.push(c.toString());
        cb();
      },
    }),
  });
  daemon = new Daemon({
    configPath: file,
    logger,
    listenAddress: '127.0.0.1:0',
    plugins: [probeRoutes],
    env: { LLM_KEY: TOKEN },
  });
  await daemon.start();
  return { base: `http://${daemon.address()}`, lines };
}

it("GET /probe runs once and returns only that probe's metrics; debug shows a redacted timeline", async () => {
  const good = await startServer(healthyHandler);
  const bad = await startServer((req, res) => {
    res.statusCode = 500;
    res.end(`refused key ${String(req.headers['x-api-key'])}`);
  });
  servers.push(good, bad);
  const { base, lines } = await start(good.url, bad.url);

  const r = await fetch(`${base}/probe?target=pd&probe=chat&endpoint=proxy`);
  expect(r.status).toBe(200);
  const text = await r.text();
  expect(text).toContain(
    'wedgewatch_probe_success{target="pd",probe="chat",endpoint="proxy",conn="fresh",kind="chat"} 1',
  );
  expect(text).toContain(
    'wedgewatch_probe_success{target="pd",probe="chat",endpoint="proxy",conn="keepalive",kind="chat"} 1',
  );
  expect(text).not.toContain('endpoint="router"');
  expect(text).not.toContain('process_cpu');
  expect(good.requests.some((q) => q.authorization === `Bearer ${TOKEN}`)).toBe(true);

  const one = await (await fetch(`${base}/probe?target=pd&probe=chat&endpoint=router&conn=fresh`)).text();
  expect(one).toContain(
    'wedgewatch_probe_success{target="pd",probe="chat",endpoint="router",conn="fresh",kind="chat"} 0',
  );
  expect(one).toContain('result="http_error"');
  expect(one).not.toContain('conn="keepalive"');

  const dbg = await (
    await fetch(`${base}/probe?target=pd&probe=chat&endpoint=proxy&conn=fresh&debug=true`)
  ).text();
  for (const want of [
    'connected',
    'headers: HTTP 200',
    'first token',
    'chunk ',
    '[DONE]',
    'Result: ok',
    'Metrics that would have been returned',
    'Probe configuration',
    'Authorization: <secret>',
  ]) {
    expect(dbg).toContain(want);
  }
  const dbgBad = await (await fetch(`${base}/probe?target=pd&probe=chat&endpoint=router&debug=true`)).text();
  expect(dbgBad).toContain('Result: http_error');
  expect(dbgBad).toContain('refused key <secret>');

  await waitFor(
    async () => {
      const j = (await (await fetch(`${base}/api/probes`)).json()) as {
        results: unknown[];
        failures: unknown[];
      };
      return j.results.length >= 5 && j.failures.length >= 2 ? j : undefined;
    },
    { what: 'scheduled results in /api/probes' },
  );
  const api = await (await fetch(`${base}/api/probes?target=pd`)).text();
  expect(api).toContain('"result":"http_error"');
  expect(api).toContain('"failures"');

  for (const out of [text, one, dbg, dbgBad, api, lines.join('')]) expect(out).not.toContain(TOKEN);
});

it('unknown target, probe, endpoint or conn: 400 with a clear message', async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  const { base } = await start(good.url, good.url);
  const cases: Array<[string, RegExp]> = [
    ['', /target parameter is missing \(have: pd\)/],
    ['target=nope&probe=chat', /unknown target "nope" \(have: pd\)/],
    ['target=pd', /probe parameter is missing/],
    ['target=pd&probe=nope', /unknown probe "nope" for target pd \(have: chat, health\)/],
    ['target=pd&probe=health&endpoint=router', /does not run on endpoint "router" \(have: proxy\)/],
    ['target=pd&probe=chat&conn=udp', /conn must be one of fresh, keepalive/],
  ];
  for (const [q, msg] of cases) {
    const r = await fetch(`${base}/probe?${q}`);
    expect(r.status, q).toBe(400);
    expect(await r.text()).toMatch(msg);
  }
  expect((await fetch(`${base}/api/probes?target=nope`)).status).toBe(400);
});

it('allows one /probe at a time per (target, probe): a second one while the first runs is 429', async () => {
  let hold = false;
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const slow = await startServer((req, res, body) => {
    if (req.url === '/health' && hold) void held.then(() => res.end('ok'));
    else healthyHandler(req, res, body);
  });
  servers.push(slow);
  const healthCalls = () => slow.requests.filter((q) => q.path === '/health').length;
  const { base } = await start(slow.url, slow.url);
  // The scheduler's first round also calls /health: let it pass before holding requests.
  await waitFor(() => healthCalls() >= PROBES.health.defaultConn.length, { what: 'scheduler health round' });
  const before = healthCalls();
  hold = true;
  const first = fetch(`${base}/probe?target=pd&probe=health&conn=fresh`);
  await waitFor(() => healthCalls() > before, { what: 'first /probe reached the engine' });
  const second = await fetch(`${base}/probe?target=pd&probe=health&conn=fresh`);
  expect(second.status).toBe(429);
  expect(await second.text()).toMatch(/probe health of target pd is already running/);
  // Another probe of the same target is not blocked.
  expect((await fetch(`${base}/probe?target=pd&probe=chat&endpoint=proxy&conn=fresh`)).status).toBe(200);
  release();
  const r1 = await first;
  expect(r1.status).toBe(200);
  expect(await r1.text()).toMatch(/result="ok"/);
  // A finished run frees the slot.
  expect((await fetch(`${base}/probe?target=pd&probe=health&conn=fresh`)).status).toBe(200);
});
