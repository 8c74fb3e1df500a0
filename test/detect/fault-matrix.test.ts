// lane: e2e — the real daemon runtime (test/helpers/fault-matrix/matrix.mjs loads it from dist/) against the simulators.
// The fault matrix's fast variant (bench:detect --fast) on the wall clock: the faults whose diagnosis used to flap
// (decode_stall went completions_hung ↔ engine_stalled 8 times in 2 minutes; vLLM shm_broadcast_hang
// completions_hung ↔ completions_failing; an intermittent hang through 5 labels) and a death. Each must reach its
// diagnosis, change it only to stronger evidence while the fault holds (never back: a flap), and come back to ok.
// How many steps it takes is the machine's: on a loaded one the probes' timeouts and the engines' frozen gauges
// arrive further apart, and an extra escalation shows (slow → completions_failing → engine_stalled). The bench's
// bar, one change at most, is judged at the example's cadence by `npm run bench:detect`.
import { describe, expect, it } from 'vitest';
import { loadDist, runPlan, verdictOf } from '../helpers/fault-matrix/matrix.mjs';
import { plans } from '../helpers/fault-matrix/plans.mjs';

const FAULTS = ['decode_stall', 'intermittent_hang', 'crash', 'vllm_shm_broadcast_hang'];

describe('fault matrix, fast variant (issue 26)', () => {
  it('each fault reaches its diagnosis, changes it only upwards, and recovers', async () => {
    const d = await loadDist();
    const selected = plans({ abortCascade: d.abortCascade }).filter((p: { name: string }) =>
      FAULTS.includes(p.name),
    );
    expect(selected.map((p: { name: string }) => p.name).sort()).toEqual([...FAULTS].sort());
    const results = await Promise.all(
      selected.map((plan: unknown) => runPlan(plan, { d, trials: 1, holdMs: 10_000, fast: true })),
    );
    const problems = results.flatMap((r: { plan: { name: string }; trials: unknown[] }) =>
      verdictOf(r.trials, { maxChanges: Infinity }).map((p: string) => `${r.plan.name}: ${p}`),
    );
    expect(problems).toEqual([]);
  }, 240_000);
});
