import { mkdtempSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import { waitFor } from '../helpers/wait.js';

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
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const daemon = new Daemon({ configPath: file, logger: createLogger({ destination: sink }) });
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
