// A bearer token from ${SECRET} goes to a local server that echoes request headers back in bodies, errors and
// status lines; then every output of the daemon is searched for the token's value.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from './helpers.js';

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

describe('secrets in state, events and files', () => {
  it('a ${VAR} in a remediation argv, a token quoted by a log line and a watched env file never leave', async () => {
    const d2 = tempDir('ww-secrets-state-');
    const ARGV_SECRET = 'argv-7c1e9b2d4f6a';
    const QUOTED = 'xq81ZpLw0vTr6n2bYq';
    const ENV_OLD = 'hf_old4a1b2c3d4e5f';
    const ENV_NEW = 'hf_new9f8e7d6c5b4a';
    const log = join(d2, 'engine.log');
    const envFile = join(d2, 'engine.env');
    writeFileSync(log, '');
    writeFileSync(envFile, `HF_TOKEN=${ENV_OLD}\nPORT=30000\n`);
    const file = join(d2, 'cfg.yaml');
    writeFileSync(
      file,
      `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${d2}/state
targets:
  - name: t
    endpoints: [{ name: api, url: "${echoUrl}" }]
    logs: [{ service: engine, path: ${log}, from: start }]
    remediate: { command: [/bin/true, "--token", "\${ARGV}"], dryRun: true }
    watch: [${envFile}]
rules: [{ name: auth-failed, severity: critical, match: "auth failed" }]
`,
    );
    const { logger, lines } = capturingLogger('debug');
    const d = new Daemon({ configPath: file, logger, env: { ARGV: ARGV_SECRET }, plugins: routePlugins });
    await d.start();
    const base = `http://${d.address()}`;
    const get = async (path: string) => (await request(`${base}${path}`)).body.text();
    try {
      writeFileSync(log, `ERROR auth failed for header "Authorization: Bearer ${QUOTED}"\n`);
      writeFileSync(envFile, `HF_TOKEN=${ENV_NEW}\nPORT=30001\n`);
      const events = await waitFor(
        async () => {
          const text = await get('/api/events');
          return text.includes('file_change') && text.includes('auth-failed') ? text : undefined;
        },
        { what: 'the log event and the env file change in /api/events', timeoutMs: 30_000 },
      );
      await d.runtime?.watchdog?.journal.flush();
      const outputs: Record<string, string> = {
        '/api/events': events,
        '/api/status': await get('/api/status'),
        '/': await get('/'),
        'events.jsonl': readFileSync(join(d2, 'state', 'events.jsonl'), 'utf8'),
      };
      for (const [where, text] of Object.entries({ ...outputs, logs: lines.join('') })) {
        for (const secret of [ARGV_SECRET, QUOTED, ENV_OLD, ENV_NEW])
          expect(text, `${where} leaks ${secret}`).not.toContain(secret);
      }
      // The env file change says which keys changed, and the searches above were not vacuous.
      expect(events).toContain('~ HF_TOKEN (value changed)');
      expect(events).toContain('~ PORT (value changed)');
      expect(events).not.toContain('30001');
      expect(outputs['events.jsonl']).toContain('Bearer <secret>');
    } finally {
      await d.stop();
    }
  });
});
