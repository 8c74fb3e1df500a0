// The simulated vLLM V1 engine core and the API server's view of it: a continuous-batching scheduler (one
// token per running request per step), the scheduler stats the API server last received (what /metrics and
// the stats line show), the counters, and the two ways a core stops: it dies (EngineDeadError) or it hangs
// in a shared-memory broadcast (steps never return; the API server's gauges freeze).
import type { LogFile } from '../logfile.js';
import * as fmt from './logfmt.js';
import {
  newCounters,
  observeItl,
  type FinishReason,
  type VllmCounters,
  type VllmGauges,
} from './metrics-text.js';

export interface EngineParams {
  /** Time one decode step takes (ms) before faults scale it. */
  stepMs: number;
  /** --max-num-seqs analogue. */
  maxRunning: number;
  /** KV cache size in tokens (for the usage gauge). */
  kvTokens: number;
  /** VLLM_LOG_STATS_INTERVAL analogue (ms; upstream default 10 s). */
  statsIntervalMs: number;
}

export const DEFAULT_ENGINE: EngineParams = {
  stepMs: 10,
  maxRunning: 64,
  kvTokens: 65_536,
  statsIntervalMs: 10_000,
};

export interface RequestCallbacks {
  token(index: number): void;
  finish(): void;
  fail(message: string): void;
}

export interface EngineRequest {
  id: string;
  promptTokens: number;
  maxTokens: number;
  generated: number;
  /** When its last token came out (ms), for the inter-token latency histogram. */
  lastTokenAt?: number;
  prefilled: boolean;
  done: boolean;
  /** What the request ends with when it reaches maxTokens. */
  finishReason: 'stop' | 'length';
  cb: RequestCallbacks;
}

export interface EngineHooks {
  stepFactor(): number;
  /** The NIXL connector's KV read for this request fails (nixl_transfer_failure). */
  failsKvLoad(): boolean;
  /** The loop is paused this long more (ms) before its next step (recurring_stall); 0: it steps. */
  pauseMs?(): number;
  /** A cap on the batch below params.maxRunning (saturation). */
  maxRunning?(): number | undefined;
  log: LogFile;
  pids: { api: number; core: number };
}

export class EngineDead extends Error {}

// The decode's and the prefill's NIXL engine ids (uuid4 strings, kv_transfer_config.engine_id).
const NIXL_ENGINE_ID = '3f1c2a9e-5b7d-4e21-9c0a-6d8e7f1b2c34';
const NIXL_REMOTE_ENGINE_ID = 'a7e4d2c1-0b9f-4a36-8e5d-2c1b0f9a8e7d';

export class VllmEngine {
  private running: EngineRequest[] = [];
  private waiting: EngineRequest[] = [];
  readonly counters: VllmCounters = newCounters();
  /** The scheduler stats the API server last received (frozen while the core does not step). */
  published: VllmGauges = { running: 0, waiting: 0, kvUsage: 0 };
  dead = false;
  hung = false;
  private stepTimer: NodeJS.Timeout | undefined;
  private shmTimer: NodeJS.Timeout | undefined;
  private readonly statsTimer: NodeJS.Timeout;
  private interval = { prompt: 0, gen: 0, preemptions: 0, startedAt: Date.now() };
  private last = { prompt: 0, gen: 0 };

  constructor(
    readonly params: EngineParams,
    private readonly hooks: EngineHooks,
  ) {
    this.statsTimer = setInterval(() => this.logStats(), params.statsIntervalMs);
    this.statsTimer.unref();
  }

  get apiPid(): number {
    return this.hooks.pids.api;
  }

  get inflight(): number {
    return this.running.length + this.waiting.length;
  }

  submit(
    id: string,
    promptTokens: number,
    maxTokens: number,
    finishReason: 'stop' | 'length',
    cb: RequestCallbacks,
  ): EngineRequest {
    if (this.dead) throw new EngineDead(fmt.ENGINE_DEAD_MESSAGE);
    const r: EngineRequest = {
      id,
      promptTokens,
      maxTokens,
      generated: 0,
      prefilled: false,
      done: false,
      finishReason,
      cb,
    };
    this.waiting.push(r);
    this.schedule();
    return r;
  }

  /** The client left: the request is aborted (finished_reason "abort"). */
  abort(r: EngineRequest): void {
    if (r.done) return;
    r.done = true;
    this.running = this.running.filter((x) => x !== r);
    this.waiting = this.waiting.filter((x) => x !== r);
    // Counted by the output processor in the API server, which lives on while the core hangs.
    this.counters.finished.abort++;
  }

  private schedule(): void {
    if (this.stepTimer || this.dead || this.hung || this.inflight === 0) return;
    const ms = Math.max(this.params.stepMs * this.hooks.stepFactor(), this.hooks.pauseMs?.() ?? 0);
    this.stepTimer = setTimeout(() => {
      this.stepTimer = undefined;
      this.step();
      this.schedule();
    }, ms);
  }

  private step(): void {
    const cap = Math.min(this.params.maxRunning, this.hooks.maxRunning?.() ?? Infinity);
    while (this.running.length < cap && this.waiting.length > 0) this.running.push(this.waiting.shift()!);
    for (const r of [...this.running]) {
      if (!r.prefilled) {
        r.prefilled = true;
        if (this.hooks.failsKvLoad()) this.kvLoadFailed(r);
        this.counters.promptTokens += r.promptTokens;
        this.counters.prefixQueries += r.promptTokens;
        this.interval.prompt += r.promptTokens;
      }
      if (r.generated < r.maxTokens) {
        const now = Date.now();
        if (r.lastTokenAt !== undefined) observeItl(this.counters, (now - r.lastTokenAt) / 1000);
        r.lastTokenAt = now;
        r.cb.token(r.generated);
        r.generated++;
        this.counters.generationTokens++;
        this.interval.gen++;
      }
      if (r.generated >= r.maxTokens) {
        r.done = true;
        this.running = this.running.filter((x) => x !== r);
        this.counters.finished[r.finishReason]++;
        r.cb.finish();
      }
    }
    this.publish();
  }

  /**
   * The request's KV read from the prefill failed: the worker logs it, the connector counts it, and the
   * scheduler recomputes the prefill locally (the prompt tokens count as processed here).
   */
  private kvLoadFailed(r: EngineRequest): void {
    this.counters.nixlFailedTransfers = (this.counters.nixlFailedTransfers ?? 0) + 1;
    this.write(
      fmt.vllmRecord(
        new Date(),
        this.site('EngineCore_DP0', 'worker.py', 1489),
        'ERROR',
        fmt.nixlTransferFailure({
          requestId: r.id,
          engineId: NIXL_ENGINE_ID,
          remoteEngineId: NIXL_REMOTE_ENGINE_ID,
          remoteHost: '127.0.0.1',
          remotePort: 5600,
          blocks: Math.max(1, Math.ceil(r.promptTokens / 16)),
        }),
      ),
    );
  }

  private publish(): void {
    const used = this.running.reduce((s, r) => s + r.promptTokens + r.generated, 0);
    this.published = {
      running: this.running.length,
      waiting: this.waiting.length,
      kvUsage: Math.min(1, used / this.params.kvTokens),
    };
  }

  /** vllm/v1/metrics/loggers.py LoggingStatLogger.log, called every VLLM_LOG_STATS_INTERVAL. */
  private logStats(): void {
    const now = Date.now();
    const secs = Math.max(0.001, (now - this.interval.startedAt) / 1000);
    const prompt = this.interval.prompt / secs;
    const gen = this.interval.gen / secs;
    const idle = !(prompt || gen || this.last.prompt || this.last.gen);
    this.last = { prompt, gen };
    const preemptions = this.interval.preemptions;
    this.interval = { prompt: 0, gen: 0, preemptions: 0, startedAt: now };
    // An idle engine logs it at DEBUG, which the default INFO level drops.
    if (idle) return;
    const msg = fmt.statsMessage({
      engine: 0,
      promptThroughput: prompt,
      genThroughput: gen,
      running: this.published.running,
      waiting: this.published.waiting,
      kvUsage: this.published.kvUsage,
      prefixHitRate: 0,
      preemptions,
    });
    this.write(fmt.vllmRecord(new Date(), this.site('APIServer', 'loggers.py', 257), 'INFO', msg));
  }

  /** The core dies: its fatal traceback, the API server's EngineDeadError, every request fails. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.setHung(false, 0);
    clearTimeout(this.stepTimer);
    this.stepTimer = undefined;
    const at = new Date();
    this.write(
      fmt.vllmRecord(at, this.site('EngineCore_DP0', 'core.py', 868), 'ERROR', fmt.engineCoreFatalRecord()),
    );
    this.write(
      fmt.vllmRecord(
        at,
        this.site('APIServer', 'async_llm.py', 541),
        'ERROR',
        fmt.outputHandlerFailedRecord(),
      ),
    );
    const failed = [...this.running, ...this.waiting];
    this.running = [];
    this.waiting = [];
    for (const r of failed) {
      r.done = true;
      // output_processor.propagate_error: the request ends in error, not as a finished request.
      r.cb.fail(fmt.ENGINE_DEAD_MESSAGE);
    }
  }

  /** A rank stops reading the broadcast queue: the core's step blocks and it logs the wait. */
  setHung(hung: boolean, warningIntervalMs: number): void {
    this.hung = hung && !this.dead;
    clearInterval(this.shmTimer);
    this.shmTimer = undefined;
    if (this.hung) {
      clearTimeout(this.stepTimer);
      this.stepTimer = undefined;
      const seconds = Math.max(1, Math.round(warningIntervalMs / 1000));
      // A core stuck in a collective (metrics_frozen) logs nothing: no warning timer.
      if (warningIntervalMs > 0)
        this.shmTimer = setInterval(
          () =>
            this.write(
              fmt.vllmRecord(
                new Date(),
                this.site('EngineCore_DP0', 'shm_broadcast.py', 542),
                'INFO',
                fmt.shmBroadcastWait(seconds),
              ),
            ),
          warningIntervalMs,
        );
    } else this.schedule();
  }

  site(proc: fmt.VllmProcess, file: string, line: number): fmt.Site {
    return { proc, pid: proc === 'APIServer' ? this.hooks.pids.api : this.hooks.pids.core, file, line };
  }

  write(lines: string[]): void {
    this.hooks.log.write(lines);
  }

  /** Stops every timer; in-flight requests are left to the server's socket teardown. */
  stop(): void {
    clearTimeout(this.stepTimer);
    clearInterval(this.shmTimer);
    clearInterval(this.statsTimer);
    this.stepTimer = undefined;
    this.shmTimer = undefined;
  }
}

export type { FinishReason };
