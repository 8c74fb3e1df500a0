// GET /probe: blackbox_exporter-style on-demand probing (one run, metrics from a fresh registry, or a
// plain-text timeline with debug=true). GET /api/probes: recent results and failures from the schedulers.
import { dirname } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { Registry } from 'prom-client';
import type { LoadedConfig } from '../../config/load.js';
import { CONN_KINDS, onDemandInterval } from '../../config/kinds.js';
import { isCompletion } from '../../core/vocabulary.js';
import type { ProbeConfig, TargetConfig } from '../../config/schema.js';
import type { DaemonView } from './daemon-view.js';
import { createProbeMetrics } from '../../metrics.js';
import { EndpointDispatchers, tlsOptions } from '../../sources/probes/http.js';
import { recordResult, runProbe, type RunOutcome } from '../../sources/probes/runner.js';
import { HISTORY_LIMIT, probeConns } from '../../sources/probes/schedule.js';
import { REDACTED, redactor } from '../../lib/redact.js';
import type { ConnKind, ProbeResultSignal } from '../../core/signals.js';
import { visibleControls } from '../../lib/terminal-text.js';

/** As blackbox_exporter's --timeout-offset: leave the scraper time to receive the answer. */
const SCRAPE_TIMEOUT_OFFSET_MS = 500;
const SECRET_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i;

interface ProbeQuery {
  target?: string;
  probe?: string;
  endpoint?: string;
  conn?: string;
  debug?: string;
}

class BadRequest extends Error {}

function pick(loaded: LoadedConfig, q: ProbeQuery) {
  const targets = loaded.config.targets;
  if (!q.target)
    throw new BadRequest(`target parameter is missing (have: ${targets.map((t) => t.name).join(', ')})`);
  const target = targets.find((t) => t.name === q.target);
  if (target === undefined) {
    throw new BadRequest(
      `unknown target ${JSON.stringify(q.target)} (have: ${targets.map((t) => t.name).join(', ')})`,
    );
  }
  const names = target.probes.map((p) => p.name).join(', ') || 'none';
  if (!q.probe) throw new BadRequest(`probe parameter is missing (target ${target.name} has: ${names})`);
  const probe = target.probes.find((p) => p.name === q.probe);
  if (probe === undefined) {
    throw new BadRequest(
      `unknown probe ${JSON.stringify(q.probe)} for target ${target.name} (have: ${names})`,
    );
  }
  const hops = probe.endpoints ?? target.endpoints.map((e) => e.name);
  if (q.endpoint !== undefined && !hops.includes(q.endpoint)) {
    throw new BadRequest(
      `probe ${probe.name} does not run on endpoint ${JSON.stringify(q.endpoint)} (have: ${hops.join(', ')})`,
    );
  }
  if (q.conn !== undefined && !(CONN_KINDS as readonly string[]).includes(q.conn)) {
    throw new BadRequest(`conn must be one of ${CONN_KINDS.join(', ')}, got ${JSON.stringify(q.conn)}`);
  }
  const conns = q.conn !== undefined ? [q.conn as ConnKind] : probeConns(probe);
  const endpoints = q.endpoint !== undefined ? [q.endpoint] : hops;
  return { target, probe, endpoints, conns };
}

/**
 * The configuration a run used, secret header values masked (and everything passed through the redactor). yaml
 * is imported on the first debug=true request: the daemon does not load it otherwise (docs/decisions.md).
 */
async function configText(
  target: TargetConfig,
  probeName: string,
  endpoints: string[],
  loaded: LoadedConfig,
): Promise<string> {
  const { default: YAML } = await import('yaml');
  const probe = target.probes.find((p) => p.name === probeName);
  const headers = loaded.headers.get(target.name);
  const eps = target.endpoints
    .filter((e) => endpoints.includes(e.name))
    .map((e) => ({
      ...e,
      bearerToken: e.bearerToken === undefined ? undefined : REDACTED,
      headers: Object.fromEntries(
        Object.entries(headers?.get(e.name) ?? {}).map(([k, v]) => [k, SECRET_HEADER.test(k) ? REDACTED : v]),
      ),
    }));
  return YAML.stringify({ target: target.name, model: target.model, probe, endpoints: eps });
}

type Selection = ReturnType<typeof pick>;

/** One on-demand run of a probe on each selected hop and connection kind, metrics in a fresh registry. */
async function runAll(sel: Selection, probe: ProbeConfig, debug: boolean, loaded: LoadedConfig) {
  const registry = new Registry();
  const metrics = createProbeMetrics(registry);
  const runs: RunOutcome[] = [];
  const baseDir = dirname(loaded.path);
  for (const name of sel.endpoints) {
    const endpoint = sel.target.endpoints.find((e) => e.name === name)!;
    // A standalone dispatcher: an on-demand run must not disturb the scheduler's keep-alive connections.
    const hop = new EndpointDispatchers(endpoint, tlsOptions(endpoint, baseDir));
    try {
      for (const conn of sel.conns) {
        const out = await runProbe({
          target: sel.target.name,
          model: sel.target.model,
          probe,
          hop,
          conn,
          headers: loaded.headers.get(sel.target.name)?.get(name) ?? {},
          timeline: debug,
        });
        recordResult(metrics, out.signal, Date.now());
        runs.push(out);
      }
    } finally {
      await hop.close();
    }
  }
  return { runs, text: await registry.metrics() };
}

const CONTENT_TYPE = new Registry().contentType;

export function probeRoutes(daemon: DaemonView, opts: { now?: () => number } = {}): FastifyPluginAsync {
  const now = opts.now ?? Date.now;
  return async (app) => {
    // One on-demand run per (target, probe) at a time: each opens fresh connections to the engine, so
    // unbounded /probe calls would be a load generator pointed at the thing being watched.
    const inFlight = new Set<string>();
    /** When each completion probe last ran on demand (the onDemandInterval limit). */
    const lastRun = new Map<string, number>();
    // A GET that makes the engine work: refused cross-site (app.ts), so a web page cannot drive it.
    app.get<{ Querystring: ProbeQuery }>('/probe', { config: { sideEffects: true } }, async (req, reply) => {
      const loaded = daemon.loaded;
      let sel: ReturnType<typeof pick>;
      try {
        sel = pick(loaded, req.query);
      } catch (err) {
        if (err instanceof BadRequest) return reply.code(400).type('text/plain').send(`${err.message}\n`);
        throw err;
      }
      const debug = req.query.debug === 'true';
      // The scrape timeout bounds how long the caller waits, never the probe's own timeout: a completion cut
      // short is a client abort to the engine, and on some NIXL builds an abort kills the bootstrap thread
      // (docs/design.md#principles, 3). A run past the caller's wait goes on to its configured end.
      let callerWaitMs = Infinity;
      const scrapeTimeout = Number(req.headers['x-prometheus-scrape-timeout-seconds']);
      if (Number.isFinite(scrapeTimeout) && scrapeTimeout > 0) {
        callerWaitMs = Math.max(100, scrapeTimeout * 1000 - SCRAPE_TIMEOUT_OFFSET_MS);
      }
      const probe = sel.probe;
      const what = `probe ${probe.name} of target ${sel.target.name}`;
      const key = JSON.stringify([sel.target.name, probe.name]);
      if (inFlight.has(key)) {
        return reply
          .code(429)
          .type('text/plain')
          .send(`${what} is already running from another /probe request; retry when it finishes\n`);
      }
      if (isCompletion(probe.kind)) {
        const policy = loaded.config.web.onDemandCompletions;
        if (policy === 'off' || (policy === 'authenticated' && daemon.web?.auth.enabled() !== true)) {
          return reply
            .code(403)
            .type('text/plain')
            .send(
              policy === 'off'
                ? `on-demand runs of completion probes are off (web.onDemandCompletions: off)\n`
                : `on-demand runs of completion probes need authenticated callers (web.onDemandCompletions: authenticated), and no basic auth users are configured (--web.config.file)\n`,
            );
        }
      }
      // Every kind is engine work: SGLang's /health_generate runs a one-token generation
      // (sgl-project/sglang python/sglang/srt/entrypoints/http_server.py L163-186 at 9c0549b7), and later
      // releases serve /health with the same handler; /get_server_info is a scheduler round trip. A sequential
      // caller looping on /probe must not out-run the schedule, whatever the kind.
      const interval = onDemandInterval(probe);
      const last = lastRun.get(key);
      const t = now();
      if (last !== undefined && t - last < interval) {
        const retry = Math.max(1, Math.ceil((interval - (t - last)) / 1000));
        return reply
          .code(429)
          .header('Retry-After', String(retry))
          .type('text/plain')
          .send(
            `${what} ran on demand ${((t - last) / 1000).toFixed(1)} s ago; probes run on demand at most once per ${interval / 1000} s (onDemandInterval); retry in ${retry} s\n`,
          );
      }
      lastRun.set(key, t);
      inFlight.add(key);
      const work = runAll(sel, probe, debug, loaded).finally(() => inFlight.delete(key));
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<'waited'>((resolve) => {
        if (callerWaitMs !== Infinity) timer = setTimeout(() => resolve('waited'), callerWaitMs);
      });
      const first = await Promise.race([work, waited]).finally(() => clearTimeout(timer));
      if (first === 'waited') {
        work.catch((err: unknown) =>
          req.log.warn(
            { err: redactor.redact(String(err)) },
            'on-demand probe run failed after its caller left',
          ),
        );
        return reply
          .code(504)
          .type('text/plain')
          .send(
            `${what} did not finish within the caller's wait (scrape timeout ${scrapeTimeout} s); it runs on to its own timeout (${probe.timeout / 1000} s) rather than cut a completion short\n`,
          );
      }
      const { runs, text } = first;
      if (!debug) return reply.type(CONTENT_TYPE).send(text);
      const parts: string[] = [];
      for (const r of runs) {
        const s = r.signal;
        parts.push(
          `Timeline for probe ${s.probe} (${s.probeKind}) of target ${s.target}, endpoint ${s.endpoint}, conn ${s.conn}:`,
        );
        parts.push(...r.progress.lines());
        parts.push(
          `Result: ${s.result}${s.phase ? ` (phase ${s.phase})` : ''}${s.status ? `, HTTP ${s.status}` : ''}`,
        );
        if (s.error) parts.push(`Error: ${s.error}`);
        parts.push('');
      }
      parts.push('Metrics that would have been returned:', text, 'Probe configuration:');
      parts.push(await configText(sel.target, probe.name, sel.endpoints, loaded));
      // Engine bodies and timelines, read in a terminal: escapes are shown, not run (src/lib/terminal-text.ts).
      return reply.type('text/plain; charset=utf-8').send(visibleControls(redactor.redact(parts.join('\n'))));
    });
    app.get<{ Querystring: { target?: string } }>('/api/probes', async (req, reply) => {
      const schedulers = daemon.runtime?.probes ?? new Map();
      if (req.query.target !== undefined && !schedulers.has(req.query.target)) {
        return reply.code(400).send({ error: `unknown target ${JSON.stringify(req.query.target)}` });
      }
      const results: ProbeResultSignal[] = [];
      const failures: ProbeResultSignal[] = [];
      const inflight: Array<Record<string, unknown>> = [];
      for (const [name, s] of schedulers) {
        if (req.query.target !== undefined && name !== req.query.target) continue;
        const r = s.recent();
        results.push(...r.results);
        failures.push(...r.failures);
        for (const f of s.inflight()) inflight.push({ target: name, ...f });
      }
      const last = (xs: ProbeResultSignal[]) => xs.sort((a, b) => a.start - b.start).slice(-HISTORY_LIMIT);
      return reply.send({ results: last(results), failures: last(failures), inflight });
    });
  };
}
