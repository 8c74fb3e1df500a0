// The built-in rule packs. Adding one is a new file in this folder plus one entry here.
import type { LogPack } from '../../../config/schema.js';
import { mooncakePack } from './mooncake.js';
import { nixlPack } from './nixl.js';
import { pythonPack } from './python.js';
import { sglangPack } from './sglang.js';
import type { RulePack } from './types.js';
import { vllmPack } from './vllm.js';

export type { EngineLineKind, PackRule, RuleClass, RulePack } from './types.js';
export { RULE_CLASSES } from './types.js';

export const PACKS: Record<LogPack, RulePack> = {
  sglang: sglangPack,
  nixl: nixlPack,
  mooncake: mooncakePack,
  vllm: vllmPack,
  python: pythonPack,
};
