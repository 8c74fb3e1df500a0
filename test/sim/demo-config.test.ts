// The demo's embedded config: valid for the schema, watching the simulator's hops, logs and engines, with a
// remediation command that really restarts prefill through the control API. Also: stop() releases every port.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { demoConfig } from '../../src/sim/demo-config.js';
import { startSim } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream } from './client.js';

it('passes loadConfigFile and its remediation command restarts prefill, clearing a dead bootstrap thread', async () => {
  const sim = await startSim({ proxy: true, faults: ['nixl_abort_unhandled'] });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-demo-test-'));
    const path = join(dir, 'demo.yaml');
    writeFileSync(
      path,
      demoConfig(sim, {
        stateDir: join(dir, 'state'),
        listenAddress: '127.0.0.1:0',
        nodePath: process.execPath,
      }),
    );
    const { config } = loadConfigFile(path);
    const t = config.targets[0]!;
    expect(t.endpoints.map((e) => [e.name, e.url])).toEqual([
      ['proxy', sim.urls.proxy],
      ['router', sim.urls.router],
    ]);
    expect(t.logs.map((l) => l.path)).toEqual([
      sim.logFiles.prefill,
      sim.logFiles.decode,
      sim.logFiles.router,
    ]);
    // The demo lists [sglang, nixl, python]; the shared-code packs come along (src/config/log-packs.ts IMPLIED_PACKS).
    expect(t.logs.every((l) => l.packs.join() === 'sglang,sglang_disagg,nixl,torch,python')).toBe(true);
    expect(t.remediate).toMatchObject({ dryRun: false, after: 5000, cooldown: 30_000 });

    const s = openStream(sim.urls.router, chatBody({ max_tokens: 500 }));
    await s.firstData;
    s.cut();
    await waitFor(() => !sim.state().bootstrapThreadAlive, { what: 'bootstrap thread death' });
    const [cmd, ...args] = t.remediate!.command;
    await promisify(execFile)(cmd!, args, { timeout: 10_000 });
    expect(sim.state().bootstrapThreadAlive).toBe(true);
    expect(sim.events().some((e) => e.kind === 'restart' && e.service === 'prefill')).toBe(true);
  } finally {
    await sim.stop();
  }
  for (const url of [sim.urls.router, sim.urls.prefill, sim.urls.decode, sim.urls.proxy!, sim.urls.control]) {
    await expect(get(`${url}/health`, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  }
});
