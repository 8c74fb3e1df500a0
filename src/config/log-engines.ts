// The built-in packs a log source runs when its config names none: by the engine that writes the log. The daemon
// (config schema), replay and verify all take their default from here, so a log a default daemon ignores is not
// "caught" by a default replay.
import { DEFAULT_LOG_PACKS, type LogPack, withImpliedPacks } from './log-packs.js';

/** Engines whose logs the packs know; a log source's `engine` (default sglang, the project's first engine). */
export const LOG_ENGINES = ['sglang', 'vllm'] as const;
export type LogEngine = (typeof LOG_ENGINES)[number];

export const DEFAULT_PACKS: Record<LogEngine, readonly LogPack[]> = {
  // SGLang, its PD KV backends (NIXL, Mooncake) and their shared code, torch collectives, the Rust router/gateway,
  // and the generic Python pack (thread deaths, CUDA OOM): config/log-packs.ts DEFAULT_LOG_PACKS.
  sglang: DEFAULT_LOG_PACKS,
  vllm: ['vllm', 'lmcache', 'torch', 'rust', 'python'],
};

/** The default packs of `engine`; without one, every engine's (verify, which does not know the engine). */
export function defaultPacks(engine?: LogEngine): LogPack[] {
  if (engine !== undefined) return withImpliedPacks(DEFAULT_PACKS[engine]);
  return withImpliedPacks([...new Set(LOG_ENGINES.flatMap((e) => DEFAULT_PACKS[e]))]);
}
