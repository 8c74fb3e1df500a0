// A bearer token from ${SECRET} goes to a local server that echoes request headers back in bodies, errors and
// status lines; then every output of the daemon is searched for the token's value.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/server/plugins.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger, tempDir } from './helpers.js';

const SECRET = 'tok-9f3a7c51e2d84b6a';
const dir = tempDir('ww-secrets-');
let echo: Server;
let echoUrl = '';
const seenAuth: string[] = [];

beforeAll(async () => {
  echo = createServer((req, res) => {
    seenAuth.push(String(req.headers.authorization));
    const dump = JSON.stringify(req.headers);
    req.resume();
    if (req.url?.startsWith('/health')) {
      res.writeHead(503, { 'content-type': 'text/plain', 'x-echo': String(req.headers.authorization) });
      res.end(`unhealthy; you sent ${dump}`);
    } else if (req.url?.includes('/chat/completions')) {
      // A stream whose error event quotes the token, then a broken frame.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"error":{"message":"invalid key ${String(req.headers.authorization)}"}}\n\n`);
      res.end(`data: {not json ${dump}\n\n`);
    } else {
      res.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': `Bearer realm="${dump}"`,
      });
      res.end(
        JSON.stringify({ error: `bad token ${String(req.headers.authorization)}`, headers: req.headers }),
      );
    }
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => echo.close(() => r()));
});

describe('secrets', () => {
  it('never appear in /api/status, /probe debug output, other endpoints, logs or error messages', async () => {
    const file = join(dir, 'cfg.yaml');
    const text = (extra = '') => `web: { listenAddress: "127.0.0.1:0", enableLifecycle: true }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints:
      - { name: api, url: "${echoUrl}", bearerToken: "\${SECRET}", headers: { X-Api-Key: "\${SECRET}" } }
    probes:
      - { name: chat, kind: chat, every: 1s, jitter: 0, timeout: 5s, conn: [fresh] }
      - { name: health, kind: health, every: 1s, jitter: 0, timeout: 5s, path: /health }
      - { name: info, kind: serverinfo, every: 1s, jitter: 0, timeout: 5s, path: /get_server_info }
${extra}`;
    writeFileSync(file, text());
    const { logger, lines } = capturingLogger('trace');
    const d = new Daemon({ configPath: file, logger, env: { SECRET }, plugins: routePlugins });
    await d.start();
    const base = `http://${d.address()}`;
    const outputs: Record<string, string> = {};
    const get = async (path: string, method: 'GET' | 'POST' = 'GET') => {
      const res = await request(`${base}${path}`, { method });
      const body = await res.body.text();
      outputs[`${method} ${path}`] = `${res.statusCode} ${JSON.stringify(res.headers)}\n${body}`;
      return body;
    };
    try {
      // The token really went out (the server saw it), and the probes have failed at least once each.
      await waitFor(() => seenAuth.some((a) => a.includes(SECRET)), {
        what: 'the echo server to see the token',
      });
      await waitFor(
        async () => {
          const s = JSON.parse(await get('/api/status')) as { targets: Array<{ probes: unknown[] }> };
          return s.targets[0]!.probes.length >= 3;
        },
        { what: 'a result for every probe in /api/status', timeoutMs: 20_000 },
      );
      for (const probe of ['chat', 'health', 'info']) {
        const body = await get(`/probe?target=t&probe=${probe}&debug=true`);
        expect(body).toContain('Timeline for probe');
        await get(`/probe?target=t&probe=${probe}`);
      }
      await get('/probe?target=t&probe=nope&debug=true');
      await get('/');
      await get('/metrics');
      await get('/api/probes');
      await get('/api/events');
      // An invalid reload that puts the secret where it does not belong is reported without it.
      writeFileSync(
        file,
        text('rules: [{ name: r, severity: critical, match: "${SECRET}(" }]\n').replace(
          'every: 1s, jitter: 0, timeout: 5s, conn',
          'every: "${SECRET}", conn',
        ),
      );
      const reloadBody = await get('/-/reload', 'POST');
      expect(reloadBody).toContain('Reload failed');
      expect(reloadBody).toContain('targets[0].probes[0].every');
    } finally {
      await d.stop();
    }
    const everything = { ...outputs, logs: lines.join('') };
    for (const [where, text] of Object.entries(everything)) {
      expect(text, `${where} leaks the secret`).not.toContain(SECRET);
    }
    // The search is not vacuous: the outputs quote what the server echoed, with the secret masked.
    expect(outputs['GET /api/status'] + everything.logs).toContain('<secret>');
  });
});
