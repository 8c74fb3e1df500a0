// GET /: the status page, rendered from the running runtime on every request (the page refreshes itself).
import type { FastifyPluginAsync } from 'fastify';
import type { DaemonView } from './daemon-view.js';
import type { TargetStatus } from './status-view.js';
import type { ProbeResultSignal, Severity } from '../../core/signals.js';
import { VERSION } from '../../version.js';
import type { Journal } from '../journal/journal.js';
import { RANGE_NAMES, RANGES, type ProbeHistory, type RangeName } from '../../sources/probes/history.js';
import {
  DEFAULT_RANGE,
  renderStatusPage,
  STATUS_PAGE_CSP,
  type ProbeCellView,
  type StatusView,
} from './status-page.js';
import { buildStrip } from './status-strip.js';

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
  drain: 'warning',
  undrain: 'warning',
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
      service: 'service' in e.data ? str(e.data.service) : undefined,
      rule: 'rule' in e.data ? str(e.data.rule) : undefined,
      text: e.summary,
    })),
    changes: t.changesSinceOk.map((e) => ({
      time: e.time,
      path: e.data.path,
      diff: e.data.diff,
    })),
    remediationPaused: t.remediation.paused,
    ...(t.traffic !== undefined ? { traffic: t.traffic } : {}),
  };
}

/** ?range=1h|6h|24h; anything else is the default (the page links only to these). */
export function parseRange(v: unknown): RangeName {
  return (RANGE_NAMES as unknown[]).includes(v) ? (v as RangeName) : DEFAULT_RANGE;
}

/** The shortest window drawn: a daemon started a minute ago still gets a readable strip. */
export const MIN_WINDOW_MS = 60_000;

/**
 * The range, cut to what the journal holds (no less than MIN_WINDOW_MS): a fresh daemon's strip is its own
 * minutes drawn wide, not a sliver at the end of 6 h of "no history". It widens as history accrues.
 */
export function windowStart(range: RangeName, now: number, oldest: number | undefined): number {
  return Math.max(now - RANGES[range], Math.min(oldest ?? now, now - MIN_WINDOW_MS));
}

/** Adds the strip (from the journal) and the sparklines (from the probe history) over the range to a view. */
export function withHistory(
  v: StatusView,
  sources: { journal?: Journal; history?: ProbeHistory },
  range: RangeName,
  now: number,
): StatusView {
  const { journal, history } = sources;
  const from = windowStart(range, now, journal?.oldestTime());
  return {
    ...v,
    strip: journal
      ? buildStrip({
          // Every event of the target the journal holds: the state at the window's start may be set long before.
          events: journal.query({ target: v.target, limit: Number.POSITIVE_INFINITY }),
          coveredFrom: journal.oldestTime(),
          current: { state: v.state, since: v.since, diagnosis: v.diagnosis, cause: v.cause },
          from,
          to: now,
        })
      : undefined,
    history: history?.series(v.target, from, now),
  };
}

/** From the watchdog when it runs; before it does, the configured targets with their probe results. */
export function statusViews(
  daemon: DaemonView,
  range: RangeName = DEFAULT_RANGE,
  now = Date.now(),
): StatusView[] {
  const watchdog = daemon.runtime?.watchdog;
  const sources = { journal: watchdog?.journal, history: daemon.runtime?.probeHistory };
  if (watchdog) return watchdog.status().map((t) => withHistory(fromTargetStatus(t), sources, range, now));
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

export function statusPageRoutes(daemon: DaemonView): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Querystring: { range?: string } }>('/', async (req, reply) => {
      const range = parseRange(req.query.range);
      const now = Date.now();
      return reply
        .header('Content-Security-Policy', STATUS_PAGE_CSP)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(renderStatusPage(statusViews(daemon, range, now), { version: VERSION, range, now }));
    });
  };
}
