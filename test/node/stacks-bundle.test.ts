// Stacks at a wedge, for real (issue 42): the simulator's PD worker (a Python process with a `bootstrap_thread` and a
// scheduler blocked in `KVPoll.poll`) read by the node source with stacks on; its bootstrap thread dies on an ABORT
// frame; the lost thread is named by its Python name (learnt from a non-blocking py-spy dump); the incident capture
// runs py-spy (installed by .ci/run) and the bundle holds the dump with the blocked function, and a summary that says
// where each thread waits and that `bootstrap_thread` is gone — the line handed back for the cause.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { incidentsSchema, targetSchema } from '../../src/config/schema.js';
import { nodeSchema } from '../../src/config/node-schema.js';
import type { NodeSignal } from '../../src/core/node-signals.js';
import { initialState } from '../../src/core/memory.js';
import { createMetrics } from '../../src/metrics.js';
import { captureIncident } from '../../src/outputs/incidents/capture.js';
import { LogWindows } from '../../src/outputs/incidents/log-window.js';
import type { IncidentManifest } from '../../src/outputs/incidents/manifest.js';
import { Journal } from '../../src/outputs/journal/journal.js';
import { runCommand } from '../../src/lib/exec.js';
import { startPdWorker, type PdWorker } from '../../src/sim/pd-worker.js';
import { which } from '../../src/sources/node/pyspy.js';
import { NodeWatch } from '../../src/sources/node/watch.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
let worker: PdWorker | undefined;
let watch: NodeWatch | undefined;
afterEach(async () => {
  await watch?.stop();
  await worker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function setup(pySpy: string) {
  dir = mkdtempSync(join(tmpdir(), 'ww-stacks-'));
  const w = await startPdWorker('prefill');
  if ('problem' in w) throw new Error(`the PD worker needs python3: ${w.problem}`);
  worker = w;
  const pidFile = join(dir, 'prefill.pid');
  writeFileSync(pidFile, `${w.pid}\n`);
  const signals: NodeSignal[] = [];
  watch = new NodeWatch({
    target: 't',
    node: nodeSchema.parse({
      processes: [{ service: 'prefill', pidFile }],
      every: '1s',
      stacks: { enabled: true, pySpy },
    }),
    exec: runCommand,
    metrics: createMetrics({ defaults: false }),
    logger: quietLogger(),
    onSignal: (s) => signals.push(s),
  });
  return { w, signals };
}

async function capture(reported: Array<{ service: string; text: string }>) {
  const out = await captureIncident(
    {
      target: targetSchema.parse({ name: 't', endpoints: [{ name: 'router', url: 'http://127.0.0.1:9' }] }),
      config: incidentsSchema.parse({ captureTimeout: '20s' }),
      stateDir: join(dir, 'state'),
      windows: new LogWindows(),
      journal: new Journal({ logger: quietLogger() }),
      status: () => ({ targets: [] }),
      redact: (x) => x,
      stacks: {
        dump: (ms) => watch!.stacks(ms),
        report: (service, summaries) => reported.push(...summaries.map((s) => ({ service, text: s.text }))),
      },
    },
    { ...initialState('t', Date.now() - 1000), state: 'wedged' as const },
  );
  const manifest = JSON.parse(readFileSync(join(out.dir!, 'manifest.json'), 'utf8')) as IncidentManifest;
  return { dir: out.dir!, piece: manifest.pieces.find((p) => p.kind === 'stacks')! };
}

describe('stacks in the bundle and in the cause', () => {
  it('the lost thread is named by its Python name and py-spy shows the blocked function in the bundle', async () => {
    // py-spy is installed by .ci/run (pip install py-spy==0.4.2): without it this fails, loudly.
    if ((await which('py-spy')) === undefined)
      throw new Error('py-spy is not on PATH: pip install py-spy==0.4.2');
    const { w, signals } = await setup('py-spy');
    watch!.start();
    await waitFor(
      () => [...(watch!.sampler('prefill')?.threadNames(w.pid).values() ?? [])].includes('bootstrap_thread'),
      {
        timeoutMs: 60_000,
        what: 'the Python thread names learnt from a non-blocking dump',
      },
    );
    const seen = signals.length;
    await waitFor(() => signals.length >= seen + 4, { timeoutMs: 60_000, what: 'four more readings' });
    w.abort();
    const lost = await waitFor(() => signals.find((s) => (s.lost?.length ?? 0) > 0)?.lost, {
      timeoutMs: 60_000,
      what: 'a lost thread',
    });
    expect(lost.map((t) => t.name)).toEqual(['bootstrap_thread']);

    const reported: Array<{ service: string; text: string }> = [];
    const { dir: bundle, piece } = await capture(reported);
    expect(piece.status).toBe('ok');
    const dump = readFileSync(join(bundle, `stacks/prefill-${w.pid}.txt`), 'utf8');
    expect(dump).toMatch(/^\$ \S*py-spy dump --pid \d+\n/);
    expect(dump).toMatch(
      /Thread \d+ \(idle\): "scheduler"\n(\s+\S.*\n)*?\s+poll \(pd_worker\.py:\d+\)\n\s+event_loop_normal_disagg \(pd_worker\.py:\d+\)/,
    );
    expect(dump).not.toMatch(/Thread \d+ \([a-z+]+\): "bootstrap_thread"/);
    const summary = readFileSync(join(bundle, 'stacks/summary.txt'), 'utf8');
    expect(summary).toContain(`prefill pid ${w.pid}: `);
    expect(summary).toMatch(/scheduler waiting in `poll`( with no CPU for \d+ s)?/);
    expect(summary).toContain('no `bootstrap_thread`');
    expect(reported).toHaveLength(1);
    expect(summary).toContain(reported[0]!.text);
  }, 180_000);

  it('py-spy missing: the piece is skipped with the reason and the install command, the dump file says so', async () => {
    const { w } = await setup(join(tmpdir(), 'no-such-py-spy'));
    watch!.start();
    await waitFor(() => (watch!.sampler('prefill')?.pids().length ?? 0) > 0, { what: 'a first reading' });
    const { dir: bundle, piece } = await capture([]);
    expect(piece.status).toBe('skipped');
    expect(piece.detail).toMatch(/no-such-py-spy not found \(pip install py-spy==0\.4\.2\)/);
    expect(readFileSync(join(bundle, `stacks/prefill-${w.pid}.txt`), 'utf8')).toContain('# skipped: ');
  });
});
