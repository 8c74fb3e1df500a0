// Which engine wrote a log file, told from its lines (issue 40): `replay FILE` with no flag reads each file with its
// engine's default packs, says which it ran, and warns when a file reads like an engine whose packs were not run.
// Each engine is known by the words its own logger prints on ordinary lines (its record prefix, its module names,
// its start-up lines), not by its failures: a healthy stretch of the log is enough to tell.
import { closeSync, openSync, readSync } from 'node:fs';
import type { LogEngine } from '../config/log-engines.js';

/** Bytes read from the start of a file to tell its engine (a start-up and some traffic, in any engine). */
export const DETECT_BYTES = 1 << 20;

// Markers per engine, each one of its loggers' shapes or its modules' names (see packs/*.ts for the upstream files).
// An engine that runs another's workers (Dynamo over vLLM/SGLang/TensorRT-LLM, Ollama over llama.cpp) is listed first
// and wins a tie: its defaults include the other's packs.
const MARKERS: readonly [LogEngine, RegExp][] = [
  // Dynamo's Rust crates and Python components (`dynamo_llm::http::service`, `dynamo_runtime::`, `dynamo.vllm`).
  [
    'dynamo',
    /\bdynamo_(?:llm|runtime|kv_router)::|\bdynamo\.(?:vllm|sglang|trtllm|frontend)\b|\bdynamo-run\b/g,
  ],
  // Ollama's slog records (logutil/logutil.go: AddSource, so `source=file.go:N`) and its OLLAMA_* settings.
  ['ollama', /^time=\S+ level=[A-Z]{4,5} source=[\w.]+\.go:\d+ msg=|\bOLLAMA_[A-Z_]{3,40}\b/gm],
  // TGI's launcher and router targets.
  ['tgi', /\btext_generation_(?:launcher|router|server)\b/g],
  // TensorRT-LLM's Python and C++ loggers.
  ['trtllm', /\[TRT-LLM\]|\[TensorRT-LLM\]/g],
  // vLLM's process prefix and its logger's `LEVEL MM-DD HH:MM:SS [file.py:N]`.
  [
    'vllm',
    /\((?:EngineCore(?:_DP\d+)?|APIServer|Worker(?:_\w+)?|VllmWorker[\w-]*) pid=\d+\)|^(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d \[[\w./-]+\.py:\d+\]/gm,
  ],
  // SGLang's logger `[YYYY-MM-DD HH:MM:SS TP0] ` and its batch lines.
  [
    'sglang',
    /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: (?:DP|TP|EP|PP)\d+)*\] |\b(?:Prefill|Decode) batch[.,] #/gm,
  ],
  // llama-server's `srv  func: ` / `slot func: id N | task N | ` and the library's loading lines.
  [
    'llamacpp',
    /^(?:[IWED] )?(?:srv {1,2}|slot )[\w ]{12}: |\bllama_model_load(?:er)?\b|\bggml_(?:cuda|backend)_\w+/gm,
  ],
  // Gateways: sgl-model-gateway (`smg::`), LiteLLM, Envoy AI Gateway's access log.
  ['gateway', /\bsmg::\w+|\bsgl_model_gateway\b|LiteLLM(?: Proxy| Router)?:|\bllm_input_token=/g],
];

export interface EngineGuess {
  engine: LogEngine;
  /** Marker lines of the winner among the lines read (0: nothing told; the default was taken). */
  hits: number;
  /** Every engine with a marker, most hits first. */
  seen: { engine: LogEngine; hits: number }[];
}

/** The engine whose markers the text holds most (the first listed on a tie); undefined when none does. */
export function guessEngine(text: string): EngineGuess | undefined {
  const seen: { engine: LogEngine; hits: number; order: number }[] = [];
  MARKERS.forEach(([engine, re], order) => {
    re.lastIndex = 0;
    const hits = text.match(re)?.length ?? 0;
    if (hits > 0) seen.push({ engine, hits, order });
  });
  if (seen.length === 0) return undefined;
  // An engine that runs another's workers prints that engine's lines too: it wins when it is seen at all.
  const wrapper = seen.find((s) => s.engine === 'dynamo' || s.engine === 'ollama');
  seen.sort((a, b) => b.hits - a.hits || a.order - b.order);
  const best = wrapper ?? seen[0]!;
  return { engine: best.engine, hits: best.hits, seen: seen.map(({ engine, hits }) => ({ engine, hits })) };
}

/** The engine of a file from its first DETECT_BYTES. */
export function guessFileEngine(file: string): EngineGuess | undefined {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(DETECT_BYTES);
    const got = readSync(fd, buf, 0, DETECT_BYTES, 0);
    return guessEngine(buf.toString('utf8', 0, got));
  } finally {
    closeSync(fd);
  }
}
