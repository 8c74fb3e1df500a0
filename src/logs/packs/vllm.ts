// vLLM signatures (engine-signals.md §5). The `Engine 000:` stats line feeds engine gauges.
import type { RulePack } from './types.js';

export const vllmPack: RulePack = {
  name: 'vllm',
  engineLines: ['vllm_stats'],
  rules: [
    // /health answers 503 once this is raised; the traceback and the API server's log both carry the name.
    {
      name: 'vllm_engine_dead',
      class: 'engine_death',
      severity: 'critical',
      match: String.raw`\bEngineDeadError\b`,
    },
  ],
};
