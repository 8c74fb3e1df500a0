// End to end on the simulator: the NIXL wedge leaves exactly one incident bundle, captured before the
// remediation restarts prefill, holding the traceback, the capture command's thread dump, and no secret.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import type { IncidentManifest } from '../../src/outputs/incidents/manifest.js';
import { createMetrics } from '../../src/metrics.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { DUMP_SCRIPT } from '../../src/sim/demo-config.js';
import { simDetectionConfig } from '../../src/sim/detection-config.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { tripBootstrapThreadDeath } from '../helpers/sim.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'sk-incident-7d1f0c2a9b';
const RESTART =
  "fetch(process.argv[1],{method:'POST'}).then(r=>{process.exitCode=r.ok?0:1},()=>{process.exitCode=1})";

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe('incident capture on the simulator', () => {
  let sim: Sim | undefined;
  let runtime: Runtime | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await runtime?.stop();
    await sim?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    runtime = sim = dir = undefined;
  });

  it('the NIXL wedge: one bundle, before the restart, with the traceback, the thread dump and no secret', async () => {
    sim = await startSim({ waitingTimeoutMs: 15_000, bootstrapTimeoutMs: 15_000 });
    dir = mkdtempSync(join(tmpdir(), 'ww-incident-'));
    const stateDir = join(dir, 'state');
    const doc = YAML.parse(
      simDetectionConfig(sim, stateDir, {
        // Generous timeouts and no TTFT objective: a loaded CI machine must not look degraded.
        probes: [
          {
            name: 'chat',
            kind: 'chat',
            every: '2s',
            timeout: '5s',
            jitter: 0,
            maxTokens: 2,
            endpoints: ['router'],
          },
          { name: 'health', kind: 'health', every: '2s', timeout: '5s', jitter: 0, endpoints: ['router'] },
        ],
        // The test settings' gauge stall clock (stallAfter 3 s) races the traceback's confirmation (confirmAfter 5 s):
        // prefill's bootstrapping requests with no progress wedged it as engine_stalled 5.0 s after the line, 1 in 7
        // runs, and the bundle (captured at once) named that. The example's 60 s lets the signature name the wedge,
        // which is what this bundle is about.
        detect: { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '60s', confirmInterval: '2s' },
        remediate: {
          command: [process.execPath, '-e', RESTART, `${sim.urls.control}/services/prefill/restart`],
          dryRun: false,
          after: '0s',
          cooldown: '10m',
          timeout: '10s',
        },
      }),
    ) as Record<string, unknown> & { targets: Array<{ endpoints: Array<Record<string, unknown>> }> };
    // The secret reaches the config as a header value from the environment, as a real token would.
    doc.targets[0]!.endpoints[0]!.headers = { Authorization: 'Bearer ${WW_TOKEN}' };
    doc.incidents = {
      captureTimeout: '15s',
      commands: [
        {
          name: 'prefill-threads',
          argv: [process.execPath, '-e', DUMP_SCRIPT, '${PID}', `${sim.urls.control}/services/prefill/dump`],
          pidFile: sim.pidFiles.prefill,
          timeout: '5s',
        },
        // A command whose output quotes the secret: the bundle must not.
        { name: 'echo-token', argv: ['echo', 'token=${WW_TOKEN}'], timeout: '5s' },
      ],
    };
    const loaded = parseConfigText(YAML.stringify(doc), join(dir, 'wedgewatch.yaml'), { WW_TOKEN: SECRET });
    const metrics = createMetrics({ defaults: false });
    runtime = await createRuntime(loaded, { metrics, logger: pino({ level: 'silent' }) });
    const journal = runtime.watchdog!.journal;
    const wd = runtime.watchdog!.targets.get('sim')!;
    await waitFor(() => wd.state.state === 'ok', { timeoutMs: 30_000, what: 'ok' });
    // An engine that echoes a request header into its log: the window must not carry it out.
    appendFileSync(
      sim.logFiles.prefill,
      `[2026-01-01 00:00:00] DEBUG headers: Authorization: Bearer ${SECRET}\n`,
    );

    sim.enableFault('nixl_abort_unhandled');
    await tripBootstrapThreadDeath(sim);
    sim.disableFault('nixl_abort_unhandled');

    const remediation = await waitFor(() => journal.query({ target: 'sim', type: 'remediation' })[0], {
      timeoutMs: 40_000,
      what: 'the remediation',
    });
    expect(remediation.data?.result).toBe('success');
    const incident = journal.query({ target: 'sim', type: 'incident' });
    expect(incident).toHaveLength(1);
    expect(incident[0]!.seq).toBeLessThan(remediation.seq);
    expect(incident[0]!.data?.result).toBe('captured');
    await waitFor(() => wd.state.state === 'ok', { timeoutMs: 60_000, what: 'ok after the restart' });

    const root = join(stateDir, 'incidents');
    const bundles = readdirSync(root);
    expect(bundles).toHaveLength(1);
    const bundle = join(root, bundles[0]!);
    const manifest = JSON.parse(readFileSync(join(bundle, 'manifest.json'), 'utf8')) as IncidentManifest;
    expect(manifest.state).toBe('wedged');
    expect(manifest.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(manifest.times.captureEnd).toBeLessThanOrEqual(remediation.time);
    expect(manifest.times.firstSignal).toBeLessThanOrEqual(manifest.times.confirmation);
    expect(manifest.result).toBe('captured');

    const prefillLog = manifest.logs.find((l) => l.service === 'prefill')!;
    const window = readFileSync(join(bundle, prefillLog.path), 'utf8');
    expect(window).toContain('Exception in thread Thread-1 (bootstrap_thread):');
    const trigger = prefillLog.marks.find((m) => m.trigger);
    expect(trigger).toBeDefined();
    expect(window.split('\n')[trigger!.line - 1]).toContain('(bootstrap_thread)');

    const dump = manifest.commands.find((c) => c.name === 'prefill-threads')!;
    expect(dump.result).toBe('success');
    expect(dump.pid).toBe(process.pid);
    const dumpText = readFileSync(join(bundle, dump.path!), 'utf8');
    expect(dumpText).toContain('"MainThread"');
    expect(dumpText).toContain('# bootstrap thread: not running');
    expect(readFileSync(join(bundle, 'engines/decode.metrics.txt'), 'utf8')).toContain('sglang:');
    expect(readFileSync(join(bundle, 'status.json'), 'utf8')).toContain('"wedged"');

    const files = filesUnder(bundle);
    expect(files.length).toBeGreaterThan(8);
    const echoed = readFileSync(join(bundle, 'commands/echo-token.txt'), 'utf8');
    expect(echoed).toContain('token=<secret>');
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(SECRET);
    expect(await metrics.registry.getSingleMetricAsString('wedgewatch_incidents_total')).toContain(
      'wedgewatch_incidents_total{target="sim",result="captured"} 1',
    );
  }, 150_000);
});
