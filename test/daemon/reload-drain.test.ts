import { mkdtempSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { quietLogger } from '../helpers/logger.js';

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

it('a reload lets an in-flight chat probe finish instead of cutting it (a cut is an abort on the engine)', async () => {
  const held: { res: http.ServerResponse; cut: boolean; release: () => void }[] = [];
  const server = http.createServer((req, res) => {
    if (req.url !== '/v1/chat/completions') return res.end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }));
    const finish = () => {
      res.write(chunk({ content: 'OK' }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    };
    const entry = { res, cut: false, release: finish };
    res.on('close', () => {
      if (!res.writableFinished) entry.cut = true;
    });
    held.push(entry); // every request waits for the test
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const dir = mkdtempSync(join(tmpdir(), 'ww-drain-'));
  const file = join(dir, 'ww.yaml');
  const config = (model: string) => `
web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: pd
    model: ${model}
    endpoints: [{ name: router, url: "${url}" }]
    probes: [{ name: chat, kind: chat, every: 1h, jitter: 0, timeout: 30s, conn: [fresh] }]
`;
  writeFileSync(file, config('a'));
  const daemon = new Daemon({ configPath: file, logger: quietLogger() });
  await daemon.start();
  cleanup.push(() => daemon.stop());

  await waitFor(() => held.length === 1, { what: 'the first chat probe to be in flight' });
  writeFileSync(file, config('b'));
  expect((await daemon.reload()).ok).toBe(true);
  // The new runtime's first round arrives; the old runtime's probe is still open, not cut.
  await waitFor(() => held.length === 2, { what: "the new runtime's first probe" });
  expect(held[0]!.cut).toBe(false);
  held[0]!.release();
  held[1]!.release();
  await waitFor(() => held[0]!.res.writableFinished, { what: 'the old probe to finish normally' });
  expect(held[0]!.cut).toBe(false);

  // A shutdown does cut what is in flight (nothing waits for a 30 s timeout on the way out).
  writeFileSync(file, config('c'));
  expect((await daemon.reload()).ok).toBe(true);
  await waitFor(() => held.length === 3, { what: 'the third runtime probe' });
  await daemon.stop();
  await waitFor(() => held[2]!.cut, { what: 'the in-flight probe to be cut at shutdown' });
});

it("a draining stop (SIGTERM) lets probes in flight finish, a reload-replaced runtime's too; a stop without drain then cuts the rest", async () => {
  const held: { res: http.ServerResponse; cut: boolean; release: () => void }[] = [];
  const server = http.createServer((req, res) => {
    if (req.url !== '/v1/chat/completions') return res.end();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }));
    const entry = {
      res,
      cut: false,
      release: () => {
        res.write(chunk({ content: 'OK' }));
        res.write(chunk({}, 'stop'));
        res.end('data: [DONE]\n\n');
      },
    };
    res.on('close', () => {
      if (!res.writableFinished) entry.cut = true;
    });
    held.push(entry);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'ww-drain-stop-'));
  const file = join(dir, 'ww.yaml');
  const config = (model: string) => `
web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: pd
    model: ${model}
    endpoints: [{ name: router, url: "${url}" }]
    probes: [{ name: chat, kind: chat, every: 1h, jitter: 0, timeout: 30s, conn: [fresh] }]
`;
  writeFileSync(file, config('a'));
  const daemon = new Daemon({ configPath: file, logger: quietLogger() });
  await daemon.start();
  cleanup.push(() => daemon.stop());
  await waitFor(() => held.length === 1, { what: 'the first probe' });
  writeFileSync(file, config('b'));
  expect((await daemon.reload()).ok).toBe(true);
  await waitFor(() => held.length === 2, { what: "the new runtime's probe" });

  let stopped = false;
  const stopping = daemon.stop({ drain: true }).then(() => (stopped = true));
  // Under way: the HTTP server is closed (after the runtimes were told to stop); both probes stay open meanwhile.
  await waitFor(() => daemon.address() === 'null', { what: 'the HTTP server to close' });
  expect(held.map((h) => h.cut)).toEqual([false, false]);
  expect(stopped).toBe(false);
  held[0]!.release();
  await waitFor(() => held[0]!.res.writableFinished, { what: 'the old runtime probe to finish' });
  expect(stopped).toBe(false);
  expect(held[1]!.cut).toBe(false);
  // The operator insists (a second SIGTERM): what is left is cut, and the stop ends.
  void daemon.stop();
  await waitFor(() => held[1]!.cut, { what: 'the remaining probe to be cut' });
  await stopping;
  expect(held[0]!.cut).toBe(false);
  expect(held.length).toBe(2);
});
