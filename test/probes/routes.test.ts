import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { probeRoutes } from '../../src/outputs/server/probe-routes.js';
import { goodStream, healthyHandler, startServer, type TestServer } from './hostile.js';
import { waitFor } from '../helpers/wait.js';
import { PROBES } from '../../src/sources/probes/registry.js';
import { capturingLogger } from '../helpers/logger.js';

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

async function start(
  good: string,
  bad: string,
  opts: { now?: () => number; web?: string; chat?: string } = {},
) {
  dir = mkdtempSync(join(tmpdir(), 'ww-probe-routes-'));
  const file = join(dir, 'wedgewatch.yaml');
  writeFileSync(
    file,
    `
stateDir: ${dir}
${opts.web ?? ''}
targets:
  - name: pd
    endpoints:
      - { name: proxy, url: "${good}", bearerToken: "\${LLM_KEY}" }
      - { name: router, url: "${bad}", headers: { X-Api-Key: "\${LLM_KEY}" } }
    probes:
      - { name: chat, kind: chat, every: 30s, jitter: 0${opts.chat ?? ''} }
      - { name: health, kind: health, every: 1h, jitter: 0, endpoints: [proxy] }
`,
  );
  const { logger, lines } = capturingLogger('debug');
  daemon = new Daemon({
    configPath: file,
    logger,
    listenAddress: '127.0.0.1:0',
    plugins: [(d) => probeRoutes(d, { now: opts.now })],
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
  // A clock that moves 1 min per call: the on-demand interval (probe.every) never limits this test's runs.
  let clock = 0;
  const { base, lines } = await start(good.url, bad.url, { now: () => (clock += 60_000) });

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

  // The log was captured (a debug logger writes every request), so its absence of the token means something.
  expect(lines.length).toBeGreaterThan(0);
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
  // A clock that moves 1 h per call: the on-demand interval (every kind has one) never limits this test's runs.
  let clock = 0;
  const { base } = await start(slow.url, slow.url, { now: () => (clock += 3_600_000) });
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

/** A chat server whose streams stop after the first token until `release()`; records how each stream ended. */
async function heldChatServer() {
  let hold = false;
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const ended: string[] = [];
  const server = await startServer((req, res, body) => {
    if (req.url !== '/v1/chat/completions' || !hold) return healthyHandler(req, res, body);
    const parts = goodStream();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(parts[0]!);
    res.write(parts[1]!);
    res.on('close', () => ended.push(res.writableFinished ? 'finished' : 'cut by the client'));
    void held.then(() => {
      for (const p of parts.slice(2)) res.write(p);
      res.end();
    });
  });
  const chats = () => server.requests.filter((q) => q.path === '/v1/chat/completions').length;
  return { server, ended, chats, holdFromNow: () => (hold = true), release: () => release() };
}

it("a scrape timeout bounds the caller's wait, never the probe: the completion runs on to [DONE]", async () => {
  const good = await startServer(healthyHandler);
  const slow = await heldChatServer();
  servers.push(good, slow.server);
  const { base } = await start(good.url, slow.server.url);
  // The scheduler's first round (fresh and keep-alive) passes before streams are held.
  await waitFor(() => slow.chats() >= 2, { what: 'scheduler chat round' });
  slow.holdFromNow();
  const before = slow.chats();
  const r = await fetch(`${base}/probe?target=pd&probe=chat&endpoint=router&conn=fresh`, {
    headers: { 'X-Prometheus-Scrape-Timeout-Seconds': '0.6' },
  });
  expect(r.status).toBe(504);
  expect(await r.text()).toMatch(
    /did not finish within the caller's wait.*runs on to its own timeout \(30 s\)/,
  );
  expect(slow.chats()).toBe(before + 1);
  // The run is still going (its slot is held), and the engine has not seen a disconnect.
  const again = await fetch(`${base}/probe?target=pd&probe=chat&endpoint=router&conn=fresh`);
  expect(again.status).toBe(429);
  expect(await again.text()).toMatch(/already running/);
  expect(slow.ended).toEqual([]);
  slow.release();
  await waitFor(() => slow.ended.length >= 1, { what: 'the held stream to end' });
  expect(slow.ended).toEqual(['finished']);
});

it('completion probes run on demand at most once per onDemandInterval: 429 with Retry-After beyond', async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  let clock = 1_000_000;
  const { base } = await start(good.url, good.url, { now: () => clock, chat: ', onDemandInterval: 20s' });
  const url = `${base}/probe?target=pd&probe=chat&endpoint=proxy&conn=fresh`;
  expect((await fetch(url)).status).toBe(200);
  clock += 5_000;
  const limited = await fetch(url);
  expect(limited.status).toBe(429);
  expect(limited.headers.get('retry-after')).toBe('15');
  expect(await limited.text()).toMatch(/at most once per 20 s \(onDemandInterval\); retry in 15 s/);
  clock += 15_000;
  expect((await fetch(url)).status).toBe(200);
});

// Issue 24 item 8: health and serverinfo runs are engine work too (SGLang's /health can generate a token), and
// /probe is a GET any web page can aim at the daemon.
it('every kind runs on demand at most once per onDemandInterval: 300 sequential health GETs reach the engine once', async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  let clock = 1_000_000;
  const { base } = await start(good.url, good.url, { now: () => clock });
  const healthCalls = () => good.requests.filter((q) => q.path === '/health').length;
  // The scheduler's own first round (every: 1h) is done before the on-demand loop is counted.
  await waitFor(() => healthCalls() >= PROBES.health.defaultConn.length, { what: 'scheduler health round' });
  const before = healthCalls();
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${base}/probe?target=pd&probe=health`);
    await r.text();
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    clock += 10; // 300 calls span 3 s of the injected clock: well inside the 1 h interval
  }
  // The allowance: one run per interval (its connection kinds: one request each).
  expect(healthCalls() - before).toBe(PROBES.health.defaultConn.length);
  expect(statuses.get(200)).toBe(1);
  expect(statuses.get(429)).toBe(299);
  const limited = await fetch(`${base}/probe?target=pd&probe=health`);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500);
  expect(await limited.text()).toMatch(/at most once per 3600 s \(onDemandInterval\)/);
  // Past the interval it runs again.
  clock += 3_600_000;
  expect((await fetch(`${base}/probe?target=pd&probe=health`)).status).toBe(200);
  expect(healthCalls() - before).toBe(2 * PROBES.health.defaultConn.length);
});

it('/probe refuses a cross-site or foreign-origin GET before it reaches the engine', async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  let clock = 0;
  const { base } = await start(good.url, good.url, { now: () => (clock += 3_600_000) });
  const healthCalls = () => good.requests.filter((q) => q.path === '/health').length;
  await waitFor(() => healthCalls() >= PROBES.health.defaultConn.length, { what: 'scheduler health round' });
  const before = healthCalls();
  const url = `${base}/probe?target=pd&probe=health`;
  // What an <img src> or a fetch() from another site sends.
  for (const headers of <Array<Record<string, string>>>[
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
    { origin: 'http://evil.example' },
    { origin: 'null' },
  ]) {
    const r = await fetch(url, { headers });
    expect(r.status, JSON.stringify(headers)).toBe(403);
    expect(await r.text()).toMatch(/refused/);
  }
  // HEAD runs the same handler (fastify adds it for every GET): refused alike.
  expect((await fetch(url, { method: 'HEAD', headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(
    403,
  );
  expect(healthCalls()).toBe(before);
  // The daemon's own pages (same-origin), the address bar (none) and plain clients run it.
  expect((await fetch(url, { headers: { 'sec-fetch-site': 'same-origin', origin: base } })).status).toBe(200);
  expect((await fetch(url, { headers: { 'sec-fetch-site': 'none' } })).status).toBe(200);
  expect((await fetch(url)).status).toBe(200);
  expect(healthCalls()).toBe(before + 3 * PROBES.health.defaultConn.length);
});

it("the default on-demand interval is the probe's every", async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  const { base } = await start(good.url, good.url);
  const url = `${base}/probe?target=pd&probe=chat&endpoint=proxy&conn=fresh`;
  expect((await fetch(url)).status).toBe(200);
  const limited = await fetch(url);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(25);
});

it('web.onDemandCompletions restricts on-demand completion runs (authenticated without users, off)', async () => {
  const good = await startServer(healthyHandler);
  servers.push(good);
  for (const policy of ['authenticated', 'off']) {
    const { base } = await start(good.url, good.url, { web: `web: { onDemandCompletions: ${policy} }` });
    const r = await fetch(`${base}/probe?target=pd&probe=chat&endpoint=proxy&conn=fresh`);
    expect(r.status, policy).toBe(403);
    expect(await r.text()).toMatch(new RegExp(`web.onDemandCompletions: ${policy}`));
    expect((await fetch(`${base}/probe?target=pd&probe=health`)).status, policy).toBe(200);
    await daemon?.stop();
    daemon = undefined;
  }
  expect(
    good.requests.filter((q) => q.path === '/v1/chat/completions' && q.body.includes('Say OK')),
  ).toHaveLength(
    // Only the schedulers' first rounds (two daemons, two conns, two hops): no on-demand run reached the engine.
    8,
  );
});
