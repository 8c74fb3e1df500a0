// The record prefixes the engines' loggers print, and the process or rank a line names. A built-in rule for a
// message an engine prints through its logger requires that logger's prefix right before the match (packs/types.ts
// `logger`): a continuation line of a multi-line message (user text printed raw) has none, so it is never a record.
//  - SGLang: `[%(asctime)s{prefix}] %(message)s`, prefix ` DP0 TP0 EP0`, ` PP1`… (python/sglang/srt/utils/common.py
//    configure_logger @ a343daaf); continuation lines of a message carry no prefix.
//  - vLLM: `%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s` (vllm/logger.py _FORMAT @ a6f0308),
//    repeated on every line of a message by NewLineFormatter (vllm/logging_utils/formatter.py); each process's
//    output is prefixed `(EngineCore_DP0 pid=N) ` (vllm/utils decorate_logs).

export type LoggerName = 'sglang' | 'vllm';

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

export const LOGGERS: Record<LoggerName, EngineLogger> = {
  sglang: {
    prefix: new RegExp(`${SGLANG_PREFIX}$`),
    record: new RegExp(SGLANG_PREFIX),
    continuation: 'unprefixed',
  },
  vllm: { prefix: new RegExp(`${VLLM_PREFIX}$`), record: new RegExp(VLLM_PREFIX), continuation: 'repeated' },
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
