// POST /api/targets/:name/remediation/pause|resume: an operator doing manual work stops the watchdog from
// restarting things. Write endpoints: they exist only with web.enableLifecycle (404 otherwise), and the auth
// hook in front of every route already demands credentials when users are configured.
import type { FastifyPluginAsync } from 'fastify';
import { parseDuration } from '../../config/duration-text.js';
import type { DaemonView } from './daemon-view.js';
import { parseBasicAuth } from './auth.js';

/** What the watchdog offers (src/watchdog.ts): pause/resume remediation for one target; it also sets
 *  the wedgewatch_remediation_paused metric and journals the change. */
export interface RemediationControl {
  /** Pauses remediation of `target`, for `forMs` from now (until resumed when absent). */
  pause(target: string, by?: string, forMs?: number): boolean;
  resume(target: string, by?: string): boolean;
  isPaused(target: string): boolean;
}

export interface RemediationRouteDeps {
  lifecycleEnabled: () => boolean;
  targets: () => string[];
  /** The running watchdog, or undefined while none runs (it is replaced on reload, so looked up per request). */
  control: () => RemediationControl | undefined;
}

const ACTIONS = ['pause', 'resume'] as const;

export function remediationRoutes(deps: RemediationRouteDeps): FastifyPluginAsync {
  return async (app) => {
    for (const action of ACTIONS) {
      app.post<{ Params: { name: string } }>(
        `/api/targets/:name/remediation/${action}`,
        async (req, reply) => {
          if (!deps.lifecycleEnabled()) {
            return reply
              .code(404)
              .type('text/plain')
              .send('Lifecycle API is not enabled (--web.enable-lifecycle or web.enableLifecycle).\n');
          }
          const name = req.params.name;
          if (!deps.targets().includes(name)) {
            // The name is echoed as JSON, never as HTML.
            return reply
              .code(404)
              .send({ error: `unknown target ${JSON.stringify(name)}`, targets: deps.targets() });
          }
          const control = deps.control();
          if (control === undefined) {
            return reply.code(503).send({ error: 'the watchdog is not running yet' });
          }
          // Who: the basic auth user when there is one, else the caller's address.
          const by = parseBasicAuth(req.headers.authorization)?.user ?? req.ip;
          let forMs: number | undefined;
          const forText = (req.body as { for?: unknown } | undefined)?.for;
          if (action === 'pause' && forText !== undefined) {
            const ms = typeof forText === 'string' ? parseDuration(forText) : undefined;
            if (ms === undefined)
              return reply
                .code(400)
                .send({ error: `"for" must be a duration like "30m", got ${JSON.stringify(forText)}` });
            forMs = ms;
          }
          if (action === 'pause') control.pause(name, by, forMs);
          else control.resume(name, by);
          const paused = control.isPaused(name);
          req.log.warn(
            { target: name, action, ip: req.ip },
            `remediation ${paused ? 'paused' : 'resumed'} by an operator`,
          );
          return reply.send({ target: name, remediationPaused: paused });
        },
      );
    }
  };
}

/** The plugin wired to a daemon: the watchdog is looked up on the current runtime at request time. */
export function daemonRemediationRoutes(daemon: DaemonView): FastifyPluginAsync {
  return remediationRoutes({
    lifecycleEnabled: () => daemon.lifecycleEnabled(),
    targets: () => daemon.loaded.config.targets.map((t) => t.name),
    control: () => daemon.runtime?.watchdog,
  });
}
