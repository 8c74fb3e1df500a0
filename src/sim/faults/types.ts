// The contract between the simulator and its faults: each fault is one file exporting a FaultDef; the
// simulator calls the optional hooks at the points where the real engine would misbehave.

export type FaultName =
  | 'nixl_abort_unhandled'
  | 'decode_stall'
  | 'keepalive_stall'
  | 'toolcall_leak'
  | 'slow'
  | 'crash'
  | 'health_fail'
  | 'health_503'
  | 'kv_corruption'
  | 'grammar_stall'
  | 'intermittent_hang'
  | 'queue_leak'
  | 'router_stuck'
  | 'engine_core_death'
  | 'shm_broadcast_hang'
  | 'nixl_transfer_failure'
  | 'rank_stall'
  | 'long_prompt_hang'
  | 'toolcall_args_corrupt'
  | 'reasoning_garbage'
  | 'context_ttft_growth'
  | 'kv_transfer_failure'
  | 'crawl'
  | 'orphaned_requests'
  | 'stranded_queue_entry'
  | 'pd_half_failed'
  | 'queue_starvation'
  | 'reasoning_runaway'
  | 'toolcall_in_reasoning'
  | 'router_circuit_open'
  | 'metrics_frozen'
  | 'recurring_stall'
  | 'requests_lost'
  | 'saturation';

/** Which simulator a fault works in: `sim` (SGLang PD, the default) or `sim --engine vllm`. */
export type SimEngine = 'sglang' | 'vllm';
export const SIM_ENGINES: readonly SimEngine[] = ['sglang', 'vllm'];

export type FaultParams = Record<string, number | string>;
export type ServiceName = 'prefill' | 'decode' | 'router' | 'proxy';
export const SERVICE_NAMES: readonly ServiceName[] = ['prefill', 'decode', 'router', 'proxy'];

/** A tool call the model "decided" to make, before it is rendered as structured deltas or as leaked markup. */
export interface ToolCallPlan {
  name: string;
  arguments: string;
}

/** What the vLLM simulator lets its faults do (src/sim/vllm). */
export interface VllmFaultControl {
  /** The engine core process dies with a fatal error; requests fail with EngineDeadError from then on. */
  killEngineCore(apiServerStays: boolean): void;
  /** A worker stops reading the shared-memory broadcast queue: the engine core's step never returns. */
  setShmHang(hung: boolean, warningIntervalMs: number): void;
  /** The engine core's step never returns and it logs nothing (stuck in a collective): the gauges freeze. */
  setCoreHung(hung: boolean): void;
}

/** What a fault may do to the running simulator. */
export interface FaultControl {
  /** The simulator the fault runs in (default sglang); a fault whose `engines` leave it out is refused. */
  engine?: SimEngine;
  /** Set by the vLLM simulator only. */
  vllm?: VllmFaultControl;
  hasProxy: boolean;
  killBootstrapThread(): void;
  setDecodeStalled(stalled: boolean): void;
  crashService(service: ServiceName): Promise<void>;
  restartService(service: ServiceName): Promise<void>;
  /** Releases requests the proxy was holding (keepalive_stall). */
  releaseHeld(): void;
  /** Releases structured-output requests waiting on the grammar backend (grammar_stall). */
  releaseStructured(): void;
  /**
   * SGLang only: `n` requests whose client is gone and whose abort never came: they run on in decode and stay in
   * flight at the router, ageing (from `agedMs` old when they appear). Returns what ends them.
   */
  submitOrphans?(n: number, agedMs: number): () => void;
}

/** One parameter a fault takes: `sim --help`, the control API and the README's fault list are made from these. */
export interface FaultParamSpec {
  default: number | string;
  /** One line: what it does and the values it takes. */
  help: string;
}

export interface FaultDef {
  name: FaultName;
  /** The simulators it applies to (default: the SGLang one only). */
  engines?: readonly SimEngine[];
  /** One line, shown by `wedgewatch sim --help` and GET /faults. */
  summary: string;
  /** Every parameter the fault reads (an unknown one is refused, so a typo cannot go unnoticed). */
  params: Record<string, FaultParamSpec>;
  /** Returns a problem text when the params (defaults merged) cannot work. */
  validate?(params: FaultParams, ctl: FaultControl): string | undefined;
  onEnable?(ctl: FaultControl, params: FaultParams): void | Promise<void>;
  onDisable?(ctl: FaultControl, params: FaultParams): void | Promise<void>;
  /** Multiplies the decode step (and prefill forward) time. */
  stepFactor?(params: FaultParams): number;
  /** The service's /health runs a real 1-token generation (non-PD SGLang) instead of answering at once. */
  healthGenerates?(service: ServiceName, params: FaultParams): boolean;
  /** Overrides a service's /health status. */
  healthStatus?(service: ServiceName, params: FaultParams): number | undefined;
  /** Prefill's bootstrap loop received the unguarded [ABORT, room, ip, port] frame. */
  onAbortFrame?(ctl: FaultControl, params: FaultParams): void;
  /** The proxy hop holds responses to the 2nd+ request on one connection. */
  stallsReusedConnection?(params: FaultParams): boolean;
  /**
   * Extra wait (ms) before a request on a reused client connection (the 2nd+ on it) reaches the scheduler, given
   * its prompt tokens: it shows as time to first token. Infinity holds it until the client leaves or the fault is
   * disabled. Fresh connections never wait.
   */
  reusedConnectionDelayMs?(promptTokens: number, params: FaultParams): number;
  /** Renders tool calls as raw model markup for `content` instead of structured tool_calls. */
  leakToolCalls?(calls: ToolCallPlan[], params: FaultParams, toolChoice: unknown): string | undefined;
  /** The request's tool_choice is ignored: text until max_tokens, no tool call. */
  ignoresToolChoice?(toolChoice: unknown, params: FaultParams): boolean;
  /**
   * Decode produces wrong tokens: a wrong answer in place of `answer`. `recent` holds other requests' recent
   * answers (newest last), for a KV mix-up that hands one request another's blocks.
   */
  corruptAnswer?(answer: string, recent: readonly string[], params: FaultParams): string | undefined;
  /** A request with this many prompt tokens is held before prefill: no token, no abort, until released. */
  holdsPrompt?(promptTokens: number, params: FaultParams): boolean;
  /** The streamed argument fragments of a tool call, as a broken streaming parser sends them (undefined: intact). */
  corruptStreamedArgs?(fragments: readonly string[], params: FaultParams): string[] | undefined;
  /** The model's text comes as garbage in reasoning_content, content empty, until max_tokens. */
  reasoningGarbage?(params: FaultParams): boolean;
  /** tool_choice "none" is ignored: the model calls the tool anyway. */
  callsDespiteNone?(params: FaultParams): boolean;
  /** After a text answer the model runs on to max_tokens: a `</think>` loop, or a reasoning loop. */
  reasoningRunaway?(params: FaultParams): 'think_loop' | 'reasoning_loop' | undefined;
  /** Tool calls written inside the thinking: their raw markup in the reasoning field, no tool_calls. */
  callsInReasoning?(calls: ToolCallPlan[], params: FaultParams): string | undefined;
  /** Structured-output (response_format) requests wait on the grammar backend and never start. */
  stallsStructured?(params: FaultParams): boolean;
  /**
   * The router holds its `seq`-th chat request (1-based) without forwarding it: no tokens, no abort, until the
   * client leaves or the fault is disabled (which releases it to run).
   */
  holdsRequest?(seq: number, params: FaultParams): boolean;
  /** The router shuts out a worker that serves: its circuit breaker open, or its health check failing. */
  routerShutsOut?(role: 'prefill' | 'decode', params: FaultParams): 'open' | 'unhealthy' | undefined;
  /** Entries leaked into the service's PD bootstrap queue: its gauge shows them, nothing runs them. */
  leakedQueue?(service: ServiceName, params: FaultParams): number;
  /** vLLM: a stuck data-parallel engine whose frozen per-engine series /metrics shows beside engine 0's. */
  stalledEngine?(params: FaultParams): { engine: string; running: number };
  /**
   * vLLM: the scheduler admits nothing from its waiting queue; `background` other requests keep running (replaced
   * as they finish) and `queued` others wait beside the clients' own.
   */
  starvesQueue?(params: FaultParams): { background: number; queued: number } | undefined;
  /** vLLM: this request's KV load through the NIXL connector fails (the engine recomputes its prefill). */
  failsKvLoad?(params: FaultParams): boolean;
  /** SGLang PD: this request's KV transfer from prefill to decode fails (KVTransferError on both legs). */
  failsKvTransfer?(params: FaultParams): boolean;
  /** SGLang PD: entries stranded in the service's transfer queue: its gauge and batch lines count them. */
  strandedQueue?(service: ServiceName, params: FaultParams): number;
  /** vLLM: /metrics does not answer (held until the scraper gives up). */
  metricsAbsent?(params: FaultParams): boolean;
  /**
   * vLLM: the engine loop is paused for this many ms more, `sinceEnabledMs` after the fault was enabled (0: it
   * steps). A paused loop makes no token and publishes nothing; it resumes by itself.
   */
  pauseMs?(sinceEnabledMs: number, params: FaultParams): number;
  /**
   * vLLM: the API server accepts its `seq`-th chat request (1-based) and never hands it to the engine: no token,
   * no error, until the client leaves.
   */
  losesRequest?(seq: number, params: FaultParams): boolean;
  /** vLLM: the scheduler runs at most this many requests at once (--max-num-seqs); the rest wait. */
  maxRunning?(params: FaultParams): number | undefined;
}

export function serviceParam(params: FaultParams, allowed: readonly ServiceName[]): string | undefined {
  const s = String(params.service);
  return allowed.includes(s as ServiceName)
    ? undefined
    : `service must be one of ${allowed.join(', ')} (got ${JSON.stringify(params.service)})`;
}

/** The simulators a fault applies to. */
export function faultEngines(def: FaultDef): readonly SimEngine[] {
  return def.engines ?? ['sglang'];
}

/** The params a fault runs with when none are given. */
export function faultDefaults(def: FaultDef): FaultParams {
  return Object.fromEntries(Object.entries(def.params).map(([k, p]) => [k, p.default]));
}
