// GET /: the status page, rendered from the running runtime on every request (the page refreshes itself).
import type { FastifyPluginAsync } from 'fastify';
import type { Daemon } from '../daemon.js';
import type { TargetStatus } from '../detect/watchdog.js';
import type { ProbeResultSignal, Severity } from '../signals.js';
import { VERSION } from '../version.js';
import { renderStatusPage, STATUS_PAGE_CSP, type ProbeCellView, type StatusView } from './status-page.js';

/** The last result per probe × hop × connection kind, from a scheduler's recent results (oldest first). */
export function lastResults(results: ProbeResultSignal[]): ProbeCellView[] {
  const last = new Map<string, ProbeResultSignal>();
  for (const r of results) {
    if (r.result === 'skipped_overlap' && last.has(`${r.probe}|${r.endpoint}|${r.conn}`)) continue;
    last.set(`${r.probe}|${r.endpoint}|${r.conn}`, r);
  }
  return [...last.values()].map((r) => ({
    probe: r.probe,
    endpoint: r.endpoint,
    conn: r.conn,
    result: r.result,
    durationMs: r.durationMs,
    ttftMs: r.ttftMs,
    status: r.status,
    phase: r.phase,
    error: r.error,
    start: r.start,
  }));
}

const SEVERITY: Record<string, Severity> = {
  critical_log: 'critical',
  critical_confirmed: 'critical',
  engine_stalled: 'warning',
  probe_failing: 'warning',
  critical_unconfirmed: 'warning',
  remediation: 'warning',
};

/** The page's view of the watchdog's status (the same data GET /api/status serves). */
export function fromTargetStatus(t: TargetStatus): StatusView {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    target: t.target,
    state: t.state,
    since: t.since,
    diagnosis: t.diagnosis ?? undefined,
    cause: t.cause || undefined,
    endpoints: t.endpoints,
    probes: t.probes.map((p) => ({
      probe: p.probe,
      endpoint: p.endpoint,
      conn: p.conn,
      result: p.result,
      durationMs: p.durationMs,
      ttftMs: p.ttftMs,
      status: p.status,
      phase: p.phase,
      error: p.error,
      start: p.start,
    })),
    events: t.recentEvents.map((e) => ({
      time: e.time,
      kind: e.type,
      severity: SEVERITY[e.type] ?? 'info',
      service: str(e.data?.service),
      rule: str(e.data?.rule),
      text: e.summary,
    })),
    changes: t.changesSinceOk.map((e) => ({
      time: e.time,
      path: str(e.data?.path) ?? e.summary,
      diff: str(e.data?.diff),
    })),
    remediationPaused: t.remediation.paused,
  };
}

/** From the watchdog when it runs; before it does, the configured targets with their probe results. */
export function statusViews(daemon: Daemon): StatusView[] {
  const watchdog = daemon.runtime?.watchdog;
  if (watchdog) return watchdog.status().map(fromTargetStatus);
  const targets = daemon.loaded?.config.targets ?? [];
  return targets.map((t) => ({
    target: t.name,
    state: 'unknown',
    since: Number.NaN,
    endpoints: t.endpoints.map((e) => e.name),
    probes: lastResults(daemon.runtime?.probes?.get(t.name)?.recent().results ?? []),
    events: [],
    changes: [],
    remediationPaused: false,
  }));
}

export function statusPageRoutes(daemon: Daemon): FastifyPluginAsync {
  return async (app) => {
    app.get('/', async (_req, reply) =>
      reply
        .header('Content-Security-Policy', STATUS_PAGE_CSP)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(renderStatusPage(statusViews(daemon), { version: VERSION })),
    );
  };
}
