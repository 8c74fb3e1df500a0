// The engine /metrics mappings. Adding an engine is a file in this folder plus one entry here.
import { dynamoMapping } from './dynamo.js';
import { llamacppMapping } from './llamacpp.js';
import { routerMapping } from './router.js';
import { sglangMapping } from './sglang.js';
import { tgiMapping } from './tgi.js';
import type { EngineMapping } from './types.js';
import { vllmMapping } from './vllm.js';

export type { EngineFields, EngineMapping } from './types.js';

export const ENGINE_MAPPINGS: EngineMapping[] = [
  sglangMapping,
  vllmMapping,
  llamacppMapping,
  tgiMapping,
  dynamoMapping,
  routerMapping,
];
