// The typed signals that sources (logs, probes, engine scrapes, file watches) hand to the detector. Sources
// only produce these; the detector only consumes them (docs/design.md#principles, 5: pure core, I/O at the
// edges).

import type { ConnKind, LogEventClass, ProbeKind, ProbeResultClass } from './vocabulary.js';
import type { NodeSignal } from './node-signals.js';

// The kinds, results and classes are the vocabulary's (src/core/vocabulary.ts), re-exported for the sources.
export type { ConnKind, LogEventClass, ProbeKind, ProbeResultClass };

export type Severity = 'info' | 'warning' | 'critical';

export type TimeoutPhase = 'connect' | 'headers' | 'first_token' | 'stream';

/** A log line (or multi-line group) that matched a rule. */
export interface LogEventSignal {
  kind: 'log';
  target: string;
  service: string;
  rule: string;
  /**
   * The rule's class (thread_death, kv_bootstrap_dead, abort, …; `custom` for a user rule without one): what the
   * line means, not which rule. The classifier keys on it, as the alerts do.
   */
  class: LogEventClass;
  /** The rule is the user's own (config `rules:`), not a built-in pack's: it ranks below them as a diagnosis. */
  user?: boolean;
  severity: Severity;
  /** The matched line (for multi-line rules, the lines joined with \n), already length-capped. */
  line: string;
  file: string;
  /** Byte offset of the start of the line in the file. */
  offset: number;
  /**
   * Unix ms: the line's own time when it was in the file before we opened it (a restart's catch-up), else
   * when it was read (stderr tracebacks carry no timestamp of their own).
   */
  time: number;
  /** The event's identity across restarts (src/sources/logs/event-ref.ts); journaled with critical lines. */
  ref?: string;
  /** Named capture groups of the rule (e.g. thread target, exception, reason). */
  fields: Record<string, string>;
  /**
   * The incident the event stands for (rules sharing an incident key within a time window): its members, how many
   * matches it absorbed, and the final exception of its traceback chain. It grows while the incident is open.
   */
  incident?: LogIncident;
  /** One request's line repeated past the loop limit: this event is the loop. */
  loop?: { count: number; seconds: number };
}

/** A match folded into an incident already raised (src/sources/logs/rules/matcher.ts): where it is, and whose event it belongs to. */
export interface LogMemberMatch {
  service: string;
  file: string;
  offset: number;
  time: number;
  rule: string;
  severity: Severity;
  line: string;
  /** The rule of the incident's event. */
  memberOf: string;
}

/** What an incident's event carries (src/sources/logs/rules/incidents.ts Incident has this shape). */
export interface LogIncident {
  members: readonly { rule: string; lineNo: number; time: number; line: string; process: string }[];
  absorbed: number;
  rootCause?: { exception: string; message: string; rule: string };
}

/** `Type: message` of an incident's root cause, capped; undefined without one. */
export function rootCauseText(i: LogIncident | undefined, max = 300): string | undefined {
  const c = i?.rootCause;
  if (c === undefined) return undefined;
  const text = c.message === '' ? c.exception : `${c.exception}: ${c.message}`;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The outcome of one probe run against one hop over one connection kind. */
export interface ProbeResultSignal {
  kind: 'probe';
  target: string;
  probe: string;
  probeKind: ProbeKind;
  endpoint: string;
  conn: ConnKind;
  result: ProbeResultClass;
  phase?: TimeoutPhase;
  status?: number;
  /** Unix ms when the run started. */
  start: number;
  /** A random id per run: the exemplar on the probe histograms (OpenMetrics) and in /api/probes, to find the run. */
  runId?: string;
  durationMs: number;
  /**
   * Of durationMs, the time the daemon's own event loop could not run (src/lib/loop-lag.ts): our slowness on a loaded
   * host, not the engine's. The slot's latency distribution is judged without it (reduce/progress.ts).
   */
  loopLostMs?: number;
  ttftMs?: number;
  /**
   * Of ttftMs, the time the daemon's own event loop could not run before the first token was read: a first token
   * that sat unread in the socket is not the engine's lateness. The TTFT objective is judged without it
   * (reduce/slots.ts), as the latency distribution is without loopLostMs.
   */
  ttftLoopLostMs?: number;
  /** Time to open a new connection (absent when an open keep-alive connection was reused). */
  connectMs?: number;
  /** Time from the start of the run to the response headers. */
  headersMs?: number;
  /** True when the run went over an already open keep-alive connection. */
  reusedConnection?: boolean;
  /**
   * keep-alive runs: the connection was closed since the last run (the hop's idle timeout is shorter than the
   * probe interval), so a cheap request opened it first and the run went second on it.
   */
  primedConnection?: boolean;
  tokens?: number;
  tokensPerSecond?: number;
  /** Human-readable reason for a failure; never contains secrets. */
  error?: string;
  /** True when this run was a confirmation round started by the detector. */
  confirmation?: boolean;
  /** What the run checked, for the probe history: canary questions and answers, tool-call matrix cells. */
  detail?: ProbeDetail;
  /**
   * Request ids the run sent (body `rid`, header `X-Request-Id`): the engine logs them on an abort, and the
   * detector discounts the aborts its own timed-out or cut probes caused.
   */
  requestIds?: string[];
}

/** One known-answer check of a canary run (texts capped and redacted). */
export interface AnswerCheck {
  question: string;
  expected: string;
  actual: string;
  ok: boolean;
  /** The wrong answer is the expected answer of another request that ran at the same time. */
  mixup?: string;
  /** Engine tokens the request cost (prompt + completion, from the usage chunk). */
  tokens?: number;
}

/** One cell of the tool-call matrix (a tool_choice mode, streamed or not). */
export interface MatrixCell {
  cell: string;
  result: Exclude<ProbeResultClass, 'skipped_overlap' | 'timeout'>;
  /** The cell's own HTTP status, when its response headers arrived. */
  status?: number;
  error?: string;
}

/** One round of a conversation probe run. */
export interface RoundTiming {
  /** 1-based. */
  round: number;
  /** Time from sending the round to its first token. */
  ttftMs?: number;
  /** usage.prompt_tokens of the round (the context so far). */
  promptTokens?: number;
}

export interface ProbeDetail {
  answers?: AnswerCheck[];
  cells?: MatrixCell[];
  rounds?: RoundTiming[];
}

/** A probe run that has not finished yet (the scheduler's view, handed to the detector on each tick). */
export interface InflightRun {
  probe: string;
  endpoint: string;
  conn: ConnKind;
  /** Unix ms. */
  startedAt: number;
  /** Time to the first token, once it arrived (completion kinds). */
  firstTokenMs?: number;
  /** Request ids the run has sent so far (see ProbeResultSignal.requestIds). */
  requestIds?: string[];
}

/**
 * One data-parallel rank of an engine, from a source that reports every rank on its own cadence whether or not it
 * works (vLLM's per-engine stats line, SGLang/vLLM metrics with a dp_rank/engine label): a rank that holds work
 * and makes none while its siblings progress is stalled on its own.
 */
export interface RankSample {
  running?: number;
  /** Monotonic generated-token counter of the rank (metrics). */
  generatedTokensTotal?: number;
  /** The sample itself says whether tokens were produced (a stats line); absent: judged on the counter. */
  progress?: boolean;
}

/** Engine load and progress, from a scraped /metrics or from Prefill/Decode batch log lines. */
export interface EngineSignal {
  kind: 'engine';
  target: string;
  service: string;
  source: 'metrics' | 'log';
  time: number;
  running?: number;
  queued?: number;
  transferQueue?: number;
  preallocQueue?: number;
  /** Monotonic counters of progress (finished requests, generated tokens); absent when the source has none. */
  finishedTotal?: number;
  generatedTokensTotal?: number;
  /**
   * Monotonic count of the engine's decode steps (llama.cpp `llamacpp:n_decode_total`): it moves with every step,
   * where llama.cpp's token counter moves only when a request ends, so a slot held by a long generation (or by a
   * client that never reads its stream) still shows progress.
   */
  decodeStepsTotal?: number;
  genThroughput?: number;
  tokenUsage?: number;
  /** Failure counters from /metrics (monotonic; absent when the engine exports none). */
  abortedTotal?: number;
  kvTransferFailedTotal?: number;
  kvExpiredTotal?: number;
  /** Preempted (vLLM) or retracted (SGLang) requests. */
  preemptedTotal?: number;
  /**
   * KV transfer latency, ms: the mean over the last scrape interval (SGLang's histogram, from the deltas of its
   * `_sum` and `_count`), or the latest value of the older gauge.
   */
  kvTransferLatencyMs?: number;
  /** SGLang's `sglang:kv_transfer_latency_ms` histogram, monotonic `_sum` (ms) and `_count` (transfers). */
  kvTransferLatencySumMs?: number;
  kvTransferLatencyCount?: number;
  /**
   * vLLM's `vllm:inter_token_latency_seconds` histogram, monotonic `_sum` (seconds) and `_count` (tokens after each
   * request's first): the mean time between a request's tokens over an interval, whatever came and went in it.
   */
  interTokenLatencySumSeconds?: number;
  interTokenLatencyCount?: number;
  /**
   * The engine's queue-time histogram, monotonic `_sum` (seconds) and `_count`: vLLM's
   * `vllm:request_queue_time_seconds` (observed as each request finishes), SGLang's `sglang:queue_time_seconds`
   * (observed as a prefill batch admits it). The mean wait of the requests that left the queue over an interval.
   */
  queueTimeSumSeconds?: number;
  queueTimeCount?: number;
  /** vLLM: every engine reports itself asleep (`vllm:engine_sleep_state{sleep_state="awake"}` 0). */
  sleeping?: boolean;
  /** Router: workers whose health is 1 / not 1, and workers whose circuit breaker is open. */
  workersHealthy?: number;
  workersUnhealthy?: number;
  circuitOpen?: number;
  /**
   * Router: HTTP requests in flight (smg_http_inflight_request_age_count summed over its age buckets). Set only by
   * the router mapping, so the detector knows this service is a router.
   */
  routerInflight?: number;
  /**
   * Router: a lower bound on the age of its oldest request in flight, ms (the `gt` bound of the oldest non-empty
   * `smg_http_inflight_request_age_count` bucket); 0 when nothing is in flight.
   */
  routerOldestInflightMs?: number;
  /** Per data-parallel rank, keyed by rank (see RankSample); only the ranks this signal reports. */
  ranks?: Record<string, RankSample>;
  scrapeOk?: boolean;
  /**
   * Log signals only: whether the line reports work done. SGLang batch lines do (printed only when a batch
   * ran); vLLM's stats line is printed every interval and says 0 tokens/s when nothing ran. Absent: false (a
   * rule's `extract` of a gauge, say, is no evidence that tokens came out).
   */
  progress?: boolean;
}

/** A watched file changed (serve script, unit file, env file). */
export interface FileChangeSignal {
  kind: 'file_change';
  target: string;
  path: string;
  time: number;
  /** sha256 of the new content, or null when the file was deleted. */
  hash: string | null;
  diff: string;
}

export type { NodeSignal } from './node-signals.js';

export type Signal = LogEventSignal | ProbeResultSignal | EngineSignal | FileChangeSignal | NodeSignal;
