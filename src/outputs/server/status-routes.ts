// GET /api/status (per target: state, since, diagnosis, last result per probe × hop × conn, recent events,
// changes since the last ok, remediation pause) and GET /api/events?since=&target=&after=&limit= (journal).
import type { FastifyPluginAsync } from 'fastify';
import type { DaemonView, WatchdogView } from './daemon-view.js';

export interface StatusRouteDeps {
  /** The running watchdog (replaced on reload, so looked up per request). */
  watchdog: () => WatchdogView | undefined;
  now?: () => number;
}

/** Unix ms, or an RFC 3339 / ISO 8601 date. */
function parseSince(v: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

export function statusRoutes(deps: StatusRouteDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/status', async (_req, reply) => {
      const w = deps.watchdog();
      if (!w) return reply.code(503).send({ error: 'the watchdog is not running yet' });
      return reply.send({ time: (deps.now ?? Date.now)(), targets: w.status() });
    });

    app.get<{ Querystring: Record<string, string | undefined> }>('/api/events', async (req, reply) => {
      const w = deps.watchdog();
      if (!w) return reply.code(503).send({ error: 'the watchdog is not running yet' });
      const q = req.query;
      const since = q.since === undefined ? undefined : parseSince(q.since);
      if (q.since !== undefined && since === undefined) {
        return reply.code(400).send({ error: 'since: expected Unix milliseconds or an RFC 3339 time' });
      }
      const after = q.after === undefined ? undefined : Number(q.after);
      if (after !== undefined && !Number.isInteger(after)) {
        return reply.code(400).send({ error: 'after: expected an event sequence number' });
      }
      const limit = q.limit === undefined ? 1000 : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        return reply.code(400).send({ error: 'limit: expected an integer from 1 to 10000' });
      }
      if (q.target !== undefined && !w.targets.has(q.target)) {
        return reply
          .code(404)
          .send({ error: `unknown target ${JSON.stringify(q.target)}`, targets: [...w.targets.keys()] });
      }
      const events = w.journal.query({ since, afterSeq: after, target: q.target, type: q.type, limit });
      return reply.send({ events });
    });
  };
}

export function daemonStatusRoutes(daemon: DaemonView): FastifyPluginAsync {
  return statusRoutes({ watchdog: () => daemon.runtime?.watchdog });
}
