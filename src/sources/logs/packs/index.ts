// The built-in rule packs. Adding one is a new file in this folder plus one entry here.
import type { LogPack } from '../../../config/schema.js';
import { lmcachePack } from './lmcache.js';
import { mooncakePack } from './mooncake.js';
import { nixlPack } from './nixl.js';
import { pythonPack } from './python.js';
import { rustPack } from './rust.js';
import { sglangDisaggPack } from './sglang-disagg.js';
import { sglangPack } from './sglang.js';
import { torchPack } from './torch.js';
import type { RulePack } from './types.js';
import { vllmPack } from './vllm.js';

export type { EngineLineKind, PackRule, RuleClass, RulePack } from './types.js';
export { RULE_CLASSES } from './types.js';

// In LOG_PACKS order (the match order; compileRuleSet reads it from here).
export const PACKS: Record<LogPack, RulePack> = {
  sglang: sglangPack,
  sglang_disagg: sglangDisaggPack,
  nixl: nixlPack,
  mooncake: mooncakePack,
  vllm: vllmPack,
  lmcache: lmcachePack,
  torch: torchPack,
  rust: rustPack,
  python: pythonPack,
};
