// Issue 16 item 9: `watch: [/dev/zero]` never listened and ignored SIGTERM; `watch: [<a FIFO>]` + SIGHUP hung the
// reload forever, swallowed later SIGHUPs and SIGTERM never exited. Now both are refused (check, start, reload).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-reload-watch-'));
const fifo = join(dir, 'serve.fifo');
execFileSync('mkfifo', [fifo]);
const stops: (() => void)[] = [];
afterEach(() => {
  for (const f of stops.splice(0)) f();
});

const config = (watch: string) => `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    watch: [${watch}]
`;

it('a FIFO in watch: the reload is refused, later SIGHUPs still reload, SIGTERM exits 0', async () => {
  const plain = join(dir, 'serve.sh');
  writeFileSync(plain, '#!/bin/sh\n');
  const file = join(dir, 'fifo.yaml');
  writeFileSync(file, config(plain));
  const { child, out, exited } = startCli(['run', '--config', file]);
  stops.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await waitFor(() => out.stderr.includes('wedgewatch listening'), { timeoutMs: 20_000, what: 'listening' });
  writeFileSync(file, config(fifo));
  child.kill('SIGHUP');
  await waitFor(() => out.stderr.includes('reload failed'), { what: 'the FIFO reload to be refused' });
  expect(out.stderr).toMatch(/serve\.fifo is not a regular file/);
  writeFileSync(file, config(plain));
  child.kill('SIGHUP');
  await waitFor(() => out.stderr.includes('configuration reloaded'), { what: 'the next SIGHUP to reload' });
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});

it('watch: [/dev/zero] stops `run` at start with the problem named, instead of spinning', async () => {
  const file = join(dir, 'zero.yaml');
  writeFileSync(file, config('/dev/zero'));
  const res = await runCli(['run', '--config', file]);
  expect(res.code).toBe(2);
  expect(res.stderr).toMatch(/targets\[0\]\.watch\[0\]: \/dev\/zero is not a regular file/);
});
