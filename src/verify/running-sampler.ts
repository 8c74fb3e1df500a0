// Samples the engine's running-request count while a load runs: from its /metrics (sglang:num_running_reqs,
// vllm:num_requests_running, llamacpp:requests_processing; summed over ranks), from llama.cpp's /slots (the
// slots processing), and/or from the `Decode batch, #running-req: N` lines its scheduler logs (SGLang
// managers/scheduler_metrics_mixin.py; metrics/collector.py @93d0487). Keeps the peak and the sample count,
// nothing else; every body it reads is bounded.
import { Client } from '../lib/http/undici.js';
import { batchLineClose } from '../sources/logs/batch-lines.js';
import { LogWindow } from './log-window.js';
import { readCapped } from './read-capped.js';

/**
 * llama.cpp's gauge: the slots processing a request (ggml-org/llama.cpp tools/server/server-task.cpp:1578
 * @80fb11a, `n_processing_slots` counted in server-context.cpp:2487; still exported upstream @001d906a). The
 * server exports /metrics only with --metrics.
 */
const RUNNING_METRICS = [
  'sglang:num_running_reqs',
  'vllm:num_requests_running',
  'llamacpp:requests_processing',
];
/**
 * The gauges that count the engine's running batch itself, every request in them advanced by each step:
 * SGLang's scheduler publishes `running_batch` (sglang:num_running_reqs, python/sglang/srt/metrics/collector.py
 * @93d0487, set from scheduler_metrics_mixin.py log_decode_stats), vLLM's the scheduler's `running` list, all of it
 * scheduled every step (vllm:num_requests_running, vllm/v1/metrics/loggers.py, from SchedulerStats.num_running_reqs
 * = len(self.running) in vllm/v1/core/sched/scheduler.py). llama.cpp's requests_processing counts busy slots, which
 * says nothing about whether they share a decode step (its decode-step counters do: decode-steps.ts).
 */
const BATCH_METRICS = ['sglang:num_running_reqs', 'vllm:num_requests_running'];
/** A metrics page or a slots list past this is not one to sample. */
const BODY_MAX_BYTES = 8 * 1024 * 1024;
/**
 * ` Decode batch, #running-req: 12,` right after the line's `[time RANKS]` prefix — also `Decode batch [41],` and the
 * older `Decode batch.` form. Anchored: an engine that logs requests prints user text, and a prompt holding the
 * words must not decide the batching step (principle 8; a review found the unanchored search did).
 */
const DECODE_BATCH = /^ Decode batch(?: \[\d+\])?[.,] #running-req: (\d+)/;

/** Sum of the running-request gauges in a Prometheus text exposition; undefined when none is present. */
export function runningFromMetrics(
  text: string,
  names: readonly string[] = RUNNING_METRICS,
): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    for (const name of names) {
      if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (Number.isFinite(v)) sum = (sum ?? 0) + v;
    }
  }
  return sum;
}

/** The slots processing a request in llama.cpp's GET /slots (server_slot::to_json `is_processing`). */
/** The running batch's gauges only (SGLang's, vLLM's); undefined on a page without them (llama.cpp's). */
export function batchFromMetrics(text: string): number | undefined {
  return runningFromMetrics(text, BATCH_METRICS);
}

export function runningFromSlots(text: string): number | undefined {
  try {
    const slots = JSON.parse(text) as unknown;
    if (!Array.isArray(slots) || slots.length === 0) return undefined;
    return slots.filter((s) => (s as { is_processing?: unknown } | null)?.is_processing === true).length;
  } catch {
    return undefined;
  }
}

/** The running count of the scheduler's own `Decode batch` line; undefined for any other line. */
export function runningFromLogLine(line: string): number | undefined {
  const close = batchLineClose(line, 0, line.length);
  if (close < 0) return undefined;
  const m = DECODE_BATCH.exec(line.slice(close + 1));
  return m ? Number(m[1]) : undefined;
}

export interface RunningPeak {
  /** Peak over all sources, undefined when no source produced a sample. */
  peak?: number;
  metricsSamples: number;
  metricsPeak?: number;
  metricsError?: string;
  /** llama.cpp's /slots, when the server has it. */
  slotsSamples: number;
  slotsPeak?: number;
  slotsError?: string;
  logSamples: number;
  logPeak?: number;
  /**
   * Peak of the engine's own running batch (SGLang's/vLLM's gauge, SGLang's Decode batch lines): undefined when
   * only llama.cpp's busy slots, or nothing, were sampled.
   */
  batchPeak?: number;
}

/** One URL scraped every interval: its samples, peak and last error. */
class Poll {
  samples = 0;
  peak: number | undefined;
  /** Peak of `parseBatch`'s reading, when given one. */
  batchPeak: number | undefined;
  error: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private client: Client | undefined;

  constructor(
    private readonly url: URL,
    private readonly parse: (text: string) => number | undefined,
    private readonly missing: string,
    private readonly headers: Record<string, string>,
    private readonly parseBatch?: (text: string) => number | undefined,
  ) {}

  start(intervalMs: number): void {
    this.client = new Client(this.url.origin);
    const tick = () => {
      this.inflight = this.scrape().finally(() => {
        this.inflight = undefined;
        if (this.client) this.timer = setTimeout(tick, intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (this.timer) clearTimeout(this.timer);
    await this.inflight;
    await c?.destroy().catch(() => {});
  }

  private async scrape(): Promise<void> {
    const c = this.client;
    if (!c) return;
    try {
      const res = await c.request({
        method: 'GET',
        path: this.url.pathname + this.url.search,
        headers: this.headers,
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
      });
      const text = await readCapped(res.body, BODY_MAX_BYTES);
      if (res.statusCode !== 200) {
        this.error = `HTTP ${res.statusCode}`;
        return;
      }
      const v = this.parse(text);
      if (v === undefined) {
        this.error = this.missing;
        return;
      }
      this.samples++;
      this.peak = Math.max(this.peak ?? 0, v);
      const b = this.parseBatch?.(text);
      if (b !== undefined) this.batchPeak = Math.max(this.batchPeak ?? 0, b);
    } catch (err) {
      this.error = (err as Error).message;
    }
  }
}

export interface SamplerSources {
  metricsUrl?: string;
  /** llama.cpp's /slots URL (server-info.ts finds it), with the target's headers. */
  slotsUrl?: string;
  headers?: Record<string, string>;
  logs: readonly string[];
}

export class RunningSampler {
  private readonly window: LogWindow | undefined;
  private readonly metrics: Poll | undefined;
  private readonly slots: Poll | undefined;
  private logSamples = 0;
  private logPeak: number | undefined;

  constructor(
    sources: SamplerSources,
    private readonly intervalMs: number,
  ) {
    this.window = sources.logs.length ? new LogWindow(sources.logs) : undefined;
    if (sources.metricsUrl)
      this.metrics = new Poll(
        new URL(sources.metricsUrl),
        runningFromMetrics,
        `no ${RUNNING_METRICS.join(' or ')} in ${sources.metricsUrl}`,
        {},
        batchFromMetrics,
      );
    if (sources.slotsUrl)
      this.slots = new Poll(
        new URL(sources.slotsUrl),
        runningFromSlots,
        `no slot list in ${sources.slotsUrl}`,
        sources.headers ?? {},
      );
  }

  start(): void {
    this.window?.mark();
    this.metrics?.start(this.intervalMs);
    this.slots?.start(this.intervalMs);
  }

  async stop(): Promise<RunningPeak> {
    await Promise.all([this.metrics?.stop(), this.slots?.stop()]);
    this.window?.read((line) => {
      const v = runningFromLogLine(line);
      if (v === undefined) return;
      this.logSamples++;
      this.logPeak = Math.max(this.logPeak ?? 0, v);
    });
    const r: RunningPeak = {
      metricsSamples: this.metrics?.samples ?? 0,
      metricsPeak: this.metrics?.peak,
      metricsError: this.metrics?.error,
      slotsSamples: this.slots?.samples ?? 0,
      slotsPeak: this.slots?.peak,
      slotsError: this.slots?.error,
      logSamples: this.logSamples,
      logPeak: this.logPeak,
    };
    const peaks = [r.metricsPeak, r.slotsPeak, r.logPeak].filter((v): v is number => v !== undefined);
    const batch = [this.metrics?.batchPeak, r.logPeak].filter((v): v is number => v !== undefined);
    return {
      ...r,
      peak: peaks.length ? Math.max(...peaks) : undefined,
      batchPeak: batch.length ? Math.max(...batch) : undefined,
    };
  }
}
