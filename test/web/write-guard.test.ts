// Write endpoints refuse what any web page can send (issue 16 item 7), and the server caps its connections
// (item 13).
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { crossSiteRequest } from '../../src/outputs/server/app.js';
import { foreignHost } from '../../src/outputs/server/origin-policy.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { runCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from './helpers.js';

const dir = tempDir('ww-write-guard-');
let daemon: Daemon | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await daemon?.stop();
  daemon = undefined;
});

async function start(extraWeb = '', opts: { externalUrl?: string } = {}) {
  const file = join(dir, 'cfg.yaml');
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0", enableLifecycle: true${extraWeb} }
stateDir: ${dir}/state
targets:
  - name: pd
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    remediate: { command: ["true"], dryRun: true }
`,
  );
  daemon = new Daemon({
    configPath: file,
    logger: capturingLogger().logger,
    plugins: routePlugins,
    ...(opts.externalUrl !== undefined ? { externalUrl: opts.externalUrl } : {}),
  });
  await daemon.start();
  return daemon.address();
}

it('write endpoints refuse a cross-origin Origin and a body that is not JSON', async () => {
  const addr = await start();
  const post = async (path: string, headers: Record<string, string>, body?: string) => {
    const res = await request(`http://${addr}${path}`, { method: 'POST', headers, body });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const resume = '/api/targets/pd/remediation/resume';
  const pause = '/api/targets/pd/remediation/pause';
  // What a page on another site can send without a preflight.
  const evil = await post(resume, { origin: 'http://evil.example', 'content-type': 'text/plain' }, '{}');
  expect(evil.status).toBe(403);
  expect(evil.text).toMatch(/cross-origin write refused/);
  expect((await post(pause, { origin: 'null' })).status).toBe(403);
  expect((await post(pause, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  const form = await post(pause, { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1');
  expect(form.status).toBe(415);
  expect((await post(pause, { 'content-type': 'text/plain' }, '{}')).status).toBe(415);
  expect(daemon!.runtime!.watchdog!.isPaused('pd')).toBe(false);
  // Same origin with JSON, and a bodiless POST (curl -X POST), are fine.
  const ok = await post(pause, { origin: `http://${addr}`, 'content-type': 'application/json' }, '{}');
  expect(ok.status).toBe(200);
  expect(daemon!.runtime!.watchdog!.isPaused('pd')).toBe(true);
  expect((await post(resume, {})).status).toBe(200);
  expect((await post('/-/reload', {})).status).toBe(200);
});

// Issue 24 item 9: under DNS rebinding the page's own name points at 127.0.0.1, so Host and Origin agree with each
// other; only the server's own idea of its origins (listen address, external URL) tells the page apart.
it('a DNS-rebinding page (Host and Origin evil.example:PORT) cannot pause or reload; the real origins can', async () => {
  const addr = await start(', externalURL: "https://ww.example.test/wedgewatch"');
  const port = addr.slice(addr.lastIndexOf(':') + 1);
  const post = async (path: string, headers: Record<string, string>) => {
    const res = await request(`http://${addr}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{"for":"24h"}',
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const pause = '/api/targets/pd/remediation/pause';
  const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
  for (const path of [pause, '/-/reload']) {
    const r = await post(path, rebound);
    expect(r.status, path).toBe(403);
    expect(r.text).toMatch(/evil\.example/);
  }
  // Reads on a loopback connection are refused too: the rebound name is not one of this server's.
  const read = await request(`http://${addr}/api/status`, { headers: { host: `evil.example:${port}` } });
  expect(read.statusCode).toBe(403);
  await read.body.text();
  expect(daemon!.runtime!.watchdog!.isPaused('pd')).toBe(false);
  // The listen address (and localhost, on a loopback listener) and the configured external URL are this server.
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
    const host = new URL(origin).host;
    expect((await post('/-/reload', { host, origin })).status, origin).toBe(200);
  }
  expect((await post(pause, { host: 'ww.example.test', origin: 'https://ww.example.test' })).status).toBe(
    200,
  );
  expect(daemon!.runtime!.watchdog!.isPaused('pd')).toBe(true);
  // Another port of the same loopback address is another origin.
  expect((await post('/-/reload', { origin: `http://127.0.0.1:${Number(port) + 1}` })).status).toBe(403);
});

it('--web.external-url wins over the config, and a foreign Origin is refused on any interface', async () => {
  const addr = await start(', externalURL: "http://from-config.test"', {
    externalUrl: 'http://from-flag.test:8080',
  });
  const post = async (origin: string, host: string) => {
    const res = await request(`http://${addr}/-/reload`, { method: 'POST', headers: { origin, host } });
    await res.body.text();
    return res.statusCode;
  };
  expect(await post('http://from-flag.test:8080', 'from-flag.test:8080')).toBe(200);
  expect(await post('http://from-config.test', 'from-config.test')).toBe(403);
  // The Origin check on its own (a non-loopback interface, where Host is not checked): a rebound name that is
  // neither the interface's address nor the external URL is refused, the interface's address is not.
  const lan = { localAddress: '10.0.0.5', localPort: 9787, encrypted: false };
  expect(
    crossSiteRequest({ host: 'evil.example:9787', origin: 'http://evil.example:9787' }, lan, 'write')?.[0],
  ).toBe(403);
  expect(
    crossSiteRequest({ host: '10.0.0.5:9787', origin: 'http://10.0.0.5:9787' }, lan, 'write'),
  ).toBeUndefined();
  expect(
    crossSiteRequest(
      { origin: 'http://10.0.0.5:9787' },
      { ...lan, localAddress: '::ffff:10.0.0.5' },
      'write',
    ),
  ).toBeUndefined();
  expect(
    crossSiteRequest(
      { origin: 'https://ww.example.test' },
      { ...lan, externalUrl: 'https://ww.example.test/x' },
      'read',
    ),
  ).toBeUndefined();
});

it('Host on a loopback connection: IP literals, localhost and the external URL pass; other names do not', () => {
  const lo = { localAddress: '127.0.0.1', localPort: 9787, encrypted: false };
  for (const host of ['127.0.0.1:9787', '127.0.0.1', '[::1]:9787', 'localhost:9787', 'LOCALHOST'])
    expect(foreignHost(host, lo), host).toBeUndefined();
  expect(foreignHost('[::1]:9787', { ...lo, localAddress: '::ffff:127.0.0.1' })).toBeUndefined();
  for (const host of [
    'evil.example:9787',
    'evil.example',
    '127.0.0.1.evil.example',
    'localhost.evil.example',
  ])
    expect(foreignHost(host, lo), host).toMatch(/not a name of this server/);
  expect(foreignHost('ww.example.test', { ...lo, externalUrl: 'https://ww.example.test/x' })).toBeUndefined();
  // Other interfaces are reached by names the server cannot know: not checked there.
  expect(foreignHost('evil.example:9787', { ...lo, localAddress: '10.0.0.5' })).toBeUndefined();
});

// Beyond the cap the connections without a request in progress give way (src/outputs/server/connection-guard.ts): here
// none has sent anything, so 12 of the 20 are closed either way.
it('keeps open connections to web.maxConnections and serves again once they close', async () => {
  const addr = await start(', maxConnections: 8');
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  let closedByServer = 0;
  for (let i = 0; i < 20; i++) {
    const s = connect(port, host);
    s.on('error', () => {});
    s.on('close', () => closedByServer++);
    sockets.push(s);
  }
  await waitFor(() => closedByServer >= 12, { what: 'the excess connections to be refused' });
  expect(closedByServer).toBe(12);
  for (const s of sockets.splice(0)) s.destroy();
  await waitFor(
    async () => {
      try {
        return (await request(`http://${addr}/-/healthy`)).statusCode === 200;
      } catch {
        return false;
      }
    },
    { what: 'the server to accept again' },
  );
});

it('an operator pause (who, when, until) survives a restart', async () => {
  const addr = await start();
  const res = await request(`http://${addr}/api/targets/pd/remediation/pause`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ for: '1h' }),
  });
  expect(res.statusCode).toBe(200);
  await res.body.text();
  await daemon!.stop();
  daemon = undefined;
  const again = await start();
  expect(daemon!.runtime!.watchdog!.isPaused('pd')).toBe(true);
  const status = (await (await request(`http://${again}/api/status`)).body.json()) as {
    targets: Array<{ remediation: { paused: boolean; pause?: { by: string; at: number; until?: number } } }>;
  };
  const pause = status.targets[0]!.remediation.pause!;
  expect(pause.by).toBe('127.0.0.1');
  expect(pause.until! - pause.at).toBe(3_600_000);
  const bad = await request(`http://${again}/api/targets/pd/remediation/pause`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ for: 'soon' }),
  });
  expect(bad.statusCode).toBe(400);
  await bad.body.text();
});

it('run refuses a --web.external-url that is not an absolute http(s) URL', async () => {
  const r = await runCli(['run', '--config', join(dir, 'unused.yaml'), '--web.external-url', 'ftp://x']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/--web\.external-url.*expected an absolute http:\/\/ or https:\/\/ URL/);
});
