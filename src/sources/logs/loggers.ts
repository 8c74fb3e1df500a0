// The record prefixes the engines' loggers print, and the process or rank a line names. A built-in rule for a
// message an engine prints through its logger requires that logger's prefix right before the match (packs/types.ts
// `logger`): a continuation line of a multi-line message (user text printed raw) has none, so it is never a record.
//  - SGLang: `[%(asctime)s{prefix}] %(message)s`, prefix ` DP0 TP0 EP0`, ` PP1`… (python/sglang/srt/utils/common.py
//    configure_logger @ a343daaf); continuation lines of a message carry no prefix.
//  - vLLM: `%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s` (vllm/logger.py _FORMAT @ a6f0308),
//    repeated on every line of a message by NewLineFormatter (vllm/logging_utils/formatter.py); each process's
//    output is prefixed `(EngineCore_DP0 pid=N) ` (vllm/utils decorate_logs).
//  - Rust `tracing` (tracing-subscriber fmt, full and compact): `TIME  LEVEL spans: target: [file:line: ]message`
//    (Dynamo's frontend and runtime, TGI's launcher and router, sgl-model-gateway `%Y-%m-%d %H:%M:%S` with file and
//    line, observability/logging.rs @ 73da68ca); continuation lines of a message (TGI relogs a shard's traceback
//    in one record) carry no prefix.
//  - TensorRT-LLM: Python `[%m/%d/%Y-%H:%M:%S] [TRT-LLM] [RANK N] [E] ` (tensorrt_llm/logger.py, `[MPI_Rank N]` in
//    older builds) and C++ `[TensorRT-LLM][ERROR] ` (cpp/include/tensorrt_llm/common/logger.h).
//  - llama.cpp: common/log.cpp prints no prefix by default; `--log-prefix` adds the level letter (`W `) and
//    `--log-timestamps` a `M.SS.mmm.uuu ` stamp before it (v0.5.0). The server's own `srv  func: ` and
//    `slot func: id N | task N | ` are part of the rules' matches.
//  - LiteLLM: `%(asctime)s - LiteLLM Proxy:%(levelname)s: %(filename)s:%(lineno)s - %(message)s`
//    (litellm/_logging.py, `%H:%M:%S`).

export type LoggerName = 'sglang' | 'vllm' | 'tracing' | 'trtllm' | 'llamacpp' | 'litellm';

export interface EngineLogger {
  /** Tested on the text before a match: it must end with the logger's prefix. Bounded, so linear. */
  prefix: RegExp;
  /** A line starting a new record of this logger (its prefix within the line's first MAX_PREFIX characters). */
  record: RegExp;
  /** How a multi-line message goes on: unprefixed lines (SGLang), or every line with the prefix again (vLLM). */
  continuation: 'unprefixed' | 'repeated';
}

// The time, or (as public reports quote lines, `[TP0] Scheduler hit an exception:`) the parallel ranks alone.
const SGLANG_PREFIX = String.raw`\[(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]\n]{0,80}|[A-Z]{2}\d{1,5}(?: [A-Z]{2}\d{1,5}){0,4})\] `;
const VLLM_PREFIX = String.raw`(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? \[[\w./-]{1,120}:\d{1,6}\] `;
// A docker compose service prefix (`svc-1  | `) may come first: `docker compose logs` writes it before every line.
const COMPOSE = String.raw`(?:[\w.-]{1,64} {1,16}\| )?`;
const TRACING_TIME = String.raw`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d{1,9})?Z? {1,2}`;
const TRACING_LEVEL = String.raw`(?:ERROR|WARN|INFO|DEBUG|TRACE) `;
const TRACING_HEAD = `${TRACING_TIME}${TRACING_LEVEL}`;
const TRTLLM_DATE = String.raw`\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] `;
const TRTLLM_TAG = String.raw`(?:\[TRT-LLM\](?: \[(?:MPI_Rank|RANK) \d{1,6}\])? \[[FEWIV]\]|\[TensorRT-LLM\](?:\[RANK \d{1,6}\])?\[(?:ERROR|WARNING|INFO|DEBUG|VERBOSE|INTERNAL ERROR)\]) `;
const TRTLLM_PREFIX = `(?:${TRTLLM_DATE})?${TRTLLM_TAG}`;
const LLAMACPP_PREFIX = String.raw`(?:\d{1,6}\.\d\d\.\d{3}\.\d{3} )?(?:[IWED] )?`;
const LITELLM_PREFIX = String.raw`\d\d:\d\d:\d\d - LiteLLM(?: Proxy| Router)?:(?:ERROR|WARNING|INFO|DEBUG|CRITICAL): [\w.-]{1,120}:\d{1,6} - `;

export const LOGGERS: Record<LoggerName, EngineLogger> = {
  sglang: {
    prefix: new RegExp(`${SGLANG_PREFIX}$`),
    record: new RegExp(SGLANG_PREFIX),
    continuation: 'unprefixed',
  },
  vllm: { prefix: new RegExp(`${VLLM_PREFIX}$`), record: new RegExp(VLLM_PREFIX), continuation: 'repeated' },
  // The record's head, then its spans, target and file (each ends in `: `); the message follows one of them.
  tracing: {
    // Public reports often quote the lines without their time: the level at the line's start is kept as the head.
    prefix: new RegExp(`^${COMPOSE}(?:${TRACING_TIME})?${TRACING_LEVEL}(?:[^\n]{0,400}?: )?$`),
    record: new RegExp(TRACING_HEAD),
    continuation: 'unprefixed',
  },
  // The date and the tag are each optional before a match (a rule may match the tag itself: the traceback record).
  trtllm: {
    prefix: new RegExp(`^${COMPOSE}(?:${TRTLLM_DATE})?(?:${TRTLLM_TAG})?$`),
    record: new RegExp(TRTLLM_PREFIX),
    continuation: 'unprefixed',
  },
  // No prefix at all by default: the match starts the line (a container's wrapper is gone by then).
  llamacpp: {
    prefix: new RegExp(`^${COMPOSE}${LLAMACPP_PREFIX}$`),
    record: /^(?:\d{1,6}\.\d\d\.\d{3}\.\d{3} )?(?:[IWED] )?(?:srv|slot|que|res) {1,2}/,
    continuation: 'repeated',
  },
  litellm: {
    prefix: new RegExp(`^${COMPOSE}${LITELLM_PREFIX}$`),
    record: new RegExp(LITELLM_PREFIX),
    continuation: 'unprefixed',
  },
};

// The process or rank a line names, in its prefix: vLLM `(EngineCore_DP0 pid=413) `, torch `[rank1]:`, SGLang's
// `[time DP1 TP1 EP1]` part after the time. Each alternative is bounded.
const PROCESS =
  /\((?<proc>[\w.-]{1,64} pid=\d{1,10})\) |\[(?<rank>rank\d{1,6})\]:|^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? (?<par>[A-Z]{2}\d{1,5}(?: [A-Z]{2}\d{1,5}){0,4})\]/;

/** The process or rank prefix of a line ('' when it names none); looked for in its first 160 characters. */
export function processKey(line: string): string {
  const m = PROCESS.exec(line.length > 160 ? line.slice(0, 160) : line);
  if (!m?.groups) return '';
  return m.groups.proc ?? m.groups.rank ?? m.groups.par ?? '';
}
