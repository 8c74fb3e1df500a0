// The daemon's runtime (probes, log watcher, engine scrapes, watchdog) against a real simulator, with the
// test config the issue names: 1 s probe timeout, 2 s interval.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import type { TargetStateName } from '../../src/core/vocabulary.js';
import type { TargetWatchdog } from '../../src/watchdog.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { simDetectionConfig, vllmDetectionConfig } from '../../src/sim/detection-config.js';
import { startSim, type Sim, type SimOptions } from '../../src/sim/index.js';
import { startVllmSim, type VllmSim, type VllmSimOptions } from '../../src/sim/vllm/index.js';
import { waitFor } from '../helpers/wait.js';
import { isCompletion } from '../../src/core/vocabulary.js';

export interface Harness<S = Sim> {
  sim: S;
  runtime: Runtime;
  metrics: Metrics;
  wd: TargetWatchdog;
  /** `state/diagnosis` of every transition so far, with its time. */
  transitions: Array<{ at: number; to: TargetStateName; diagnosis: string | null }>;
  waitState(state: TargetStateName, opts?: { diagnosis?: string; timeoutMs?: number }): Promise<number>;
  /** Every configured probe slot has run and passed (and the target is ok): the healthy baseline. */
  /**
   * Every slot passing; with `fullWindow`, after a healthy period as long as the intermittence window (what
   * keepalive_only needs to tell a keep-alive fault from chance).
   */
  waitHealthy(opts?: { timeoutMs?: number; fullWindow?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  simOpts: SimOptions = {},
  extra: Record<string, unknown> | ((sim: Sim) => Record<string, unknown>) = {},
): Promise<Harness> {
  const sim = await startSim(simOpts);
  return harnessFor(sim, (stateDir) =>
    simDetectionConfig(sim, stateDir, typeof extra === 'function' ? extra(sim) : extra),
  );
}

/** The same against the vLLM simulator (`sim --engine vllm`), target `sim`, endpoint `server`. */
export async function startVllmHarness(
  simOpts: VllmSimOptions = {},
  extra: Record<string, unknown> = {},
): Promise<Harness<VllmSim>> {
  const sim = await startVllmSim(simOpts);
  return harnessFor(sim, (stateDir) => vllmDetectionConfig(sim, stateDir, extra));
}

async function harnessFor<S extends { stop(): Promise<void> }>(
  sim: S,
  configText: (stateDir: string) => string,
): Promise<Harness<S>> {
  const dir = mkdtempSync(join(tmpdir(), 'ww-detect-sim-'));
  const metrics = createMetrics({ defaults: false });
  let runtime: Runtime;
  let loaded: ReturnType<typeof parseConfigText>;
  try {
    loaded = parseConfigText(configText(join(dir, 'state')), join(dir, 'wedgewatch.yaml'), {});
    runtime = await createRuntime(loaded, { metrics, logger: pino({ level: 'silent' }) });
  } catch (err) {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const wd = runtime.watchdog!.targets.get('sim')!;
  const slotKeys = loaded.config.targets[0]!.probes.flatMap((p) =>
    (p.endpoints ?? []).flatMap((e) => (p.conn ?? ['fresh']).map((c) => `${p.name}|${e}|${c}`)),
  );
  const window = loaded.config.targets[0]!.detect.intermittentWindow;
  const transitions: Harness<S>['transitions'] = [];
  let seen = 0;
  const collect = () => {
    const ev = runtime.watchdog!.journal.query({ target: 'sim', type: 'transition', afterSeq: seen });
    for (const e of ev) {
      seen = e.seq;
      transitions.push({
        at: e.time,
        to: e.data!.to as TargetStateName,
        diagnosis: (e.data!.diagnosis as string) ?? null,
      });
    }
  };
  const timer = setInterval(collect, 10);
  return {
    sim,
    runtime,
    metrics,
    wd,
    transitions,
    async waitState(state, opts = {}) {
      await waitFor(
        () => {
          collect();
          return (
            wd.state.state === state &&
            (opts.diagnosis === undefined || wd.state.diagnosis === opts.diagnosis)
          );
        },
        {
          timeoutMs: opts.timeoutMs ?? 20_000,
          intervalMs: 5,
          what: `${state}${opts.diagnosis ? `/${opts.diagnosis}` : ''} (now ${wd.state.state}/${wd.state.diagnosis}: ${wd.state.cause})`,
        },
      );
      return Date.now();
    },
    async waitHealthy(opts = {}) {
      await waitFor(
        () =>
          // Collect first: `transitions` must hold the ok transition by the time this returns, or a test's
          // `transitions.length` taken now counts it as the fault's (the 10 ms timer lags on a loaded machine).
          (collect(), wd.state.state === 'ok') &&
          slotKeys.every((k) => wd.state.slots[k]?.last?.result === 'ok') &&
          (opts.fullWindow !== true ||
            slotKeys.every((k) => {
              const m = wd.state.slots[k]!;
              return !isCompletion(m.probeKind) || (m.recent ?? []).length >= window;
            })),
        {
          // Start-up on a loaded machine: a deadline for a deployment that never gets healthy, not a speed.
          timeoutMs: opts.timeoutMs ?? 60_000,
          intervalMs: 5,
          what: () =>
            `every probe slot passing (${slotKeys
              .filter((k) => wd.state.slots[k]?.last?.result !== 'ok')
              .map((k) => `${k}: ${wd.state.slots[k]?.last?.result ?? 'no run'}`)
              .join(', ')})`,
        },
      );
    },
    async stop() {
      clearInterval(timer);
      await runtime.stop();
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
