// Drain as a remediation action: while a target's backend is out of rotation (view.ts: not ready, and not held
// in by its pool), its worker is removed from the gateway; once it is back in rotation it is added again
// (undrain). Reconciled on every step of the target, so a failed call is retried (with backoff) and a drain the
// pool rule forbids never happens. Safety: the pool rule (never the last in rotation), `maxPerWindow` drains per
// `window`, `dryRun`; every drain, undrain and skip is journaled, counted and shown on the status page.
import type { DrainConfig } from '../../config/traffic-schema.js';
import type { Logger } from '../../lib/logger.js';
import type { TrafficMetrics } from '../../metrics.js';
import type { GatewayClient, GatewayResult } from './sglang-gateway.js';
import type { TrafficAnswer } from './view.js';

export type DrainAction = 'drain' | 'undrain';
export type DrainResult = 'success' | 'failure' | 'dry_run' | 'capped';
export const DRAIN_RESULTS: readonly DrainResult[] = ['success', 'failure', 'dry_run', 'capped'];

/** One drain or undrain (or a skip), as journaled. */
export interface DrainRecord {
  at: number;
  target: string;
  backend: string;
  pool?: string;
  action: DrainAction;
  result: DrainResult;
  worker: string;
  gateway: string;
  /** The verdict that moved it: state and diagnosis. */
  state: string;
  diagnosis: string | null;
  detail: string;
}

/** What outlives a reload and a restart: whether the worker is out (by us), and the drains in the window. */
export interface DrainLedger {
  out: boolean;
  /** The worker is out only on paper: a dry run said it would drain. */
  dryRun: boolean;
  drains: number[];
  outSince?: number;
}

export const newDrainLedger = (): DrainLedger => ({ out: false, dryRun: false, drains: [] });

const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 60_000;

export interface DrainerOptions {
  target: string;
  backend: string;
  config: DrainConfig;
  gateway: GatewayClient;
  metrics: Pick<TrafficMetrics, 'drainsTotal' | 'drained'>;
  logger: Logger;
  onRecord: (r: DrainRecord) => void;
  /** Called whenever the ledger changes (persisted in stateDir). */
  onLedger?: (l: DrainLedger) => void;
  ledger?: DrainLedger;
  now?: () => number;
}

export class Drainer {
  readonly ledger: DrainLedger;
  readonly backend: string;
  private readonly now: () => number;
  private busy: Promise<void> | undefined;
  private retryAt = 0;
  private retryMs = FIRST_RETRY_MS;
  /** Skips and failures are journaled once per streak, not on every step. */
  private reported: DrainResult | undefined;

  constructor(private readonly opts: DrainerOptions) {
    this.now = opts.now ?? Date.now;
    this.ledger = opts.ledger ?? newDrainLedger();
    this.backend = opts.backend;
    for (const action of ['drain', 'undrain'] as const)
      for (const result of DRAIN_RESULTS)
        opts.metrics.drainsTotal.inc({ target: opts.target, action, result }, 0);
    opts.metrics.drained.set({ target: opts.target }, this.ledger.out ? 1 : 0);
  }

  /** The status page's line for this drain. */
  status(): { out: boolean; dryRun: boolean; since?: number; drainsInWindow: number; max: number } {
    const now = this.now();
    return {
      out: this.ledger.out,
      dryRun: this.ledger.dryRun,
      ...(this.ledger.outSince !== undefined ? { since: this.ledger.outSince } : {}),
      drainsInWindow: this.ledger.drains.filter((t) => now - t < this.opts.config.window).length,
      max: this.opts.config.maxPerWindow,
    };
  }

  /** Waits for a gateway call in flight (tests, shutdown). */
  async idle(): Promise<void> {
    await this.busy;
  }

  /** Reconciles the gateway with the backend's answer (called on every step of the target). */
  consider(a: TrafficAnswer): void {
    if (this.busy !== undefined) return;
    const now = this.now();
    const wantOut = !a.inRotation;
    const l = this.ledger;
    if (wantOut === l.out) {
      this.reported = undefined;
      return;
    }
    if (now < this.retryAt) return;
    const base = {
      at: now,
      target: this.opts.target,
      backend: this.opts.backend,
      ...(a.pool !== undefined ? { pool: a.pool } : {}),
      worker: this.opts.config.worker,
      gateway: this.opts.config.url,
      state: a.state,
      diagnosis: a.diagnosis,
    };
    if (wantOut) {
      l.drains = l.drains.filter((t) => now - t < this.opts.config.window);
      if (l.drains.length >= this.opts.config.maxPerWindow) {
        this.once({
          ...base,
          action: 'drain',
          result: 'capped',
          detail: `${l.drains.length} drains within ${Math.round(this.opts.config.window / 60_000)} min (maxPerWindow): the worker stays in`,
        });
        return;
      }
    }
    const action: DrainAction = wantOut ? 'drain' : 'undrain';
    // A dry run's drain was only on paper, so is its undrain (a real config replacing a dry run undrains nothing).
    if (this.opts.config.dryRun || (!wantOut && l.dryRun)) {
      this.apply(wantOut, true, now);
      this.record({
        ...base,
        action,
        result: 'dry_run',
        detail: `would ${action} ${this.opts.config.worker}`,
      });
      return;
    }
    const call = wantOut ? this.opts.gateway.remove() : this.opts.gateway.add();
    this.busy = call
      .catch((err: unknown): GatewayResult => ({ ok: false, detail: String(err) }))
      .then((r) => {
        if (r.ok) {
          this.retryMs = FIRST_RETRY_MS;
          this.apply(wantOut, false, now);
          this.record({ ...base, action, result: 'success', detail: r.detail });
          return;
        }
        this.retryAt = this.now() + this.retryMs;
        this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
        this.opts.metrics.drainsTotal.inc({ target: this.opts.target, action, result: 'failure' });
        this.opts.logger.warn(
          { component: 'drain', target: this.opts.target, action, detail: r.detail },
          `${action} failed; retrying`,
        );
        this.once({ ...base, action, result: 'failure', detail: r.detail }, false);
      })
      .finally(() => {
        this.busy = undefined;
      });
  }

  private apply(out: boolean, dryRun: boolean, at: number): void {
    const l = this.ledger;
    l.out = out;
    l.dryRun = out && dryRun;
    if (out) {
      l.drains.push(at);
      l.outSince = at;
    } else delete l.outSince;
    this.opts.metrics.drained.set({ target: this.opts.target }, out ? 1 : 0);
    this.opts.onLedger?.(l);
  }

  /** Journals a skip or failure once per streak (and counts it, unless already counted). */
  private once(r: DrainRecord, count = true): void {
    if (this.reported === r.result) return;
    this.reported = r.result;
    if (count) this.record(r);
    else this.opts.onRecord(r);
  }

  private record(r: DrainRecord): void {
    this.opts.metrics.drainsTotal.inc({ target: r.target, action: r.action, result: r.result });
    if (r.result === 'success' || r.result === 'dry_run')
      this.opts.logger.warn(
        { component: 'drain', target: r.target, worker: r.worker, result: r.result, state: r.state },
        r.action === 'drain' ? 'worker drained from the gateway' : 'worker added back to the gateway',
      );
    this.opts.onRecord(r);
  }
}
