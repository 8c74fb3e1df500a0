// Reads an engine's /metrics on an interval and hands an EngineSignal to the detector. Each scrape has a
// timeout and a body cap; at most one is in flight, so a hung engine cannot pile up requests. The body is parsed
// as it streams in (promtext.ts: one line plus the retained series, never the body), yielding to the event loop
// every YIELD_BYTES, so a 16 MB body neither holds 16 MB of strings nor stalls the probes. A body that is not
// exposition format is a failed scrape and the last good scrape's gauges are removed, as Prometheus does on a
// parse error (prometheus/prometheus scrape/scrape.go at d15adb9, L1562–1577 and L1790–1795: the parser's error
// fails the append, `up` is 0, and an empty append marks the target's series stale).
import { Agent, request } from '../../lib/http/undici.js';
import type { EngineScrapeConfig } from '../../config/schema.js';
import type { Logger } from '../../lib/logger.js';
import { lagAwareTimeout, type LoopLag } from '../../lib/loop-lag.js';
import { clearEngineGauges, setEngineGauges, type EngineGaugeValues } from './gauges.js';
import type { EngineMetrics } from '../../metrics.js';
import type { EngineSignal } from '../../core/signals.js';
import { ENGINE_FAILURE_KIND_NAMES, FailureCounters } from './failures.js';
import { mapEngineMetrics, SCRAPE_FAMILIES, SCRAPE_LABELS, type EngineFields } from './map.js';
import { mapOllamaPs } from './ollama.js';
import { notExposition, PromTextParser } from './promtext.js';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Parsing work between two yields to the event loop (~1–3 ms of it). */
export const YIELD_BYTES = 256 * 1024;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface EngineScraperOptions {
  target: string;
  engine: EngineScrapeConfig;
  metrics: EngineMetrics;
  logger: Logger;
  onEngine: (e: EngineSignal) => void;
  now?: () => number;
  /** How parsing gives the event loop a turn (tests count the turns). */
  yieldToLoop?: () => Promise<void>;
  /** The event-loop lateness the scrape's deadline gives back (default: the process's sampler). */
  loopLag?: LoopLag;
}

export class EngineScraper {
  private readonly now: () => number;
  private readonly agent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private readonly log: Logger;
  private lastOk: boolean | undefined;
  private stopped: Promise<void> | undefined;
  /** The gauges the last good scrape set: a failed scrape removes them rather than leave its values standing. */
  private gaugesSet: (keyof EngineGaugeValues)[] = [];
  private readonly failures = new FailureCounters();
  /** The KV-transfer latency histogram's `_sum`/`_count` at the last scrape that had them. */
  private kvLatency: { sum: number; count: number } | undefined;

  constructor(private readonly opts: EngineScraperOptions) {
    this.now = opts.now ?? Date.now;
    this.log = opts.logger.child({
      component: 'engine-scrape',
      target: opts.target,
      service: opts.engine.service,
    });
  }

  start(): void {
    if (this.timer) return;
    void this.scrapeOnce();
    this.timer = setInterval(() => void this.scrapeOnce(), this.opts.engine.every);
  }

  /** Idempotent: a second call joins the first (a second Agent.close() would reject with ClientDestroyedError). */
  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await this.inflight;
    // destroy, not close: close waits for requests in flight, and the one in flight was just aborted.
    await this.agent.destroy().catch(() => {});
    this.opts.metrics.engineScrapeSuccess.remove({
      target: this.opts.target,
      service: this.opts.engine.service,
    });
  }

  /** One scrape (skipped while the previous one is in flight); resolves once its signal is delivered. */
  scrapeOnce(): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    this.inflight ??= this.scrape().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async scrape(): Promise<void> {
    const { target, engine } = this.opts;
    const labels = { target, service: engine.service };
    const time = this.now();
    let signal: EngineSignal;
    try {
      const fields = this.withLatency(await this.fetchFields());
      signal = {
        kind: 'engine',
        target,
        service: engine.service,
        source: 'metrics',
        time,
        scrapeOk: true,
        ...fields,
      };
      this.setGauges(fields);
      for (const [kind, delta] of Object.entries(this.failures.increase(fields)))
        this.opts.metrics.engineFailures.inc({ ...labels, kind }, delta);
      if (this.lastOk === false) this.log.info('engine metrics scrape recovered');
      this.lastOk = true;
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      signal = { kind: 'engine', target, service: engine.service, source: 'metrics', time, scrapeOk: false };
      clearEngineGauges(this.opts.metrics, labels, this.gaugesSet);
      this.gaugesSet = [];
      if (this.lastOk !== false)
        this.log.warn({ err: (err as Error).message }, 'engine metrics scrape failed');
      this.lastOk = false;
    }
    this.opts.metrics.engineScrapeSuccess.set(labels, signal.scrapeOk ? 1 : 0);
    try {
      this.opts.onEngine(signal);
    } catch (err) {
      this.log.error({ err }, 'engine signal consumer threw');
    }
  }

  private async fetchFields(): Promise<EngineFields> {
    // One scrape's signal, aborted by its deadline or by the scraper stopping. The deadline gives back the time the
    // daemon's own event loop lost (a loaded host), as the probes' does.
    const scrape = new AbortController();
    const timer = lagAwareTimeout(
      this.opts.engine.timeout,
      () => scrape.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      this.opts.loopLag,
    );
    // The stop reaches the scrape through a listener taken off when the scrape ends, not AbortSignal.any([stop,
    // deadline]): on Node 20 each such composite stays in its long-lived source's dependant set for good
    // (nodejs/node#55351), a WeakRef a scrape — 20 a second at 50 targets, +9,461 in bench:steady's 8 minutes.
    const stop = this.stopping.signal;
    const onStop = () => scrape.abort(stop.reason);
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
    try {
      return await this.parseFields(scrape.signal);
    } finally {
      timer.clear();
      stop.removeEventListener('abort', onStop);
    }
  }

  /** The scraper's stop signal (tests: nothing of a scrape stays attached to it once the scrape ends). */
  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  private async parseFields(signal: AbortSignal): Promise<EngineFields> {
    const body = this.fetchBody(signal);
    if (this.opts.engine.format === 'ollama') {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk);
      return mapOllamaPs(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown).fields;
    }
    const parser = new PromTextParser({ families: SCRAPE_FAMILIES, labels: SCRAPE_LABELS });
    let sinceYield = 0;
    for await (const chunk of body) {
      // A large chunk is parsed in slices, so no one push runs long.
      for (let at = 0; at < chunk.length; at += YIELD_BYTES) {
        parser.push(chunk.subarray(at, at + YIELD_BYTES));
        sinceYield += Math.min(YIELD_BYTES, chunk.length - at);
        if (sinceYield >= YIELD_BYTES) {
          sinceYield -= YIELD_BYTES;
          await (this.opts.yieldToLoop ?? yieldToLoop)();
          this.stopping.signal.throwIfAborted();
        }
      }
    }
    const parsed = parser.end();
    const problem = notExposition(parsed);
    if (problem !== undefined) throw new Error(problem);
    return mapEngineMetrics(parsed.samples);
  }

  /** The body's chunks, cut (and failed) past MAX_BODY_BYTES. */
  private async *fetchBody(signal: AbortSignal): AsyncGenerator<Buffer> {
    const res = await request(this.opts.engine.metrics, {
      dispatcher: this.agent,
      signal,
      headers: {
        accept: this.opts.engine.format === 'ollama' ? 'application/json' : 'text/plain;version=0.0.4',
      },
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`HTTP ${res.statusCode}`);
    }
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) throw new Error(`metrics body over ${MAX_BODY_BYTES} bytes`);
        yield chunk;
      }
    } finally {
      // Left early (over the cap, or the scraper stopping): the rest of the body is not read.
      if (!res.body.readableEnded) res.body.destroy();
    }
  }

  /**
   * The interval's mean KV-transfer latency from the histogram's deltas (no transfer since: nothing said, the
   * last mean is not repeated as current); a restarted engine's smaller counters start the deltas over.
   */
  private withLatency(f: EngineFields): EngineFields {
    const { kvTransferLatencySumMs: sum, kvTransferLatencyCount: count } = f;
    if (sum === undefined || count === undefined) return f;
    const prev = this.kvLatency;
    this.kvLatency = { sum, count };
    if (prev === undefined || count < prev.count || sum < prev.sum) return f;
    const n = count - prev.count;
    return n > 0 ? { ...f, kvTransferLatencyMs: (sum - prev.sum) / n } : f;
  }

  private setGauges(f: EngineFields): void {
    const labels = { target: this.opts.target, service: this.opts.engine.service };
    const { sleeping: _asleep, ...numbers } = f;
    const values: EngineGaugeValues = {
      ...numbers,
      ...(f.kvTransferLatencyMs !== undefined
        ? { kvTransferLatencySeconds: f.kvTransferLatencyMs / 1000 }
        : {}),
      ...(f.sleeping !== undefined ? { sleeping: f.sleeping ? 1 : 0 } : {}),
      ...(f.routerOldestInflightMs !== undefined
        ? { oldestRequestAgeSeconds: f.routerOldestInflightMs / 1000 }
        : {}),
    };
    this.gaugesSet = setEngineGauges(this.opts.metrics, labels, values);
  }

  /** The failure counter series of this engine, at 0 until its counters first rise. */
  static createFailureSeries(metrics: EngineMetrics, target: string, service: string): void {
    for (const kind of ENGINE_FAILURE_KIND_NAMES) metrics.engineFailures.inc({ target, service, kind }, 0);
  }
}
