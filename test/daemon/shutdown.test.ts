// Issue 16 item 5: SIGHUP then SIGTERM with a probe in flight, 50 keep-alive engine scrapers and a remediation
// running. Before: the draining runtime was stopped twice, the second EngineScraper.stop closed a closed undici
// Agent (ClientDestroyedError, unhandled), and the remediation held shutdown until the deadline: exit 1 both ways.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { alive } from '../../src/outputs/remediate/history.js';
import { startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-shutdown-'));
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

/** An engine: /metrics answers over keep-alive; a chat completion gets its headers and then nothing. */
async function engine() {
  const held: ServerResponse[] = [];
  let chats = 0;
  let scrapes = 0;
  const server: Server = createServer((req, res) => {
    if (req.url === '/metrics') {
      scrapes++;
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end('sglang:num_running_reqs 0\n');
      return;
    }
    if (req.url === '/v1/chat/completions') {
      chats++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hold\n\n');
      held.push(res);
      return;
    }
    res.writeHead(200).end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.push(() => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, chats: () => chats, scrapes: () => scrapes };
}

it('SIGHUP then SIGTERM with a probe in flight, 50 keep-alive scrapers and a remediation running: exits 0, the remediation cut and recorded', async () => {
  const e = await engine();
  const pidFile = join(dir, 'remediation.pid');
  // Ignores TERM: the shutdown must follow with KILL to the group, within its deadline.
  const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)`;
  const engines = Array.from(
    { length: 50 },
    (_, i) => `      - { service: e${i}, metrics: "${e.url}/metrics", every: 1s, timeout: 3s }`,
  ).join('\n');
  const file = join(dir, 'wedgewatch.yaml');
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: busy
    endpoints: [{ name: router, url: "${e.url}" }]
    # 5 s: a stop drains the held chat probe until its timeout (issue 24 finding 3), and no longer.
    probes: [{ name: chat, kind: chat, every: 1s, timeout: 5s, conn: [fresh] }]
    engines:
${engines}
  - name: gone
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    probes: [{ name: health, kind: health, every: 1s, timeout: 1s, path: /health }]
    remediate:
      command: [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(script)}]
      dryRun: false
      onDown: true
      after: 0s
      timeout: 5m
`,
  );
  const { child, out, exited } = startCli(['run', '--config', file]);
  cleanup.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await waitFor(() => out.stderr.includes('wedgewatch listening'), {
    timeoutMs: 20_000,
    what: 'the daemon to listen',
  });
  const pid = await waitFor(() => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')), {
    timeoutMs: 20_000,
    what: () => `the remediation to start\n${out.stderr.slice(-2000)}`,
  });
  cleanup.push(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  await waitFor(() => e.chats() > 0 && e.scrapes() >= 50, {
    what: 'a chat probe in flight and every scraper',
  });
  child.kill('SIGHUP');
  await waitFor(() => out.stderr.includes('configuration reloaded'), { what: 'the reload to finish' });
  child.kill('SIGTERM');
  const code = await exited;
  expect(out.stderr).not.toMatch(/ClientDestroyedError|shutdown deadline passed/);
  expect(code).toBe(0);
  // The command's group is gone, and the run is recorded: lock released, result interrupted, in the journal too.
  await waitFor(() => !alive(pid), { what: 'the remediation to be gone' });
  const history = JSON.parse(readFileSync(join(dir, 'state', 'remediation.json'), 'utf8')) as {
    gone: { running?: unknown; last?: { result: string } };
  };
  expect(history.gone.running).toBeUndefined();
  expect(history.gone.last?.result).toBe('interrupted');
  expect(readFileSync(join(dir, 'state', 'events.jsonl'), 'utf8')).toMatch(/remediation [^"]* interrupted/);
});
