// The built-in rule pack names, free of the schema's dependencies so `replay` can read them without loading zod.
// The order is the match order (src/sources/logs/rules/compile.ts compileRuleSet): the specific packs before the generic
// `python` one, whose thread-death record shares its header with nixl's.
export const LOG_PACKS = [
  'sglang',
  'sglang_disagg',
  'nixl',
  'mooncake',
  'vllm',
  'lmcache',
  'torch',
  'rust',
  'python',
] as const;
export type LogPack = (typeof LOG_PACKS)[number];

/**
 * Packs a listed pack brings along (issue 27). Rules of code several backends share live in a pack named for that
 * code: SGLang's disaggregation common code (`sglang_disagg`, used by its NIXL and Mooncake backends), torch's
 * collectives (`torch`, used by every engine) and LMCache (`lmcache`, the KV cache layer under vLLM and SGLang). A config written before the split (`[sglang, nixl, python]`) keeps
 * every rule it had, so the old names go on working with the same meaning.
 */
export const IMPLIED_PACKS: Readonly<Partial<Record<LogPack, readonly LogPack[]>>> = {
  sglang: ['sglang_disagg', 'torch'],
  nixl: ['sglang_disagg'],
  mooncake: ['sglang_disagg'],
  // LMCache's retrieve rule lived in `vllm` before LMCache had a pack of its own (issue 27).
  vllm: ['lmcache', 'torch'],
};

/** `packs` with the packs they imply, in LOG_PACKS order, each once. */
export function withImpliedPacks(packs: readonly LogPack[]): LogPack[] {
  const want = new Set<LogPack>(packs);
  for (const p of packs) for (const q of IMPLIED_PACKS[p] ?? []) want.add(q);
  return LOG_PACKS.filter((p) => want.has(p));
}

/** The packs a log source reads when its config names none. */
export const DEFAULT_LOG_PACKS: readonly LogPack[] = [
  'sglang',
  'sglang_disagg',
  'nixl',
  'mooncake',
  'lmcache',
  'torch',
  'rust',
  'python',
];
