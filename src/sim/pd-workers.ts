// The simulator's PD legs as real processes (issue 42): one Python worker per leg (./pd-worker.ts), its pid in the
// leg's pid file, so the node sources find and read it as they would a real SGLang engine. The bootstrap thread of
// prefill's worker dies with the simulated one (nixl_abort_unhandled); a restart of a leg starts a fresh worker.
import { writeFileSync } from 'node:fs';
import { startPdWorker, type PdWorker } from './pd-worker.js';

export type Leg = 'prefill' | 'decode';

export interface SimWorkers {
  /** Why there are none (no python3), or undefined when both run. */
  problem?: string;
  pid(leg: Leg): number | undefined;
  killBootstrapThread(): void;
  /** The leg's process dies (crash, pd_half_failed); its pid file still names it. */
  crash(leg: Leg): Promise<void>;
  restart(leg: Leg): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorkers(pidFiles: Record<Leg, string>, python = 'python3'): Promise<SimWorkers> {
  const running: Partial<Record<Leg, PdWorker>> = {};
  let problem: string | undefined;
  const start = async (leg: Leg) => {
    const w = await startPdWorker(leg, python);
    if ('problem' in w) {
      problem = `no PD worker processes: ${w.problem}`;
      return;
    }
    running[leg] = w;
    writeFileSync(pidFiles[leg], `${w.pid}\n`);
  };
  await start('prefill');
  if (problem === undefined) await start('decode');
  return {
    get problem() {
      return problem;
    },
    pid: (leg) => running[leg]?.pid,
    killBootstrapThread: () => running.prefill?.abort(),
    async crash(leg) {
      await running[leg]?.stop();
    },
    async restart(leg) {
      if (running[leg] === undefined) return;
      await running[leg].stop();
      await start(leg);
    },
    async stop() {
      await Promise.all(Object.values(running).map((w) => w.stop()));
    },
  };
}
