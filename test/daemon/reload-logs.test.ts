import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { quietLogger } from '../helpers/logger.js';

const ABORT = (n: number) =>
  `[2026-02-19 16:32:51 TP0] Prefill bootstrap failed for request rank=0 req.rid='r${n}' req.bootstrap_room=${n} with exception KVTransferError(bootstrap_room=${n}): Aborted by AbortReq.\n`;

let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

it('a reload hands log following over without reading any line twice or losing one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ww-reload-logs-'));
  const log = join(dir, 'prefill.log');
  writeFileSync(log, '');
  const file = join(dir, 'ww.yaml');
  const config = (model: string) => `
web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: pd
    model: ${model}
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    logs: [{ service: prefill, path: ${log}, from: start }]
`;
  writeFileSync(file, config('a'));
  daemon = new Daemon({ configPath: file, logger: quietLogger() });
  await daemon.start();
  const raised = async () =>
    (await daemon!.metrics.logEvents.get()).values
      .filter((v) => v.labels.rule === 'sglang_prefill_bootstrap_aborted')
      .reduce((n, v) => n + v.value, 0);
  // A burst of one class past its first events is folded (counted, not raised): every line is an event or a fold.
  const folded = async () =>
    (await daemon!.metrics.logEventsFolded.get()).values.reduce((n, v) => n + v.value, 0);
  const events = async () => (await raised()) + (await folded());
  const lines = async () => (await daemon!.metrics.logLines.get()).values.reduce((n, v) => n + v.value, 0);

  let written = 0;
  const write = (n: number) => {
    for (let i = 0; i < n; i++) appendFileSync(log, ABORT(++written));
  };
  write(50);
  await waitFor(async () => (await lines()) === 50, { what: 'the first 50 lines' });
  for (let round = 0; round < 3; round++) {
    writeFileSync(file, config(`m${round}`));
    const reloading = daemon.reload();
    write(20); // written while the old followers stop and the new ones start
    expect((await reloading).ok).toBe(true);
    write(10);
  }
  await waitFor(async () => (await lines()) === written, { what: `all ${written} lines, once` });
  expect(await events()).toBe(written);
  // Nothing trails in late: the count stays exact.
  write(1);
  await waitFor(async () => (await lines()) === written, { what: 'the last line' });
  expect(await events()).toBe(written);
});
