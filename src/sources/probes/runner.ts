// Runs one probe once against one hop over one connection kind: owns the deadline, the phase a timeout
// interrupted, and the mapping of every failure to a result class. Errors leave here redacted.
import { randomBytes } from 'node:crypto';
import type { ProbeConfig } from '../../config/schema.js';
import type { ProbeMetrics } from '../../metrics.js';
import { LAG_MIN_EXTENSION_MS, lagAwareTimeout, type LoopLag } from '../../lib/loop-lag.js';
import { redactor } from '../../lib/redact.js';
import type { ConnKind, ProbeDetail, ProbeResultSignal } from '../../core/signals.js';
import type { EndpointDispatchers, Lease } from './http.js';
import { errorCode, noConnection } from './conn-errors.js';
import { runKind } from './registry.js';
import { Progress, ProbeFailure, type ProbeOutcome } from './types.js';

export interface RunOptions {
  target: string;
  model: string;
  probe: ProbeConfig;
  hop: EndpointDispatchers;
  conn: ConnKind;
  headers: Record<string, string>;
  /** Aborts the run without a verdict (scheduler stopping). */
  cancel?: AbortSignal;
  /** Collect a debug timeline (GET /probe?debug=true). */
  timeline?: boolean;
  confirmation?: boolean;
  now?: () => number;
  /** The run's progress, when the caller watches it while in flight (the scheduler: first token yet?). */
  progress?: Progress;
  /** The event-loop lateness the deadline gives back (default: the process's sampler). */
  loopLag?: LoopLag;
}

/** What a timeout's text says of the time it gave back for the daemon's own event-loop lag. */
const lagNote = (extendedMs: number) =>
  extendedMs > 0 ? ` (+${Math.round(extendedMs)} ms the daemon's event loop lost)` : '';

export interface RunOutcome {
  signal: ProbeResultSignal;
  /** The run was cancelled (scheduler stopping): there is no verdict to report. */
  cancelled: boolean;
  progress: Progress;
}

class ProbeTimeout extends Error {
  constructor(readonly ms: number) {
    super(`probe timed out after ${ms} ms`);
    this.name = 'ProbeTimeout';
  }
}

/** Whether a connection to the server existed when `err` happened (a fresh one made, or a reused one). */
function connectionMade(err: unknown, progress: Progress, reused: boolean): boolean {
  if (noConnection(err)) return false;
  return progress.connectMs !== undefined || reused;
}

function describe(err: unknown): string {
  const code = errorCode(err);
  const msg = err instanceof Error ? err.message : String(err);
  return code !== undefined && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

export function cleanError(text: string): string {
  return redactor.redact(text).slice(0, 500);
}

/**
 * Opens a keep-alive connection with a request any OpenAI-compatible hop answers cheaply. Whatever the
 * status (401, 404 included), the connection is what matters; the body is drained so it can be reused.
 */
async function primeConnection(
  lease: Lease,
  basePath: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const res = await lease.client.request({
    method: 'GET',
    path: `${basePath}/v1/models`,
    headers,
    signal,
  });
  await res.body.dump({ limit: 64 * 1024 });
}

export async function runProbe(opts: RunOptions): Promise<RunOutcome> {
  const now = opts.now ?? Date.now;
  const start = now();
  const progress = opts.progress ?? new Progress(opts.timeline ?? false);
  const ac = new AbortController();
  let timedOut: Progress['phase'] | undefined;
  // The deadline is the daemon's to keep: time its own event loop lost (a loaded host) is given back first.
  const timer = lagAwareTimeout(
    opts.probe.timeout,
    (extended) => {
      timedOut = progress.phase;
      progress.mark(`timeout after ${opts.probe.timeout} ms${lagNote(extended)} in phase ${progress.phase}`);
      ac.abort(new ProbeTimeout(opts.probe.timeout));
    },
    opts.loopLag,
  );
  const onCancel = () => ac.abort(new Error('probe cancelled'));
  opts.cancel?.addEventListener('abort', onCancel, { once: true });

  let lease: Lease | undefined;
  let reused = false;
  let primed = false;
  const extras: Lease[] = [];
  let unsubscribe = (): void => {};
  let outcome: ProbeOutcome;
  let phase: ProbeResultSignal['phase'];
  let result: ProbeResultSignal['result'];
  try {
    // Inside the try: lease() throws once the dispatchers are closed, and the timer and cancel listener
    // above must still be cleaned up.
    lease = opts.hop.lease(opts.conn, opts.probe.name);
    reused = lease.reused;
    if (reused) progress.phase = 'headers';
    unsubscribe = lease.onConnect(() => {
      // A connect after priming: the hop closed the primed connection, so this run is not a reuse after all.
      if (primed) reused = false;
      progress.connectMs ??= progress.elapsed();
      progress.mark('connected');
      if (progress.phase === 'connect') progress.phase = 'headers';
    });
    if (lease.conn === 'keepalive' && !reused) {
      // uvicorn (SGLang, vLLM) closes idle connections after 5 s, Node after 5 s, many proxies after 60-75 s:
      // at a 15 s cadence the keep-alive slot would never reuse anything and a hop that stalls reused
      // connections would go unseen. A cheap request opens the connection, and the run goes second on it.
      progress.mark(`GET ${opts.hop.basePath}/v1/models to prime the connection (new connection)`);
      await primeConnection(lease, opts.hop.basePath, opts.headers, ac.signal);
      progress.mark('connection primed with GET /v1/models');
      primed = true;
      reused = true;
    }
    outcome = await runKind({
      model: opts.model,
      probe: opts.probe,
      endpoint: opts.hop.endpoint,
      conn: opts.conn,
      basePath: opts.hop.basePath,
      headers: opts.headers,
      lease,
      extraLease: () => {
        const l = opts.hop.lease('fresh');
        extras.push(l);
        return l;
      },
      signal: ac.signal,
      progress,
    });
    result = outcome.result;
  } catch (err) {
    if (timedOut !== undefined) {
      result = 'timeout';
      phase = timedOut;
      outcome = {
        result: 'bad_response',
        error: `no ${phaseWhat(timedOut)} within ${opts.probe.timeout} ms${lagNote(timer.extendedMs())}${progress.step !== undefined ? ` (${progress.step})` : ''}`,
      };
    } else if (err instanceof ProbeFailure) {
      result = err.result;
      outcome = { result: err.result, status: err.status, error: err.message, detail: err.detail };
    } else if (!progress.responseHeaders && !connectionMade(err, progress, reused)) {
      result = 'connect_error';
      outcome = { result: 'connect_error', error: describe(err) };
    } else if (!progress.responseHeaders) {
      // The server accepted the connection (or it was a reused keep-alive one) and then dropped it: the
      // engine is there but answering badly, not down — the detector reads connect_error as "refused".
      result = 'bad_response';
      outcome = {
        result: 'bad_response',
        error: `connection closed before response headers: ${describe(err)}`,
      };
    } else {
      result = 'bad_response';
      outcome = {
        result: 'bad_response',
        error: `connection broke after the headers (HTTP ${progress.status}): ${describe(err)}`,
      };
    }
  } finally {
    timer.clear();
    unsubscribe();
    opts.cancel?.removeEventListener('abort', onCancel);
    await lease?.release();
    await Promise.all(extras.map((l) => l.release()));
  }
  const durationMs = progress.elapsed();
  const cancelled = opts.cancel?.aborted === true && timedOut === undefined && result !== 'ok';
  const signal: ProbeResultSignal = {
    kind: 'probe',
    target: opts.target,
    probe: opts.probe.name,
    probeKind: opts.probe.kind,
    endpoint: opts.hop.endpoint.name,
    conn: opts.conn,
    result,
    start,
    runId: randomBytes(8).toString('hex'),
    durationMs,
  };
  if (phase !== undefined) signal.phase = phase;
  // Only a loss worth judging by (the timeouts' own threshold): a few ms of our turns are in every run.
  const lost = Math.min(durationMs, Math.round(timer.lostMs()));
  if (lost >= LAG_MIN_EXTENSION_MS) signal.loopLostMs = lost;
  const status = outcome.status ?? progress.status;
  if (status !== undefined) signal.status = status;
  if (progress.ttftMs !== undefined) {
    signal.ttftMs = progress.ttftMs;
    // Read at the end of the run, when the sampler has recorded the lateness that delayed the first token's read.
    const ttftLost = Math.min(progress.ttftMs, Math.round(timer.lostInFirst(progress.ttftMs)));
    if (ttftLost >= LAG_MIN_EXTENSION_MS) signal.ttftLoopLostMs = ttftLost;
  }
  if (progress.requestIds.length > 0) signal.requestIds = [...progress.requestIds];
  if (progress.connectMs !== undefined) signal.connectMs = progress.connectMs;
  if (progress.headersMs !== undefined) signal.headersMs = progress.headersMs;
  signal.reusedConnection = reused;
  if (primed) signal.primedConnection = true;
  if (result === 'ok') {
    if (outcome.tokens !== undefined) signal.tokens = outcome.tokens;
    if (outcome.tokensPerSecond !== undefined) signal.tokensPerSecond = outcome.tokensPerSecond;
  }
  if (outcome.error !== undefined) signal.error = cleanError(outcome.error);
  if (outcome.detail !== undefined) signal.detail = cleanDetail(outcome.detail);
  if (opts.confirmation) signal.confirmation = true;
  progress.mark(
    `result ${result}${phase ? ` (phase ${phase})` : ''}${signal.error ? `: ${signal.error}` : ''}`,
  );
  return { signal, cancelled, progress };
}

/** Model output quoted in the history goes through the same redaction as errors. */
function cleanDetail(d: ProbeDetail): ProbeDetail {
  const out: ProbeDetail = {};
  if (d.answers) {
    out.answers = d.answers.map((a) => ({
      ...a,
      actual: cleanError(a.actual).slice(0, 200),
      ...(a.mixup !== undefined ? { mixup: cleanError(a.mixup) } : {}),
    }));
  }
  if (d.rounds) out.rounds = d.rounds.map((r) => ({ ...r }));
  if (d.cells) {
    out.cells = d.cells.map((c) =>
      c.error === undefined ? { ...c } : { ...c, error: cleanError(c.error).slice(0, 300) },
    );
  }
  return out;
}

function phaseWhat(phase: NonNullable<ProbeResultSignal['phase']>): string {
  switch (phase) {
    case 'connect':
      return 'connection';
    case 'headers':
      return 'response headers';
    case 'first_token':
      return 'first token';
    case 'stream':
      return 'end of response';
  }
}

/** Records a finished run in the probe metric families (labels target, probe, endpoint, conn, kind). */
export function recordResult(m: ProbeMetrics, r: ProbeResultSignal, now: number): void {
  const labels = {
    target: r.target,
    probe: r.probe,
    endpoint: r.endpoint,
    conn: r.conn,
    kind: r.probeKind,
  };
  m.probesTotal.inc({ ...labels, result: r.result });
  if (r.result === 'skipped_overlap') return;
  m.probeSuccess.set(labels, r.result === 'ok' ? 1 : 0);
  // The run id as the exemplar (shown in OpenMetrics only): from a latency bucket to the run in /api/probes.
  // prom-client types exemplarLabels with the metric's own label names; OpenMetrics exemplar labels are free-form.
  const exemplarLabels = (r.runId !== undefined ? { run_id: r.runId } : {}) as Partial<
    Record<keyof typeof labels, string>
  >;
  m.probeDuration.observe({ labels, value: r.durationMs / 1000, exemplarLabels });
  // A failed run records no TTFT: without this its time would vanish from every latency panel.
  if (r.result !== 'ok')
    m.probeFailureDuration.observe({ labels, value: r.durationMs / 1000, exemplarLabels });
  if (r.ttftMs !== undefined) m.probeTtft.observe({ labels, value: r.ttftMs / 1000, exemplarLabels });
  // A conversation's rounds: the last run's time to first token of each, so growth with context is a graph.
  for (const round of r.detail?.rounds ?? [])
    if (round.ttftMs !== undefined)
      m.probeRoundTtft.set({ ...labels, round: String(round.round) }, round.ttftMs / 1000);
  if (r.result === 'ok' && r.tokensPerSecond !== undefined)
    m.probeTokensPerSecond.set(labels, r.tokensPerSecond);
  m.probeLastRun.set(labels, now / 1000);
}
