// The built-in packs a log source runs when its config names none: by the engine that writes the log. The daemon
// (config schema), replay and verify all take their default from here, so a log a default daemon ignores is not
// "caught" by a default replay. Every engine `examples/` ships a config for is one (issue 40); each list is what
// that engine's deployment writes into the log: its own lines, the libraries it runs (torch, LMCache, NIXL), the
// Rust or Go parts it ships, and the generic shapes any process prints.
import { DEFAULT_LOG_PACKS, GENERIC_PACKS, type LogPack, withImpliedPacks } from './log-packs.js';

/** Engines whose logs the packs know; a log source's `engine` (default sglang, the project's first engine). */
export const LOG_ENGINES = [
  'sglang',
  'vllm',
  'llamacpp',
  'ollama',
  'trtllm',
  'dynamo',
  'tgi',
  'gateway',
] as const;
export type LogEngine = (typeof LOG_ENGINES)[number];

// Each list in match order with the packs it implies (withImpliedPacks), so a source's packs equal its engine's row.
export const DEFAULT_PACKS: Record<LogEngine, readonly LogPack[]> = canonical({
  // SGLang, its PD KV backends (NIXL, Mooncake) and their shared code, torch collectives, the Rust router/gateway,
  // and the generic shapes (config/log-packs.ts DEFAULT_LOG_PACKS).
  sglang: DEFAULT_LOG_PACKS,
  // vLLM; LMCache runs inside it, its Rust tokenizers panic through Rust's hook.
  vllm: ['vllm', 'lmcache', 'torch', 'rust', ...GENERIC_PACKS],
  // llama-server: ggml's aborts and backend errors are the native and gpu shapes; no Python, no torch.
  llamacpp: ['llamacpp', 'gpu', 'native'],
  // Ollama (Go, slog) runs llama-server and prints its output in its own log: a Go panic is its own death.
  ollama: ['ollama', 'llamacpp', 'go', 'gpu', 'native'],
  // trtllm-serve: Python over TensorRT-LLM's C++ runtime, torch collectives, MPI ranks.
  trtllm: ['trtllm', 'torch', ...GENERIC_PACKS],
  // Dynamo: the Rust frontend and runtime (tracing), and its workers, which run vLLM, SGLang or TensorRT-LLM.
  dynamo: ['dynamo', 'vllm', 'sglang', 'trtllm', 'lmcache', 'nixl', 'torch', 'rust', ...GENERIC_PACKS],
  // TGI: the Rust launcher and router, the Python shards (their lines relogged by the launcher).
  tgi: ['tgi', 'torch', 'rust', ...GENERIC_PACKS],
  // A gateway in front of the engines: sgl-model-gateway (Rust), LiteLLM (Python), Envoy AI Gateway (Go).
  gateway: ['gateway', 'rust', 'go', 'native', 'python'],
});

function canonical(t: Record<LogEngine, readonly LogPack[]>): Record<LogEngine, readonly LogPack[]> {
  const out = {} as Record<LogEngine, readonly LogPack[]>;
  for (const e of LOG_ENGINES) out[e] = withImpliedPacks(t[e]);
  return out;
}

/** The default packs of `engine`; without one, every engine's (verify, which does not know the engine). */
export function defaultPacks(engine?: LogEngine): LogPack[] {
  if (engine !== undefined) return withImpliedPacks(DEFAULT_PACKS[engine]);
  return withImpliedPacks([...new Set(LOG_ENGINES.flatMap((e) => DEFAULT_PACKS[e]))]);
}
