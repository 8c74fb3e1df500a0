// GET /ready/<target>[/<endpoint>]: 200 while the backend is in rotation, 503 while it is out, with its state,
// diagnosis and since when (text, or JSON on Accept: application/json or ?format=json). For load balancers'
// HTTP checks (HAProxy option httpchk, Envoy, nginx) and Kubernetes readiness probes: it reads the cached view
// (src/outputs/traffic/view.ts), never waits for a probe, and sits behind the same auth and rate limit as every
// route (the app's onRequest hooks).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TrafficAnswer } from '../traffic/view.js';

/** What the route needs of the daemon: the current view (a reload replaces it) and the target names. */
export interface ReadyView {
  traffic():
    | { get(t: string, e?: string): TrafficAnswer | undefined; has(t: string, e?: string): boolean }
    | undefined;
  targets(): string[];
}

const iso = (ms: number) => new Date(ms).toISOString();

function wantsJson(req: FastifyRequest<{ Querystring: { format?: string } }>): boolean {
  if (req.query.format === 'json') return true;
  const accept = String(req.headers.accept ?? '');
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/plain\b/i.test(accept.split(',')[0] ?? '');
}

/** One line a person (or a load balancer's log) reads. */
export function readyText(a: TrafficAnswer): string {
  const what = a.endpoint === undefined ? a.target : `${a.target}/${a.endpoint}`;
  const state = `${a.state}${a.diagnosis !== null ? ` (${a.diagnosis})` : ''} since ${iso(a.since)}`;
  if (a.held)
    return `ready (held in): ${what} is ${state}, but it is the last of pool ${a.pool ?? ''} in rotation, so it stays in: ${a.cause}\n`;
  if (a.inRotation) return `ready: ${what} is ${state}; in rotation since ${iso(a.changedAt)}\n`;
  const why = a.reason === 'hop_failing' ? `completions through ${what} fail` : a.cause;
  return `not ready: ${what} is ${state}; out of rotation since ${iso(a.changedAt)}: ${why}\n`;
}

export function readyJson(a: TrafficAnswer) {
  return {
    target: a.target,
    ...(a.endpoint !== undefined ? { endpoint: a.endpoint } : {}),
    ready: a.inRotation,
    held: a.held,
    state: a.state,
    diagnosis: a.diagnosis,
    since: iso(a.since),
    changedAt: iso(a.changedAt),
    ...(a.reason !== undefined ? { reason: a.reason } : {}),
    ...(a.pool !== undefined ? { pool: a.pool } : {}),
    cause: a.cause,
  };
}

export function readyRoutes(view: ReadyView): FastifyPluginAsync {
  return async (app) => {
    const answer = async (
      req: FastifyRequest<{
        Params: { target: string; endpoint?: string };
        Querystring: { format?: string };
      }>,
      reply: FastifyReply,
    ) => {
      const json = wantsJson(req);
      // Polled every second from many places: never cached by a proxy in between.
      reply.header('cache-control', 'no-store');
      const { target, endpoint } = req.params;
      const traffic = view.traffic();
      if (traffic === undefined) {
        const text = 'not ready: the watchdog is not running yet';
        return json
          ? reply.code(503).send({ ready: false, error: text })
          : reply.code(503).type('text/plain; charset=utf-8').send(`${text}\n`);
      }
      if (!traffic.has(target, endpoint)) {
        // Names are echoed as JSON strings only, never into HTML.
        const error = `unknown ${endpoint === undefined ? 'target' : 'target or endpoint'} ${JSON.stringify(endpoint === undefined ? target : `${target}/${endpoint}`)}`;
        return json
          ? reply.code(404).send({ error, targets: view.targets() })
          : reply
              .code(404)
              .type('text/plain; charset=utf-8')
              .send(`${error} (targets: ${view.targets().join(', ')})\n`);
      }
      const a = traffic.get(target, endpoint);
      if (a === undefined) {
        const text = 'not ready: no verdict yet';
        return json
          ? reply.code(503).send({ ready: false, state: 'unknown', error: text })
          : reply.code(503).type('text/plain; charset=utf-8').send(`${text}\n`);
      }
      reply.code(a.inRotation ? 200 : 503);
      return json ? reply.send(readyJson(a)) : reply.type('text/plain; charset=utf-8').send(readyText(a));
    };
    app.get('/ready/:target', answer);
    app.get('/ready/:target/:endpoint', answer);
  };
}
