// The built-in rule packs. Adding one is a new file in this folder plus one entry here.
import type { LogPack } from '../../../config/schema.js';
import { dynamoPack } from './dynamo.js';
import { gatewayPack } from './gateway.js';
import { goPack } from './go.js';
import { gpuPack } from './gpu.js';
import { llamacppPack } from './llamacpp.js';
import { lmcachePack } from './lmcache.js';
import { mooncakePack } from './mooncake.js';
import { nativePack } from './native.js';
import { nixlPack } from './nixl.js';
import { ollamaPack } from './ollama.js';
import { pythonPack } from './python.js';
import { rustPack } from './rust.js';
import { sglangDisaggPack } from './sglang-disagg.js';
import { sglangPack } from './sglang.js';
import { tgiPack } from './tgi.js';
import { torchPack } from './torch.js';
import { trtllmPack } from './trtllm.js';
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
  llamacpp: llamacppPack,
  ollama: ollamaPack,
  trtllm: trtllmPack,
  dynamo: dynamoPack,
  tgi: tgiPack,
  gateway: gatewayPack,
  torch: torchPack,
  gpu: gpuPack,
  rust: rustPack,
  go: goPack,
  native: nativePack,
  python: pythonPack,
};
