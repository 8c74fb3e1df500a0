// Samples the engine's running-request count while a load runs: from its /metrics (sglang:num_running_reqs,
// vllm:num_requests_running; summed over ranks) and/or from the `Decode batch, #running-req: N` lines its
// scheduler logs (SGLang managers/scheduler_metrics_mixin.py; metrics/collector.py @93d0487). Keeps the peak
// and the sample count, nothing else.
import { Client } from '../lib/http/undici.js';
import { LogWindow } from './log-window.js';

const RUNNING_METRICS = ['sglang:num_running_reqs', 'vllm:num_requests_running'];
/** `Decode batch, #running-req: 12,` — also `Decode batch [41],` and the older `Decode batch.` form. */
const DECODE_BATCH = /Decode batch(?: \[\d+\])?[.,] #running-req: (\d+)/;

/** Sum of the running-request gauges in a Prometheus text exposition; undefined when none is present. */
export function runningFromMetrics(text: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    for (const name of RUNNING_METRICS) {
      if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (Number.isFinite(v)) sum = (sum ?? 0) + v;
    }
  }
  return sum;
}

export function runningFromLogLine(line: string): number | undefined {
  const m = DECODE_BATCH.exec(line);
  return m ? Number(m[1]) : undefined;
}

export interface RunningPeak {
  /** Peak over all sources, undefined when no source produced a sample. */
  peak?: number;
  metricsSamples: number;
  metricsPeak?: number;
  metricsError?: string;
  logSamples: number;
  logPeak?: number;
}

export class RunningSampler {
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private client: Client | undefined;
  private readonly window: LogWindow | undefined;
  private readonly r: RunningPeak = { metricsSamples: 0, logSamples: 0 };

  constructor(
    private readonly metricsUrl: string | undefined,
    logs: readonly string[],
    private readonly intervalMs: number,
  ) {
    this.window = logs.length ? new LogWindow(logs) : undefined;
  }

  start(): void {
    this.window?.mark();
    if (this.metricsUrl) {
      const u = new URL(this.metricsUrl);
      this.client = new Client(u.origin);
      const tick = () => {
        this.inflight = this.scrape(u).finally(() => {
          this.inflight = undefined;
          if (this.client) this.timer = setTimeout(tick, this.intervalMs);
        });
      };
      tick();
    }
  }

  async stop(): Promise<RunningPeak> {
    const c = this.client;
    this.client = undefined;
    if (this.timer) clearTimeout(this.timer);
    await this.inflight;
    await c?.destroy().catch(() => {});
    this.window?.read((line) => {
      const v = runningFromLogLine(line);
      if (v === undefined) return;
      this.r.logSamples++;
      this.r.logPeak = Math.max(this.r.logPeak ?? 0, v);
    });
    const peaks = [this.r.metricsPeak, this.r.logPeak].filter((v): v is number => v !== undefined);
    return { ...this.r, peak: peaks.length ? Math.max(...peaks) : undefined };
  }

  private async scrape(u: URL): Promise<void> {
    const c = this.client;
    if (!c) return;
    try {
      const res = await c.request({
        method: 'GET',
        path: u.pathname + u.search,
        headersTimeout: 5_000,
        bodyTimeout: 5_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) {
        this.r.metricsError = `HTTP ${res.statusCode}`;
        return;
      }
      const v = runningFromMetrics(text);
      if (v === undefined) {
        this.r.metricsError = `no ${RUNNING_METRICS.join(' or ')} in ${this.metricsUrl}`;
        return;
      }
      this.r.metricsSamples++;
      this.r.metricsPeak = Math.max(this.r.metricsPeak ?? 0, v);
    } catch (err) {
      this.r.metricsError = (err as Error).message;
    }
  }
}
