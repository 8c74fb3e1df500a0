// The demo's embedded config: valid for the schema, watching the simulator's hops, logs and engines, with a
// remediation command that really restarts prefill through the control API. Also: stop() releases every port.
// With the second deployment and the model gateway (issue 43), both deployments form one pool drained through the
// gateway, and with both wedged the gateway keeps one: the pool rule holds in the demo too.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import {
  demoConfig,
  DEMO_PEER_TARGET,
  DEMO_POOL,
  DEMO_TARGET,
  type DemoTraffic,
} from '../../src/sim/demo-config.js';
import { startGateway } from '../../src/sim/gateway.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';
import { chatBody, get, openStream } from './client.js';

/** The demo's config for `sim` (and its traffic path), written to a fresh directory; returns the file. */
function writeDemoConfig(sim: Sim, traffic?: DemoTraffic): string {
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-demo-test-'));
  const path = join(dir, 'demo.yaml');
  writeFileSync(
    path,
    demoConfig(sim, {
      stateDir: join(dir, 'state'),
      listenAddress: '127.0.0.1:0',
      nodePath: process.execPath,
      ...(traffic !== undefined ? { traffic } : {}),
    }),
  );
  return path;
}

it('passes loadConfigFile and its remediation command restarts prefill, clearing a dead bootstrap thread', async () => {
  const sim = await startSim({ proxy: true, faults: ['nixl_abort_unhandled'] });
  try {
    const path = writeDemoConfig(sim);
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

it('with a second deployment behind the gateway: one pool, real drains, and with both wedged one stays in', async () => {
  // Short PD timeouts: a wedged deployment's probes fail within seconds instead of the demo's 15 s.
  const sims: Sim[] = [];
  let daemon: Daemon | undefined;
  const gateway = await (async () => {
    for (let i = 0; i < 2; i++)
      sims.push(await startSim({ waitingTimeoutMs: 2_000, bootstrapTimeoutMs: 2_000 }));
    return startGateway(sims.map((s) => s.urls.router));
  })();
  try {
    const [sim, peer] = sims as [Sim, Sim];
    const path = writeDemoConfig(sim, { peer, gateway: gateway.url });
    const { config } = loadConfigFile(path);
    expect(config.targets.map((t) => [t.name, t.drain?.worker, t.drain?.dryRun])).toEqual([
      [DEMO_TARGET, sim.urls.router, false],
      [DEMO_PEER_TARGET, peer.urls.router, false],
    ]);
    expect(config.pools).toEqual([
      { name: DEMO_POOL, members: [{ target: DEMO_TARGET }, { target: DEMO_PEER_TARGET }], minInRotation: 1 },
    ]);
    // Each deployment's thread dump is taken from its own prefill.
    expect(config.incidents.commands.map((c) => [c.targets, c.pidFile])).toEqual([
      [[DEMO_TARGET], sim.pidFiles.prefill],
      [[DEMO_PEER_TARGET], peer.pidFiles.prefill],
    ]);

    daemon = new Daemon({ configPath: path, logger: quietLogger(), plugins: routePlugins });
    await daemon.start();
    const d = daemon;
    const stateOf = (t: string) => d.runtime?.watchdog?.targets.get(t)?.state.state;
    await waitFor(() => stateOf(DEMO_TARGET) === 'ok' && stateOf(DEMO_PEER_TARGET) === 'ok', {
      timeoutMs: 30_000,
      what: 'both deployments ok',
    });
    expect(
      gateway.workers
        .list()
        .map((w) => w.url)
        .sort(),
    ).toEqual([sim.urls.router, peer.urls.router].sort());
    for (const s of sims) s.enableFault('decode_stall');
    await waitFor(() => stateOf(DEMO_TARGET) === 'wedged' && stateOf(DEMO_PEER_TARGET) === 'wedged', {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: () => `both deployments wedged (now ${stateOf(DEMO_TARGET)}, ${stateOf(DEMO_PEER_TARGET)})`,
    });
    // One drained, one held in: the gateway keeps a worker, and the page says which one and why.
    const held = await waitFor(
      () => {
        const workers = gateway.workers.list();
        const drained = [...d.runtime!.traffic!.drainers.values()].filter((x) => x.ledger.out);
        return workers.length === 1 && drained.length === 1 ? workers[0]!.url : undefined;
      },
      { timeoutMs: 20_000, what: 'one worker drained and one kept in the gateway' },
    );
    const heldTarget = held === sim.urls.router ? DEMO_TARGET : DEMO_PEER_TARGET;
    expect(d.runtime!.traffic!.view.get(heldTarget)).toMatchObject({ held: true, inRotation: true });
    const page = (await get(`http://${d.address()}/`)).text;
    expect(page).toContain(`data-backend="${heldTarget}" data-in-rotation="true" data-held="true"`);
    expect(page).toContain(`the last healthy backend of pool <code>${DEMO_POOL}</code> is never drained`);
    // Both back: the drained one is added again.
    for (const s of sims) s.disableFault('decode_stall');
    await waitFor(() => gateway.workers.list().length === 2, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'both workers back in the gateway',
    });
  } finally {
    await daemon?.stop();
    await gateway.stop();
    for (const s of sims) await s.stop();
  }
});
