// Issue 43's acceptance with a real HAProxy in front of two simulated SGLang deployments: one wedges, HAProxy
// takes it out through wedgewatch (the agent-check port, or GET /ready as option httpchk's target) within 5 s of
// the verdict, user requests through HAProxy all finish, it comes back after recovery, and with both wedged the
// last one stays in rotation and the status page says so.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';
import { startHaproxy, type Haproxy } from './haproxy.js';

const TARGETS = ['a', 'b'] as const;

function config(dir: string, sims: Record<string, Sim>, agent: boolean): string {
  const targets = TARGETS.map(
    (t) => `
  - name: ${t}
    endpoints: [{ name: router, url: "${sims[t]!.urls.router}" }]
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

/** A user request through HAProxy: 'ok' when the completion arrives whole, 'hung' when the deadline passes. */
async function userRequest(port: number, dispatcher: Agent): Promise<'ok' | 'failed' | 'hung'> {
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
      signal: AbortSignal.timeout(15_000),
    });
    const body = await res.body.text();
    return res.statusCode === 200 && body.includes('"choices"') ? 'ok' : 'failed';
  } catch (err) {
    return (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError' ? 'hung' : 'failed';
  }
}

function transitionAt(d: Daemon, target: string, to: string, after: number): number | undefined {
  return d.runtime?.watchdog?.journal
    .query({ target, type: 'transition', since: after, limit: 100 })
    .find((e) => e.data?.to === to)?.time;
}

describe.each([{ check: 'agent' as const }, { check: 'httpchk' as const }])(
  'HAProxy in front of two engines, checking through $check',
  ({ check }) => {
    const dir = mkdtempSync(join(tmpdir(), `ww-haproxy-${check}-`));
    const sims: Record<string, Sim> = {};
    let daemon: Daemon;
    let haproxy: Haproxy;
    const users = new Agent({ connections: 16 });
    const base = () => `http://${daemon.address()}`;

    beforeAll(async () => {
      for (const t of TARGETS)
        sims[t] = await startSim({ waitingTimeoutMs: 60_000, bootstrapTimeoutMs: 60_000 });
      const file = join(dir, 'wedgewatch.yaml');
      writeFileSync(file, config(dir, sims, check === 'agent'));
      daemon = new Daemon({ configPath: file, logger: quietLogger(), plugins: routePlugins });
      await daemon.start();
      const daemonPort = Number(daemon.address().split(':').pop());
      const servers = TARGETS.map((t) => {
        const addr = new URL(sims[t]!.urls.router).host;
        return check === 'agent'
          ? {
              name: t,
              addr,
              checks: `check inter 1s agent-check agent-addr 127.0.0.1 agent-port ${daemon.agent!.address().port} agent-inter 500ms agent-send "${t}\\n"`,
            }
          : { name: t, addr, checks: `check inter 500ms addr 127.0.0.1 port ${daemonPort}` };
      });
      const extra =
        check === 'httpchk'
          ? [
              'option httpchk',
              `http-check send meth GET uri-lf /ready/%[srv_name] ver HTTP/1.1 hdr host 127.0.0.1:${daemonPort}`,
              'http-check expect status 200',
            ]
          : [];
      haproxy = await startHaproxy(dir, servers, extra);
    });

    afterAll(async () => {
      await haproxy?.stop();
      await daemon?.stop();
      await users.close();
      for (const s of Object.values(sims)) await s.stop();
    });

    const statusOf = async (name: string) => (await haproxy.status()).get(name) ?? '';

    it('takes the wedged engine out within 5 s of the verdict, loses no request, and puts it back on recovery', async () => {
      await waitFor(
        async () => (await statusOf('a')).startsWith('UP') && (await statusOf('b')).startsWith('UP'),
        {
          timeoutMs: 30_000,
          what: () => `both servers UP in HAProxy (log: ${haproxy.log().slice(-500)})`,
        },
      );
      const before = Date.now();
      sims.a!.enableFault('decode_stall');
      const verdictAt = await waitFor(() => transitionAt(daemon, 'a', 'wedged', before), {
        timeoutMs: 30_000,
        what: 'target a wedged',
      });
      const downAt = await waitFor(
        async () => ((await statusOf('a')).startsWith('DOWN') ? Date.now() : undefined),
        {
          timeoutMs: 15_000,
          intervalMs: 50,
          what: 'HAProxy marking server a down',
        },
      );
      const state = await haproxy.serversState();
      expect(state).toMatch(/\bengines \d+ a 127\.0\.0\.1 0 /); // srv_op_state 0: stopped (HAProxy's own view)
      expect(downAt - verdictAt).toBeLessThan(5_000);

      const results = await Promise.all(Array.from({ length: 20 }, () => userRequest(haproxy.port, users)));
      expect(results.filter((r) => r === 'hung')).toEqual([]);
      expect(results.filter((r) => r === 'ok')).toHaveLength(20);

      const ready = await request(`${base()}/ready/a?format=json`);
      expect(ready.statusCode).toBe(503);
      expect(await ready.body.json()).toMatchObject({
        target: 'a',
        ready: false,
        state: 'wedged',
        held: false,
      });

      sims.a!.disableFault('decode_stall');
      await waitFor(() => daemon.runtime?.watchdog?.targets.get('a')?.state.state === 'ok', {
        timeoutMs: 30_000,
        what: 'target a ok again',
      });
      await waitFor(async () => (await statusOf('a')).startsWith('UP'), {
        timeoutMs: 15_000,
        what: 'HAProxy putting server a back',
      });
      expect((await request(`${base()}/ready/a`)).statusCode).toBe(200);
    });

    it('with both wedged keeps the last one in rotation, and the status page says so', async () => {
      const before = Date.now();
      for (const t of TARGETS) sims[t]!.enableFault('decode_stall');
      for (const t of TARGETS)
        await waitFor(() => transitionAt(daemon, t, 'wedged', before), {
          timeoutMs: 30_000,
          what: `${t} wedged`,
        });
      const up = await waitFor(
        async () => {
          const s = await haproxy.status();
          const ups = TARGETS.filter((t) => s.get(t)?.startsWith('UP'));
          const downs = TARGETS.filter((t) => s.get(t)?.startsWith('DOWN'));
          if (ups.length !== 1 || downs.length !== 1) return undefined;
          // HAProxy's rise and fall lag the answer: wait until its one server up is the one wedgewatch holds in.
          const held = daemon.runtime?.traffic?.view.get(ups[0]!);
          return held?.held === true ? ups[0] : undefined;
        },
        { timeoutMs: 15_000, what: 'one server UP (the one held in) and one DOWN in HAProxy' },
      );
      const held = await request(`${base()}/ready/${up}?format=json`);
      expect(held.statusCode).toBe(200);
      expect(await held.body.json()).toMatchObject({
        ready: true,
        held: true,
        state: 'wedged',
        pool: 'engines',
      });
      const page = await (await request(`${base()}/`)).body.text();
      expect(page).toContain(`data-backend="${up}" data-in-rotation="true" data-held="true"`);
      expect(page).toContain('the last healthy backend of pool <code>engines</code> is never drained');
      for (const t of TARGETS) sims[t]!.disableFault('decode_stall');
    });
  },
);
