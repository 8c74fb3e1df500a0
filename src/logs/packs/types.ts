import type { LogPack } from '../../config/schema.js';
import type { RuleConfig } from '../../config/schema.js';

/** Periodic engine lines a pack turns into engine gauges (see ../engine-lines.ts). */
export type EngineLineKind = 'sglang_batch' | 'vllm_stats';

export interface RulePack {
  name: LogPack;
  rules: RuleConfig[];
  engineLines: EngineLineKind[];
}
