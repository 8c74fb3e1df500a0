// The built-in rule pack names, free of the schema's dependencies so `replay` can read them without loading zod.
// The order is the match order (src/sources/logs/rules/compile.ts compileRuleSet): the engines' own packs first, the
// packs of code several engines share after them, the generic shapes last (`gpu`, `native`, `python`): a line an
// engine's rule names is that rule's event, and a generic shape of the same incident joins it (packs/patterns.ts
// PROCESS_DEATH); `python`'s thread-death record shares its header with nixl's, so nixl's comes first.
export const LOG_PACKS = [
  'sglang',
  'sglang_disagg',
  'nixl',
  'mooncake',
  'vllm',
  'lmcache',
  'llamacpp',
  'ollama',
  'trtllm',
  'dynamo',
  'tgi',
  'gateway',
  'torch',
  'gpu',
  'rust',
  'go',
  'native',
  'python',
] as const;
export type LogPack = (typeof LOG_PACKS)[number];

/**
 * Packs a listed pack brings along (issue 27). Rules of code several backends share live in a pack named for that
 * code: SGLang's disaggregation common code (`sglang_disagg`, used by its NIXL and Mooncake backends), torch's
 * collectives (`torch`, used by every engine) and LMCache (`lmcache`, the KV cache layer under vLLM and SGLang). A config written before the split (`[sglang, nixl, python]`) keeps
 * every rule it had, so the old names go on working with the same meaning. Ollama runs llama.cpp's own server and
 * prints its output in its log, so `ollama` brings `llamacpp` (issue 40).
 */
export const IMPLIED_PACKS: Readonly<Partial<Record<LogPack, readonly LogPack[]>>> = {
  sglang: ['sglang_disagg', 'torch'],
  nixl: ['sglang_disagg'],
  mooncake: ['sglang_disagg'],
  // LMCache's retrieve rule lived in `vllm` before LMCache had a pack of its own (issue 27).
  vllm: ['lmcache', 'torch'],
  ollama: ['llamacpp'],
};

/** `packs` with the packs they imply, in LOG_PACKS order, each once. */
export function withImpliedPacks(packs: readonly LogPack[]): LogPack[] {
  const want = new Set<LogPack>(packs);
  for (const p of packs) for (const q of IMPLIED_PACKS[p] ?? []) want.add(q);
  return LOG_PACKS.filter((p) => want.has(p));
}

/**
 * Shapes any process prints whatever engine it runs (issue 40): a sticky CUDA, NCCL, NIXL or UCX error line
 * (`gpu`), a C/C++ abort or a death by a signal (`native`), a CPython fatal error or a dead thread (`python`).
 */
export const GENERIC_PACKS: readonly LogPack[] = ['gpu', 'native', 'python'];

/** The packs a log source of SGLang reads when its config names none (the default engine's), in match order. */
export const DEFAULT_LOG_PACKS: readonly LogPack[] = withImpliedPacks([
  'sglang',
  'sglang_disagg',
  'nixl',
  'mooncake',
  'lmcache',
  'torch',
  'rust',
  ...GENERIC_PACKS,
]);
