// vLLM only. A data-parallel deployment (`--data-parallel-size 2`) where one engine core is stuck while its sibling
// serves: the stuck core sends no scheduler stats, so the API server's per-engine series for it freeze — running
// requests held, generation tokens not moving (vllm/v1/metrics/loggers.py PrometheusStatLogger labels every series
// with `engine`, one value per engine index) — while engine 0's tokens keep counting. The simulator serves engine 0
// itself and adds the stuck engine's frozen series to /metrics.
import type { FaultDef } from './types.js';

export const rankStall: FaultDef = {
  name: 'rank_stall',
  engines: ['vllm'],
  summary:
    'a second data-parallel engine core is stuck: its /metrics series hold `running` requests and frozen generation tokens while engine 0 serves',
  params: {
    engine: { default: 1, help: 'the stuck engine index (1 or more; 0 is the simulated engine that serves)' },
    running: { default: 2, help: 'requests the stuck engine holds (1 or more)' },
  },
  validate(p) {
    const e = Number(p.engine);
    const r = Number(p.running);
    if (!Number.isInteger(e) || e < 1)
      return `engine must be an integer ≥ 1 (got ${JSON.stringify(p.engine)})`;
    if (!Number.isInteger(r) || r < 1)
      return `running must be an integer ≥ 1 (got ${JSON.stringify(p.running)})`;
    return undefined;
  },
  stalledEngine(p) {
    return { engine: String(Number(p.engine)), running: Number(p.running) };
  },
};
