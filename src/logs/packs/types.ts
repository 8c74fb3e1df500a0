import type { LogPack, RuleConfig } from '../../config/schema.js';

/** Periodic engine lines a pack turns into engine gauges (see ../engine-lines.ts). */
export type EngineLineKind = 'sglang_batch' | 'vllm_stats';

/**
 * What a built-in rule's event means, as a bounded label (alerts and the classifier select on it, never
 * on rule names). One incident class per consequence, not per wording.
 */
export const RULE_CLASSES = [
  'kv_bootstrap_dead', // the PD bootstrap thread died: no new request gets its KV cache (wedge)
  'thread_death', // some other worker thread died; the process lives on
  'engine_death', // a scheduler/manager process or the whole server died or is being killed
  'engine_death', // vLLM engine core or a worker process died; /health answers 503
  'watchdog_timeout', // an engine watchdog fired (soft: a dump; hard: it kills the server)
  'collective_timeout', // NCCL/gloo collective timed out (a rank hung)
  'shm_hang', // vLLM shared-memory broadcast found no free block: a process is hanging
  'abort', // a request was aborted (client disconnect, AbortReq)
  'transfer_failure', // one request's KV transfer or handshake failed
  'transfer_timeout', // a request timed out waiting for bootstrap or KV transfer
  'connection_lost', // the decode side lost the prefill bootstrap server
  'retract', // KV cache pool full: requests retracted (memory pressure)
  'oom', // out of device memory
  'grammar', // structured-output grammar failed to advance
  'tool_call_parse_error', // a tool-call parser failed and returned raw markup
  'health_check_failed', // the engine's own health check failed
  'corruption', // the engine detected corrupted state
  'startup_info', // informational startup markers
] as const;
export type RuleClass = (typeof RULE_CLASSES)[number];

/** A built-in rule: a user-rule shape plus what the pack knows about it. */
export interface PackRule extends RuleConfig {
  class: RuleClass;
  /** Upstream file(s) and the versions the wording applies to (also said in a comment next to the rule). */
  upstream: string;
  /**
   * Rules sharing a key describe one incident: a multi-line record of that key absorbs the others' matches on
   * its own lines (a thread-death record and the GUARD assertion that ends it are one event).
   */
  incident?: string;
  /**
   * Named group holding the request id: per-rank copies of one request's line (TP0..TP7) count once.
   */
  perRequest?: string;
  /**
   * A multi-line rule whose header alone is decisive: when the closing line never comes (the window ran out,
   * or the input ended or went idle) the event is still raised, with the header's fields.
   */
  emitUnclosed?: boolean;
}

export interface RulePack {
  name: LogPack;
  rules: PackRule[];
  engineLines: EngineLineKind[];
}
