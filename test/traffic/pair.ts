// Two simulated SGLang deployments behind a real HAProxy, watched by one daemon (pool `engines`): the setup of
// issue 43's acceptance test and of bench/drain.ts. HAProxy checks each server one of three ways: through
// wedgewatch's agent port, through GET /ready as `option httpchk`'s target, or (the baseline without wedgewatch
// in the traffic path) `option httpchk` on the deployment's own /health, which stays 200 while it is wedged.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { quietLogger } from '../helpers/logger.js';
import { startHaproxy, type Haproxy } from './haproxy.js';

export const TARGETS = ['a', 'b'] as const;
export type PairTarget = (typeof TARGETS)[number];

/** How HAProxy decides a server is up. */
export type CheckMode = 'agent' | 'httpchk' | 'health';

export interface Pair {
  sims: Record<PairTarget, Sim>;
  daemon: Daemon;
  haproxy: Haproxy;
  /** The daemon's base URL. */
  base(): string;
  /** HAProxy's status column for one server (UP, DOWN, …). */
  statusOf(name: PairTarget): Promise<string>;
  stop(): Promise<void>;
}

function config(dir: string, sims: Record<PairTarget, Sim>, agent: boolean): string {
  const targets = TARGETS.map(
    (t) => `
  - name: ${t}
    endpoints: [{ name: router, url: "${sims[t].urls.router}" }]
    probes:
      - { name: chat, kind: chat, every: 1s, timeout: 1s, maxTokens: 4, conn: [fresh] }
    detect: { wedgeAfter: 2, recoverAfter: 2 }`,
  ).join('');
  return `
web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:${targets}
pools:
  - name: engines
    members: [{ target: a }, { target: b }]
${agent ? `agent:\n  listenAddress: "127.0.0.1:0"\n  servers: [{ name: a, target: a }, { name: b, target: b }]\n` : ''}`;
}

/**
 * Starts both deployments, the daemon and HAProxy. `waitingTimeoutMs`: the simulated PD timeouts, i.e. how long
 * a request on a wedged deployment hangs before SGLang itself gives up on it.
 */
export async function startPair(dir: string, check: CheckMode, waitingTimeoutMs = 60_000): Promise<Pair> {
  const sims = {} as Record<PairTarget, Sim>;
  let daemon: Daemon | undefined;
  let haproxy: Haproxy | undefined;
  const stop = async () => {
    await haproxy?.stop();
    await daemon?.stop();
    for (const s of Object.values(sims)) await s.stop();
  };
  try {
    for (const t of TARGETS)
      sims[t] = await startSim({ waitingTimeoutMs, bootstrapTimeoutMs: waitingTimeoutMs });
    const file = join(dir, 'wedgewatch.yaml');
    writeFileSync(file, config(dir, sims, check === 'agent'));
    const d = new Daemon({ configPath: file, logger: quietLogger(), plugins: routePlugins });
    daemon = d;
    await d.start();
    const daemonPort = Number(d.address().split(':').pop());
    const servers = TARGETS.map((t) => {
      const addr = new URL(sims[t].urls.router).host;
      switch (check) {
        case 'agent':
          return {
            name: t,
            addr,
            checks: `check inter 1s agent-check agent-addr 127.0.0.1 agent-port ${d.agent!.address().port} agent-inter 500ms agent-send "${t}\\n"`,
          };
        case 'httpchk':
          return { name: t, addr, checks: `check inter 500ms addr 127.0.0.1 port ${daemonPort}` };
        case 'health':
          return { name: t, addr, checks: 'check inter 500ms' };
      }
    });
    const extra =
      check === 'httpchk'
        ? [
            'option httpchk',
            `http-check send meth GET uri-lf /ready/%[srv_name] ver HTTP/1.1 hdr host 127.0.0.1:${daemonPort}`,
            'http-check expect status 200',
          ]
        : check === 'health'
          ? [
              'option httpchk',
              'http-check send meth GET uri /health ver HTTP/1.1 hdr host 127.0.0.1',
              'http-check expect status 200',
            ]
          : [];
    haproxy = await startHaproxy(dir, servers, extra);
    const h = haproxy;
    return {
      sims,
      daemon: d,
      haproxy: h,
      base: () => `http://${d.address()}`,
      statusOf: async (name) => (await h.status()).get(name) ?? '',
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export type UserOutcome = 'ok' | 'failed' | 'hung';

/** A user request through HAProxy: 'ok' when the completion arrives whole, 'hung' when the deadline passes. */
export async function userRequest(port: number, dispatcher: Agent, timeoutMs = 15_000): Promise<UserOutcome> {
  try {
    const res = await request(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-model',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await res.body.text();
    return res.statusCode === 200 && body.includes('"choices"') ? 'ok' : 'failed';
  } catch (err) {
    return (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError' ? 'hung' : 'failed';
  }
}

/** When the journal recorded `target`'s transition to `to` after `after` (the verdict's time). */
export function transitionAt(d: Daemon, target: string, to: string, after: number): number | undefined {
  return d.runtime?.watchdog?.journal
    .query({ target, type: 'transition', since: after, limit: 100 })
    .find((e) => e.data?.to === to)?.time;
}
