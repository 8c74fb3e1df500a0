// The contract between the runner and the probe kinds: one function per kind, as blackbox_exporter's ProbeFn.
import type { EndpointConfig, ProbeConfig } from '../../config/schema.js';
import type { ConnKind, ProbeDetail, ProbeResultClass, TimeoutPhase } from '../../core/signals.js';
import type { Lease } from './http.js';

/** Where a run is; a timeout reports the phase it interrupted. Also collects the debug timeline. */
export class Progress {
  phase: TimeoutPhase = 'connect';
  readonly t0 = performance.now();
  connectMs?: number;
  headersMs?: number;
  /** HTTP status once the current request's headers arrived (kept on a later timeout). */
  status?: number;
  /** Whether the current request (of a run that sends several) got its response headers. */
  responseHeaders = false;
  /** Requests sent again on a new connection because the server had closed the reused one (request.ts). */
  reconnects = 0;
  ttftMs?: number;
  /** Where a run of several requests is (the conversation's "round 3 of 4"): a timeout names it. */
  step?: string;
  /** Request ids this run has sent (request.ts), newest last. */
  readonly requestIds: string[] = [];
  private readonly entries: string[] = [];
  private dropped = 0;

  /** `timeline` off keeps the hot path free of string building (bench/probe-overhead). */
  constructor(
    readonly timeline: boolean,
    private readonly maxEntries = 2000,
  ) {}

  elapsed(): number {
    return performance.now() - this.t0;
  }

  mark(what: string | (() => string)): void {
    if (!this.timeline) return;
    if (this.entries.length >= this.maxEntries) {
      this.dropped++;
      return;
    }
    const text = typeof what === 'string' ? what : what();
    this.entries.push(`${this.elapsed().toFixed(3).padStart(10)} ms  ${text}`);
  }

  lines(): string[] {
    return this.dropped > 0 ? [...this.entries, `… ${this.dropped} more entries dropped`] : [...this.entries];
  }
}

export interface ProbeContext<P extends ProbeConfig = ProbeConfig> {
  model: string;
  /** The probe's config, narrowed to its kind (config/schema.ts: a union discriminated on `kind`). */
  probe: P;
  endpoint: EndpointConfig;
  conn: ConnKind;
  /** The endpoint's path prefix ('' for a bare origin). */
  basePath: string;
  /** Resolved request headers for the endpoint, secrets included: never log them. */
  headers: Record<string, string>;
  lease: Lease;
  /**
   * A second, fresh connection to the same hop for a request that must run alongside the main one (the
   * canary's concurrent pair); released when the run ends.
   */
  extraLease(): Lease;
  signal: AbortSignal;
  progress: Progress;
}

/** What a probe kind decides about one run. */
export interface ProbeOutcome {
  result: Exclude<ProbeResultClass, 'timeout' | 'skipped_overlap'>;
  status?: number;
  error?: string;
  tokens?: number;
  tokensPerSecond?: number;
  detail?: ProbeDetail;
}

export type ProbeFn<P extends ProbeConfig = ProbeConfig> = (ctx: ProbeContext<P>) => Promise<ProbeOutcome>;

/** A failure a probe kind detected itself (bad framing, body too large, …), thrown to end the run. */
export class ProbeFailure extends Error {
  constructor(
    readonly result: ProbeOutcome['result'],
    message: string,
    readonly status?: number,
    readonly detail?: ProbeDetail,
  ) {
    super(message);
    this.name = 'ProbeFailure';
  }
}
