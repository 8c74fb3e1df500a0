// The hand-off between capture and remediation, with a real watchdog fed probe results: a hanging capture
// command is cut and remediation runs within captureTimeout + 1 s; a full disk skips the capture (metric and
// event) and remediation still runs; retention keeps the newest bundles within count and bytes.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incidentsSchema, targetSchema } from '../../src/config/schema.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { TargetWatchdog } from '../../src/watchdog.js';
import { remediationFor } from '../../src/outputs/remediate/target.js';
import { nodeBundleFs, type BundleFs } from '../../src/outputs/incidents/bundle.js';
import { LogWindows } from '../../src/outputs/incidents/log-window.js';
import type { CaptureDeps } from '../../src/outputs/incidents/capture.js';
import type { IncidentManifest } from '../../src/outputs/incidents/manifest.js';
import { enforceRetention, listIncidents } from '../../src/outputs/incidents/store.js';
import { TargetIncidents } from '../../src/outputs/incidents/target.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { waitFor } from '../helpers/wait.js';

const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ww-handoff-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const failed = (start: number): ProbeResultSignal => ({
  kind: 'probe',
  target: 't',
  probe: 'chat',
  probeKind: 'chat',
  endpoint: 'router',
  conn: 'fresh',
  result: 'timeout',
  phase: 'first_token',
  start,
  durationMs: 1000,
});

function setup(incidents: Record<string, unknown>, fs?: BundleFs, exec?: CaptureDeps['exec']) {
  const target = targetSchema.parse({
    name: 't',
    endpoints: [{ name: 'router', url: 'http://127.0.0.1:9' }],
    probes: [{ name: 'chat', kind: 'chat', every: '1m', conn: ['fresh'] }],
    remediate: { command: ['true'], dryRun: false, after: '0s', cooldown: '10m' },
  });
  const metrics: Metrics = createMetrics({ defaults: false });
  const journal = new Journal({ logger });
  const wd: { w?: TargetWatchdog } = {};
  const hook = new TargetIncidents({
    deps: {
      target,
      config: incidentsSchema.parse(incidents),
      stateDir: join(dir, 'state'),
      windows: new LogWindows(),
      journal,
      status: () => ({ targets: [wd.w!.status()] }),
      redact: (t) => t,
      fs,
      exec,
    },
    metrics,
    logger,
    journal,
  });
  wd.w = new TargetWatchdog({
    target,
    metrics,
    logger,
    journal,
    incidents: hook,
    remediation: remediationFor(target, { metrics, logger, journal }),
  });
  return { w: wd.w, journal, metrics, hook };
}

describe('capture → remediation hand-off', () => {
  it('a hanging capture command is cut at the deadline and remediation runs within captureTimeout + 1 s', async () => {
    const { w, journal, hook } = setup({
      captureTimeout: '2s',
      commands: [
        { name: 'hang', argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], timeout: '1m' },
      ],
    });
    w.handle(failed(Date.now()));
    w.handle(failed(Date.now()));
    const wedged = journal.query({ type: 'transition' }).find((e) => e.data?.to === 'wedged')!;
    expect(wedged).toBeDefined();
    // Held while the capture runs.
    expect(journal.query({ type: 'remediation' })).toHaveLength(0);
    // The command's own timeout is a minute: a remediation within this poll bound was released by the
    // capture's deadline (2 s), not by the command ending.
    const remediation = await waitFor(() => journal.query({ type: 'remediation' })[0], {
      timeoutMs: 15_000,
      what: 'the remediation, released by the capture deadline before the hanging command times out (1 m)',
    });
    expect(remediation.data?.result).toBe('success');
    expect(remediation.seq).toBeGreaterThan(wedged.seq);
    await hook.idle();
    const incident = journal.query({ type: 'incident' })[0]!;
    expect(incident.data?.result).toBe('partial');
    const m = JSON.parse(
      readFileSync(join(incident.data!.dir as string, 'manifest.json'), 'utf8'),
    ) as IncidentManifest;
    expect(m.commands[0]!.result).toBe('timeout');
    expect(m.pieces.find((p) => p.kind === 'command')!.status).toBe('timeout');
    // Cut before the deadline, so its record says so and the rest of the bundle is whole.
    expect(readFileSync(join(incident.data!.dir as string, 'commands/hang.txt'), 'utf8')).toContain(
      '# result timeout',
    );
    await w.idle();
  }, 30_000);

  it('a command still running when the capture deadline fires is in the manifest, as timed out', async () => {
    // A loaded host: the cut command is reaped after the capture's deadline has written the manifest (.ci/run beside
    // a real-engine bench, load 12). It was missing from the manifest altogether; now it is there, timed out.
    const { w, journal, hook } = setup(
      {
        captureTimeout: '1s',
        commands: [{ name: 'slow', argv: ['true'], timeout: '1m' }],
      },
      undefined,
      () =>
        new Promise((resolve) =>
          setTimeout(
            () =>
              resolve({
                result: 'timeout',
                code: null,
                signal: 'SIGKILL',
                output: '',
                droppedBytes: 0,
                durationMs: 3000,
              }),
            3_000,
          ),
        ),
    );
    w.handle(failed(Date.now()));
    w.handle(failed(Date.now()));
    await waitFor(() => journal.query({ type: 'incident' })[0], { timeoutMs: 15_000, what: 'the incident' });
    await hook.idle();
    const incident = journal.query({ type: 'incident' })[0]!;
    const m = JSON.parse(
      readFileSync(join(incident.data!.dir as string, 'manifest.json'), 'utf8'),
    ) as IncidentManifest;
    expect(m.commands.map((c) => [c.name, c.result])).toEqual([['slow', 'timeout']]);
    await w.idle();
  }, 30_000);

  it('a full disk skips the capture with a metric and an event; remediation still runs', async () => {
    const full: BundleFs = { ...nodeBundleFs, freeBytes: async () => 1024 };
    const { w, journal, metrics, hook } = setup({}, full);
    w.handle(failed(Date.now()));
    w.handle(failed(Date.now()));
    await waitFor(() => journal.query({ type: 'remediation' })[0], { what: 'the remediation' });
    await hook.idle();
    const incident = journal.query({ type: 'incident' });
    expect(incident).toHaveLength(1);
    expect(incident[0]!.data?.result).toBe('no_space');
    expect(incident[0]!.summary).toContain('disk full');
    expect(await metrics.registry.getSingleMetricAsString('wedgewatch_incidents_total')).toContain(
      'wedgewatch_incidents_total{target="t",result="no_space"} 1',
    );
    expect(readdirSync(join(dir, 'state', 'incidents'))).toEqual([]);
    await w.idle();
  });

  it('ENOSPC in the middle of a capture removes the partial bundle and counts no_space', async () => {
    let writes = 0;
    const failing: BundleFs = {
      ...nodeBundleFs,
      writeFile: async (p, d) => {
        if (++writes > 2)
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        await nodeBundleFs.writeFile(p, d);
      },
    };
    const { w, journal, metrics, hook } = setup({}, failing);
    w.handle(failed(Date.now()));
    w.handle(failed(Date.now()));
    await waitFor(() => journal.query({ type: 'remediation' })[0], { what: 'the remediation' });
    await hook.idle();
    expect(journal.query({ type: 'incident' })[0]!.data?.result).toBe('no_space');
    expect(await metrics.registry.getSingleMetricAsString('wedgewatch_incidents_total')).toContain(
      'result="no_space"} 1',
    );
    expect(readdirSync(join(dir, 'state', 'incidents'))).toEqual([]);
    await w.idle();
  });

  it('one bundle per episode: a second wedge needs the target to have been ok in between', async () => {
    const { w, journal, hook } = setup({ on: ['wedged', 'down'] });
    w.handle(failed(Date.now()));
    w.handle(failed(Date.now()));
    await waitFor(() => journal.query({ type: 'incident' })[0], { what: 'the capture' });
    await hook.idle();
    w.handle(failed(Date.now()));
    expect(journal.query({ type: 'incident' })).toHaveLength(1);
    expect(await listIncidents(join(dir, 'state', 'incidents'))).toHaveLength(1);
    await w.idle();
  });
});

describe('retention', () => {
  const bundle = (root: string, id: string, bytes: number) => {
    mkdirSync(join(root, id, 'logs'), { recursive: true });
    writeFileSync(join(root, id, 'manifest.json'), JSON.stringify({ target: 't', times: {} }));
    writeFileSync(join(root, id, 'logs', 'prefill.log'), 'x'.repeat(bytes));
  };
  const id = (n: number) => `20261201T0000${String(n).padStart(2, '0')}.000Z-t`;

  it('removes the oldest bundles beyond the count, then beyond the bytes, and always keeps the newest', async () => {
    const root = join(dir, 'incidents');
    for (let i = 0; i < 6; i++) bundle(root, id(i), 1000);
    writeFileSync(join(root, 'README.not-a-bundle'), 'left alone');
    expect(await enforceRetention(root, { count: 4, bytes: 1e9 })).toEqual([id(0), id(1)]);
    expect(readdirSync(root).sort()).toEqual([id(2), id(3), id(4), id(5), 'README.not-a-bundle']);
    // ~1 kB each plus manifests: 2.5 kB keeps two.
    expect(await enforceRetention(root, { count: 20, bytes: 2500 })).toEqual([id(2), id(3)]);
    bundle(root, id(7), 10_000);
    expect(await enforceRetention(root, { count: 20, bytes: 2500 })).toEqual([id(4), id(5)]);
    expect(existsSync(join(root, id(7)))).toBe(true);
  });
});
