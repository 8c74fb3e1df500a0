// Reads an engine's /metrics on an interval and hands an EngineSignal to the detector. Each scrape has a
// timeout and a body cap; at most one is in flight, so a hung engine cannot pile up requests.
import { Agent, request } from '../http/undici.js';
import type { EngineScrapeConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { setEngineGauges } from './gauges.js';
import type { EngineMetrics } from '../metrics.js';
import type { EngineSignal } from '../signals.js';
import { mapEngineMetrics } from './map.js';
import { mapOllamaPs } from './ollama.js';
import { parsePrometheusText } from './promtext.js';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface EngineScraperOptions {
  target: string;
  engine: EngineScrapeConfig;
  metrics: EngineMetrics;
  logger: Logger;
  onEngine: (e: EngineSignal) => void;
  now?: () => number;
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
      const text = await this.fetchText();
      const fields =
        engine.format === 'ollama'
          ? mapOllamaPs(JSON.parse(text) as unknown).fields
          : mapEngineMetrics(parsePrometheusText(text).samples);
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
      if (this.lastOk === false) this.log.info('engine metrics scrape recovered');
      this.lastOk = true;
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      signal = { kind: 'engine', target, service: engine.service, source: 'metrics', time, scrapeOk: false };
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

  private async fetchText(): Promise<string> {
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.opts.engine.timeout)]);
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
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.body.destroy();
        throw new Error(`metrics body over ${MAX_BODY_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private setGauges(f: ReturnType<typeof mapEngineMetrics>): void {
    setEngineGauges(this.opts.metrics, { target: this.opts.target, service: this.opts.engine.service }, f);
  }
}
