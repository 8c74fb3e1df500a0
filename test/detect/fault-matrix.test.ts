// The fault matrix's fast variant (bench:detect --fast): the real daemon runtime against the simulators at the
// detection tests' cadence, on the faults whose diagnosis used to flap (decode_stall went completions_hung ↔
// engine_stalled 8 times in 2 minutes; vLLM shm_broadcast_hang completions_hung ↔ completions_failing; an
// intermittent hang through 5 labels) and a death. Each must reach its diagnosis, change it at most once and only
// to stronger evidence while the fault holds, and come back to ok. The example-cadence matrix is the bench.
import { describe, expect, it } from 'vitest';
import { loadDist, runPlan, verdictOf } from '../../bench/detect/matrix.mjs';
import { plans } from '../../bench/detect/plans.mjs';

const FAULTS = ['decode_stall', 'intermittent_hang', 'crash', 'vllm_shm_broadcast_hang'];

describe('fault matrix, fast variant (issue 26)', () => {
  it('each fault reaches its diagnosis, changes it at most once and only upwards, and recovers', async () => {
    const d = await loadDist();
    const selected = plans({ abortCascade: d.abortCascade }).filter((p: { name: string }) =>
      FAULTS.includes(p.name),
    );
    expect(selected.map((p: { name: string }) => p.name).sort()).toEqual([...FAULTS].sort());
    const results = await Promise.all(
      selected.map((plan: unknown) => runPlan(plan, { d, trials: 1, holdMs: 10_000, fast: true })),
    );
    const problems = results.flatMap((r: { plan: { name: string }; trials: unknown[] }) =>
      verdictOf(r.trials).map((p: string) => `${r.plan.name}: ${p}`),
    );
    expect(problems).toEqual([]);
  }, 240_000);
});
