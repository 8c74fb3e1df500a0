// The batching model of a prefill/decode-disaggregated deployment: prefill's bootstrap queue (fed by a
// bootstrap-thread-like consumer), prefill forwards, KV transfer, then decode steps whose time grows with the
// batch (stepBaseMs + stepPerReqMs·batch), capped at maxRunning with the rest queued. Requests carry a sink
// that the HTTP layer turns into SSE chunks. All timers are tracked so stop() leaves nothing behind.
import type { LogFile } from './logfile.js';
import * as fmt from './logfmt.js';
import { newRid, newRoom } from './ids.js';

export interface ModelParams {
  stepBaseMs: number;
  stepPerReqMs: number;
  maxRunning: number;
  prefillMs: number;
  defaultMaxTokens: number;
}

export const DEFAULT_MODEL: ModelParams = {
  stepBaseMs: 10,
  stepPerReqMs: 0.3,
  maxRunning: 64,
  prefillMs: 5,
  defaultMaxTokens: 64,
};

/** SGLang's decode_log_interval default: one Decode batch line per 40 decode steps. */
const DECODE_LOG_INTERVAL = 40;
const MAX_PREFILL_BATCH = 32;
/** KV pool size used for the token usage ratios. */
const MAX_TOTAL_TOKENS = 262_144;
const HANDSHAKE_MS = 1;
const TRANSFER_MS = 1;

export interface RequestSink {
  /** One generated token (index from 0). */
  token(index: number): void;
  finish(): void;
  fail(message: string): void;
}

type Stage =
  | 'bootstrap'
  | 'prefill_wait'
  | 'prefill'
  | 'inflight'
  | 'decode_wait'
  | 'running'
  | 'done'
  | 'failed'
  | 'aborted';

export interface SimRequest {
  rid: string;
  room: number;
  promptTokens: number;
  outputTokens: number;
  generated: number;
  createdAt: number;
  stage: Stage;
  /** Still waiting for KV on the decode side (KVPoll.WaitingForInput). */
  awaitingKv: boolean;
  sink: RequestSink;
  bootstrapTimer?: NodeJS.Timeout;
  waitingTimer?: NodeJS.Timeout;
}

export interface SimEvent {
  at: number;
  // `server`: the vLLM simulator's API server (src/sim/vllm).
  service: 'prefill' | 'decode' | 'router' | 'proxy' | 'server' | 'sim';
  kind: string;
  message: string;
}

/** Which SGLang build the deployment imitates (log dialect) and its shape. */
export interface PdDialect {
  format: fmt.SglangFormat;
  /** TP ranks per engine: each rank's scheduler prints the per-request failure lines (batch lines: TP0 only). */
  tpRanks: number;
  /** SGLANG_DISAGGREGATION_HEARTBEAT_INTERVAL (current dialect; upstream default 5 s, at least 2 s). */
  heartbeatMs: number;
  /** SGLANG_DISAGGREGATION_HEARTBEAT_MAX_FAILURE (upstream default 2). */
  heartbeatFailures: number;
}

/** The mid-2025 dialect the simulator always spoke before: one TP rank, prefill loss noticed at once. */
export const LEGACY_DIALECT: PdDialect = {
  format: 'legacy',
  tpRanks: 1,
  heartbeatMs: 5_000,
  heartbeatFailures: 2,
};

export interface PdHooks {
  stepFactor(): number;
  /** Prefill's bootstrap socket received an ABORT frame. */
  abortFrame(): void;
  emit(ev: Omit<SimEvent, 'at'>): void;
  bootstrapAddr(): string;
  /** Entries a fault leaked into a service's bootstrap queue: its batch lines count them as /metrics does. */
  leakedQueue?(service: 'prefill' | 'decode'): number;
  /** A fault fails this request's KV transfer (kv_transfer_failure). */
  failsKvTransfer?(): boolean;
  /** Entries a fault stranded in a service's transfer queue: its batch lines and gauges count them. */
  strandedQueue?(service: 'prefill' | 'decode'): number;
}

/** Gauges as last published by a scheduler log call: they freeze when the scheduler stops logging. */
export interface Published {
  running: number;
  queued: number;
  usedTokens: number;
  tokenUsage: number;
  genThroughput: number;
  inputThroughput: number;
  prealloc: number;
  inflight: number;
  transfer: number;
}

export interface EngineCounters {
  requests: number;
  promptTokens: number;
  generationTokens: number;
  aborted: number;
  bootstrapFailed: number;
  transferFailed: number;
}

const zeroPublished = (): Published => ({
  running: 0,
  queued: 0,
  usedTokens: 0,
  tokenUsage: 0,
  genThroughput: 0,
  inputThroughput: 0,
  prealloc: 0,
  inflight: 0,
  transfer: 0,
});
const zeroCounters = (): EngineCounters => ({
  requests: 0,
  promptTokens: 0,
  generationTokens: 0,
  aborted: 0,
  bootstrapFailed: 0,
  transferFailed: 0,
});

class PrefillSide {
  up = true;
  threadAlive = true;
  threadNumber = 1;
  warnedTimeout = false;
  busy = false;
  readonly bootstrapQueue = new Set<SimRequest>();
  readonly waiting: SimRequest[] = [];
  readonly forwarding = new Set<SimRequest>();
  readonly inflight = new Set<SimRequest>();
  lastLogAt = Date.now();
  published = zeroPublished();
  counters = zeroCounters();
  startedAt = Date.now();
}

class DecodeSide {
  up = true;
  stalled = false;
  /** AbortReqs that reached the stuck scheduler: it handles them only once its loop runs again. */
  readonly pendingAborts = new Set<SimRequest>();
  warnedTimeout = false;
  readonly transferQueue = new Set<SimRequest>();
  readonly waiting: SimRequest[] = [];
  running: SimRequest[] = [];
  stepTimer: NodeJS.Timeout | undefined;
  /** When the scheduled step is due on the model's timeline (performance.now ms). */
  stepDueAt: number | undefined;
  steps = 0;
  lastLogAt = Date.now();
  tokensSinceLog = 0;
  published = zeroPublished();
  counters = zeroCounters();
  startedAt = Date.now();
}

export class PdModel {
  readonly prefill = new PrefillSide();
  readonly decode = new DecodeSide();
  finishedTotal = 0;
  generatedTokensTotal = 0;
  abortedTotal = 0;
  failedTotal = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Decode's heartbeat to a prefill that went away (current dialect): failures so far and the next check. */
  private heartbeat: { failures: number; timer?: NodeJS.Timeout } | undefined;

  constructor(
    readonly model: ModelParams,
    private readonly timeouts: { waitingMs: number; bootstrapMs: number },
    private readonly logs: { prefill: LogFile; decode: LogFile },
    private readonly hooks: PdHooks,
    private readonly dialect: PdDialect = LEGACY_DIALECT,
  ) {}

  private get current(): boolean {
    return this.dialect.format === 'current';
  }

  /** One scheduler line per TP rank (current dialect) or TP0's only (legacy). */
  private perRank(at: Date, message: (rank: number) => string): string[] {
    const n = this.current ? Math.max(1, this.dialect.tpRanks) : 1;
    return Array.from({ length: n }, (_, r) => fmt.schedulerLine(at, message(r), r));
  }

  // ---- requests ------------------------------------------------------------------------------------------

  /** Admits a request; throws when an engine is down (the router answers 503). */
  submit(promptTokens: number, outputTokens: number, rid: string | undefined, sink: RequestSink): SimRequest {
    if (!this.prefill.up)
      throw new Error('No available servers: No available prefill workers (all circuits open or unhealthy)');
    if (!this.decode.up)
      throw new Error('No available servers: No available decode workers (all circuits open or unhealthy)');
    const req: SimRequest = {
      rid: rid ?? newRid(),
      room: newRoom(),
      promptTokens,
      outputTokens: Math.max(1, outputTokens),
      generated: 0,
      createdAt: Date.now(),
      stage: 'bootstrap',
      awaitingKv: true,
      sink,
    };
    this.prefill.bootstrapQueue.add(req);
    this.decode.transferQueue.add(req);
    this.publishPrefillQueues();
    req.bootstrapTimer = this.after(this.timeouts.bootstrapMs, () => this.bootstrapTimedOut(req));
    req.waitingTimer = this.after(this.timeouts.waitingMs, () => this.waitingTimedOut(req));
    this.after(HANDSHAKE_MS, () => this.tryBootstrap(req));
    return req;
  }

  /** The client went away: the tokenizer sends AbortReq, decode aborts its receiver and sends ABORT to prefill. */
  abort(req: SimRequest): void {
    if (!this.isLive(req)) return;
    // The stuck decode scheduler does not read its AbortReq: no log line and no ABORT frame until it runs again.
    if (this.decode.up && this.decode.stalled) {
      this.decode.pendingAborts.add(req);
      return;
    }
    const now = new Date();
    const why = fmt.ABORTED_BY_ABORTREQ;
    if (this.prefill.up) {
      // Current builds print the line of the queue the request is in, on every TP rank: the inflight queue
      // (prefill.py process_disagg_prefill_inflight_queue) or else the bootstrap queue's (pop_bootstrapped).
      // A request past both keeps the bootstrap line, as the simulator always printed (see decisions.md).
      const line =
        this.current && req.stage === 'inflight' ? fmt.prefillTransferFailed : fmt.prefillBootstrapFailed;
      this.logs.prefill.write(this.perRank(now, (r) => line(req.rid, req.room, why, r)));
      this.prefill.counters.bootstrapFailed++;
      // The prefill server's own tokenizer saw the client leave too (the router holds a request to each leg).
      this.prefill.counters.aborted++;
    }
    if (this.decode.up) {
      // Decode: the handshake (prealloc) queue before prefill has the request (decode.py
      // _update_handshake_waiters), the transfer queue's line otherwise (pop_transferred).
      const line =
        this.current && req.stage === 'bootstrap' ? fmt.decodeHandshakeFailed : fmt.decodeTransferFailed;
      this.logs.decode.write(this.perRank(now, (r) => line(req.rid, req.room, why, r)));
      this.decode.counters.aborted++;
      this.decode.counters.transferFailed++;
    }
    this.detach(req, 'aborted');
    this.abortedTotal++;
    this.hooks.emit({
      service: 'decode',
      kind: 'abort',
      message: `AbortReq for ${req.rid} (room ${req.room})`,
    });
    if (this.prefill.up) this.hooks.abortFrame();
    this.scheduleStep();
  }

  private isLive(req: SimRequest): boolean {
    return req.stage !== 'done' && req.stage !== 'failed' && req.stage !== 'aborted';
  }

  /** Removes a request from every queue. */
  private detach(req: SimRequest, stage: 'done' | 'failed' | 'aborted'): void {
    req.stage = stage;
    this.cancel(req.bootstrapTimer);
    this.cancel(req.waitingTimer);
    this.prefill.bootstrapQueue.delete(req);
    removeFrom(this.prefill.waiting, req);
    this.prefill.forwarding.delete(req);
    this.prefill.inflight.delete(req);
    this.decode.transferQueue.delete(req);
    removeFrom(this.decode.waiting, req);
    this.decode.running = this.decode.running.filter((r) => r !== req);
    this.publishPrefillQueues();
  }

  private fail(req: SimRequest, message: string): void {
    if (!this.isLive(req)) return;
    this.detach(req, 'failed');
    this.failedTotal++;
    req.sink.fail(message);
  }

  // ---- prefill -------------------------------------------------------------------------------------------

  /** Decode's KV indices reach prefill through the bootstrap thread; a dead thread leaves the request waiting. */
  private tryBootstrap(req: SimRequest): void {
    if (req.stage !== 'bootstrap' || !this.prefill.up || !this.prefill.threadAlive) return;
    this.prefill.bootstrapQueue.delete(req);
    this.cancel(req.bootstrapTimer);
    req.stage = 'prefill_wait';
    this.prefill.waiting.push(req);
    this.kickPrefill();
  }

  private kickPrefill(): void {
    const p = this.prefill;
    if (p.busy || !p.up || p.waiting.length === 0) return;
    const batch = p.waiting.splice(0, MAX_PREFILL_BATCH);
    const now = Date.now();
    const newTokens = batch.reduce((s, r) => s + r.promptTokens, 0);
    p.published = {
      ...p.published,
      queued: p.waiting.length,
      prealloc: p.bootstrapQueue.size,
      inflight: p.inflight.size,
      usedTokens: newTokens,
      tokenUsage: newTokens / MAX_TOTAL_TOKENS,
      inputThroughput: newTokens / Math.max(0.001, (now - p.lastLogAt) / 1000),
    };
    p.lastLogAt = now;
    this.logs.prefill.write(
      fmt.schedulerLine(
        new Date(now),
        fmt.prefillBatchMessage(
          {
            newSeq: batch.length,
            newToken: newTokens,
            cachedToken: 0,
            tokenUsage: p.published.tokenUsage,
            runningReq: 0,
            queueReq: p.waiting.length,
            preallocReq: p.bootstrapQueue.size + (this.hooks.leakedQueue?.('prefill') ?? 0),
            inflightReq: p.inflight.size,
            inputThroughput: p.published.inputThroughput,
          },
          this.dialect.format,
        ),
      ),
    );
    p.busy = true;
    for (const r of batch) {
      r.stage = 'prefill';
      p.forwarding.add(r);
    }
    this.after(this.model.prefillMs * this.hooks.stepFactor(), () => {
      p.busy = false;
      for (const r of batch) {
        if (r.stage !== 'prefill') continue;
        p.forwarding.delete(r);
        r.stage = 'inflight';
        p.inflight.add(r);
        p.counters.requests++;
        p.counters.promptTokens += r.promptTokens;
        this.after(TRANSFER_MS, () => this.kvArrived(r));
      }
      this.kickPrefill();
    });
  }

  private bootstrapTimedOut(req: SimRequest): void {
    if (!this.prefill.bootstrapQueue.has(req)) return;
    const now = new Date();
    const lines: string[] = [];
    if (!this.prefill.warnedTimeout) {
      this.prefill.warnedTimeout = true;
      lines.push(fmt.schedulerLine(now, fmt.PREFILL_BOOTSTRAP_TIMEOUT_WARNING));
    }
    const reason = fmt.timedOutReason(req.room, Date.now() - req.createdAt, 'Bootstrapping');
    lines.push(...this.perRank(now, (r) => fmt.prefillBootstrapFailed(req.rid, req.room, reason, r)));
    this.logs.prefill.write(lines);
    this.prefill.bootstrapQueue.delete(req);
    this.prefill.counters.bootstrapFailed++;
    this.publishPrefillQueues();
    this.hooks.emit({ service: 'prefill', kind: 'bootstrap_timeout', message: reason });
  }

  /** Prefill's bootstrap loop dies on the unguarded frame; the process keeps running (exit code 0, no restart). */
  killBootstrapThread(): void {
    if (!this.prefill.threadAlive || !this.prefill.up) return;
    this.prefill.threadAlive = false;
    this.logs.prefill.write(fmt.bootstrapThreadTraceback(this.prefill.threadNumber));
    this.hooks.emit({
      service: 'prefill',
      kind: 'thread_death',
      message:
        "bootstrap_thread died: AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    });
  }

  /** Queue sizes change outside batches; an idle (not stuck) decode scheduler reports them too. */
  private publishPrefillQueues(): void {
    const p = this.prefill;
    p.published = {
      ...p.published,
      queued: p.waiting.length,
      prealloc: p.bootstrapQueue.size,
      inflight: p.inflight.size,
    };
    const d = this.decode;
    if (d.up && !d.stalled && !d.stepTimer && d.running.length === 0) this.publishDecodeIdle();
  }

  // ---- decode --------------------------------------------------------------------------------------------

  private kvArrived(req: SimRequest): void {
    if (req.stage !== 'inflight') return;
    this.prefill.inflight.delete(req);
    this.publishPrefillQueues();
    if (!this.decode.up) return this.fail(req, 'decode worker unavailable');
    if (this.hooks.failsKvTransfer?.()) return this.transferFailed(req);
    this.decode.transferQueue.delete(req);
    this.cancel(req.waitingTimer);
    req.awaitingKv = false;
    req.stage = 'decode_wait';
    this.decode.waiting.push(req);
    this.scheduleStep();
  }

  /**
   * The KV transfer failed (kv_transfer_failure): both legs record the failure and count it
   * (metrics_collector.py increment_transfer_failed_reqs on each side), and the request fails for the client.
   * The reason is Mooncake's for a transfer that never completes (disaggregation/mooncake/conn.py record_failure).
   */
  private transferFailed(req: SimRequest): void {
    const now = new Date();
    const reason = 'Failed to get kvcache from prefill instance, it might be dead';
    this.logs.prefill.write(
      this.perRank(now, (r) => fmt.prefillTransferFailed(req.rid, req.room, reason, r)),
    );
    this.logs.decode.write(this.perRank(now, (r) => fmt.decodeTransferFailed(req.rid, req.room, reason, r)));
    this.prefill.counters.transferFailed++;
    this.decode.counters.transferFailed++;
    this.hooks.emit({
      service: 'decode',
      kind: 'transfer_failed',
      message: `KV transfer failed for ${req.rid}`,
    });
    this.fail(req, fmt.kvTransferError(req.room, reason));
  }

  private waitingTimedOut(req: SimRequest): void {
    if (!req.awaitingKv || !this.decode.transferQueue.has(req) || !this.decode.up || this.decode.stalled)
      return;
    const now = new Date();
    const lines: string[] = [];
    if (!this.decode.warnedTimeout) {
      this.decode.warnedTimeout = true;
      lines.push(fmt.schedulerLine(now, fmt.DECODE_WAITING_TIMEOUT_WARNING));
    }
    const reason = fmt.timedOutReason(req.room, Date.now() - req.createdAt, 'WaitingForInput');
    // `Request N waiting_timeout` was removed upstream in 2026-05: legacy only.
    if (!this.current) lines.push(fmt.schedulerLine(now, fmt.waitingTimeoutError(req.room)));
    lines.push(...this.perRank(now, (r) => fmt.decodeTransferFailed(req.rid, req.room, reason, r)));
    this.logs.decode.write(lines);
    this.decode.counters.transferFailed++;
    this.decode.transferQueue.delete(req);
    req.awaitingKv = false;
    // The request is over for the client; prefill still holds it until its own bootstrap timeout.
    req.stage = 'failed';
    this.hooks.emit({ service: 'decode', kind: 'waiting_timeout', message: reason });
    this.failedTotal++;
    req.sink.fail(fmt.kvTransferError(req.room, reason));
    // The waiting timeout sends another ABORT to prefill (disaggregation/nixl/conn.py).
    if (this.prefill.up) this.hooks.abortFrame();
  }

  private stranded(): number {
    return this.hooks.strandedQueue?.('decode') ?? 0;
  }

  private admit(): void {
    const d = this.decode;
    while (d.running.length < this.model.maxRunning && d.waiting.length > 0) {
      const r = d.waiting.shift()!;
      r.stage = 'running';
      d.running.push(r);
    }
  }

  private scheduleStep(): void {
    const d = this.decode;
    if (this.stopped || d.stepTimer || d.stalled || !d.up) return;
    this.admit();
    if (d.running.length === 0) {
      d.stepDueAt = undefined;
      this.publishDecodeIdle();
      return;
    }
    const ms = (this.model.stepBaseMs + this.model.stepPerReqMs * d.running.length) * this.hooks.stepFactor();
    // Back-to-back steps keep to the model's timeline: a step whose timer fired late (a busy host) shortens the
    // next wait instead of pushing every later token back, so the simulated rate is the model's, not the host
    // load's (bench:verify-power needs run-to-run spread to come from --jitter). A pause restarts the timeline.
    const now = performance.now();
    const due =
      d.stepDueAt !== undefined && d.stepDueAt >= now - Math.max(ms, 1000) ? d.stepDueAt + ms : now + ms;
    d.stepDueAt = due;
    d.stepTimer = setTimeout(
      () => {
        d.stepTimer = undefined;
        this.step();
        this.scheduleStep();
      },
      Math.max(0, due - now),
    );
  }

  private step(): void {
    const d = this.decode;
    for (const r of [...d.running]) {
      if (r.stage !== 'running') continue;
      r.generated++;
      d.tokensSinceLog++;
      this.generatedTokensTotal++;
      r.sink.token(r.generated - 1);
      if (r.stage === 'running' && r.generated >= r.outputTokens) this.finish(r);
    }
    d.steps++;
    if (d.steps % DECODE_LOG_INTERVAL === 0) this.logDecode();
  }

  private finish(req: SimRequest): void {
    this.detach(req, 'done');
    this.decode.counters.requests++;
    this.decode.counters.promptTokens += req.promptTokens;
    this.decode.counters.generationTokens += req.generated;
    this.finishedTotal++;
    req.sink.finish();
  }

  private usedTokens(): number {
    return this.decode.running.reduce((s, r) => s + r.promptTokens + r.generated, 0);
  }

  private logDecode(): void {
    const d = this.decode;
    const now = Date.now();
    const used = this.usedTokens();
    const pre = [...d.transferQueue].reduce((s, r) => s + r.promptTokens, 0);
    d.published = {
      running: d.running.length,
      queued: d.waiting.length,
      usedTokens: used,
      tokenUsage: used / MAX_TOTAL_TOKENS,
      genThroughput: d.tokensSinceLog / Math.max(0.001, (now - d.lastLogAt) / 1000),
      inputThroughput: 0,
      prealloc: 0,
      inflight: 0,
      transfer: d.transferQueue.size + this.stranded(),
    };
    d.tokensSinceLog = 0;
    d.lastLogAt = now;
    this.logs.decode.write(
      fmt.schedulerLine(
        new Date(now),
        fmt.decodeBatchMessage(
          {
            runningReq: d.published.running,
            tokens: used,
            tokenUsage: d.published.tokenUsage,
            preallocatedUsage: pre / MAX_TOTAL_TOKENS,
            preallocReq: 0,
            transferReq: d.published.transfer,
            retractedReq: 0,
            genThroughput: d.published.genThroughput,
            queueReq: d.waiting.length,
          },
          this.dialect.format,
        ),
      ),
    );
  }

  /** An idle scheduler reports empty batches (so gauges read 0 at rest) but keeps the PD queue sizes. */
  private publishDecodeIdle(): void {
    const d = this.decode;
    d.published = {
      ...zeroPublished(),
      transfer: d.transferQueue.size + this.stranded(),
      queued: d.waiting.length,
    };
    d.tokensSinceLog = 0;
    d.lastLogAt = Date.now();
  }

  setDecodeStalled(stalled: boolean): void {
    const d = this.decode;
    d.stalled = stalled;
    if (stalled && d.stepTimer) {
      clearTimeout(d.stepTimer);
      d.stepTimer = undefined;
    }
    this.hooks.emit({
      service: 'decode',
      kind: stalled ? 'stall' : 'resume',
      message: `decode scheduler ${stalled ? 'stuck' : 'running again'}`,
    });
    if (!stalled) {
      const pending = [...d.pendingAborts];
      d.pendingAborts.clear();
      for (const req of pending) this.abort(req);
      this.scheduleStep();
    }
  }

  // ---- process lifecycle ---------------------------------------------------------------------------------

  private prefillSideRequests(): SimRequest[] {
    const p = this.prefill;
    const set = new Set([
      ...p.bootstrapQueue,
      ...p.waiting,
      ...p.forwarding,
      ...p.inflight,
      ...this.decode.transferQueue,
    ]);
    return [...set].filter((r) => this.isLive(r));
  }

  /** The prefill process goes away: decode loses the requests whose KV it was waiting for. */
  prefillDown(): void {
    this.prefill.up = false;
    this.prefill.busy = false;
    if (this.current) {
      this.startHeartbeat();
      return;
    }
    const affected = this.prefillSideRequests();
    if (affected.length > 0 && this.decode.up) {
      this.logs.decode.write(
        fmt.schedulerLine(new Date(), fmt.lostPrefillConnection(this.hooks.bootstrapAddr(), affected.length)),
      );
    }
    for (const r of affected)
      this.fail(r, `prefill instance lost (bootstrap_addr: ${this.hooks.bootstrapAddr()})`);
  }

  /**
   * Current builds: decode's heartbeat thread (common/conn.py heartbeat_checker) GETs the prefill's /health every
   * interval; each failure prints `Attempting to reconnect to …`, and the max-th declares the node failed:
   * `Lost connection … N requests affected`, and every request bound to it fails on every TP rank.
   */
  private startHeartbeat(): void {
    if (this.heartbeat) return;
    const hb: { failures: number; timer?: NodeJS.Timeout } = { failures: 0 };
    this.heartbeat = hb;
    const check = () => {
      if (this.heartbeat !== hb) return;
      if (!this.decode.up) {
        this.heartbeat = undefined;
        return;
      }
      const addr = this.hooks.bootstrapAddr();
      const now = new Date();
      hb.failures++;
      this.logs.decode.write(this.perRank(now, () => fmt.attemptingReconnect(addr)));
      if (hb.failures < this.dialect.heartbeatFailures) {
        hb.timer = this.after(this.dialect.heartbeatMs, check);
        return;
      }
      this.heartbeat = undefined;
      const affected = this.prefillSideRequests();
      const reason = fmt.lostPrefillReason(addr);
      const lines = this.perRank(now, () => fmt.lostPrefillConnection(addr, affected.length, 'current'));
      for (const r of affected)
        lines.push(...this.perRank(now, (rank) => fmt.decodeTransferFailed(r.rid, r.room, reason, rank)));
      this.logs.decode.write(lines);
      this.decode.counters.transferFailed += affected.length;
      this.hooks.emit({
        service: 'decode',
        kind: 'prefill_lost',
        message: `heartbeat to ${addr} failed ${hb.failures} times: ${affected.length} requests failed`,
      });
      for (const r of affected) this.fail(r, fmt.kvTransferError(r.room, reason));
    };
    hb.timer = this.after(this.dialect.heartbeatMs, check);
  }

  /** A fresh prefill process: a live bootstrap thread, per-process state reset. */
  prefillUp(): void {
    if (this.heartbeat) {
      // Back before the heartbeat gave up: the new process knows none of the old requests.
      this.cancel(this.heartbeat.timer);
      this.heartbeat = undefined;
      for (const r of this.prefillSideRequests()) this.fail(r, 'prefill instance restarted');
    }
    const p = this.prefill;
    p.up = true;
    p.threadAlive = true;
    p.bootstrapQueue.clear();
    p.waiting.length = 0;
    p.forwarding.clear();
    p.inflight.clear();
    p.warnedTimeout = false;
    p.busy = false;
    p.published = zeroPublished();
    p.counters = zeroCounters();
    p.startedAt = Date.now();
    p.lastLogAt = Date.now();
  }

  decodeDown(): void {
    const d = this.decode;
    d.up = false;
    d.pendingAborts.clear();
    if (d.stepTimer) clearTimeout(d.stepTimer);
    d.stepTimer = undefined;
    const all = [...d.transferQueue, ...d.waiting, ...d.running, ...this.prefillSideRequests()];
    for (const r of new Set(all)) this.fail(r, 'decode worker unavailable');
  }

  decodeUp(): void {
    const d = this.decode;
    d.up = true;
    d.stalled = false;
    d.pendingAborts.clear();
    d.warnedTimeout = false;
    d.steps = 0;
    d.published = zeroPublished();
    d.counters = zeroCounters();
    d.startedAt = Date.now();
    d.lastLogAt = Date.now();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.decode.stepTimer) clearTimeout(this.decode.stepTimer);
    this.decode.stepTimer = undefined;
  }

  private after(ms: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.stopped) return undefined;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return t;
  }

  private cancel(t: NodeJS.Timeout | undefined): void {
    if (!t) return;
    clearTimeout(t);
    this.timers.delete(t);
  }
}

function removeFrom<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
