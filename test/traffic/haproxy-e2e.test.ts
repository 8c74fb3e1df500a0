// Issue 43's acceptance with a real HAProxy in front of two simulated SGLang deployments: one wedges, HAProxy
// takes it out through wedgewatch (the agent-check port, or GET /ready as option httpchk's target) within 5 s of
// the verdict, user requests through HAProxy all finish, it comes back after recovery, and with both wedged the
// last one stays in rotation and the status page says so.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startPair, transitionAt, TARGETS, userRequest, type Pair } from './pair.js';

describe.each([{ check: 'agent' as const }, { check: 'httpchk' as const }])(
  'HAProxy in front of two engines, checking through $check',
  ({ check }) => {
    const dir = mkdtempSync(join(tmpdir(), `ww-haproxy-${check}-`));
    let pair: Pair;
    const users = new Agent({ connections: 16 });
    const base = () => pair.base();
    const statusOf = (name: 'a' | 'b') => pair.statusOf(name);

    beforeAll(async () => {
      pair = await startPair(dir, check);
    });

    afterAll(async () => {
      await pair?.stop();
      await users.close();
    });

    it('takes the wedged engine out within 5 s of the verdict, loses no request, and puts it back on recovery', async () => {
      await waitFor(
        async () => (await statusOf('a')).startsWith('UP') && (await statusOf('b')).startsWith('UP'),
        {
          timeoutMs: 30_000,
          what: () => `both servers UP in HAProxy (log: ${pair.haproxy.log().slice(-500)})`,
        },
      );
      const before = Date.now();
      pair.sims.a.enableFault('decode_stall');
      const verdictAt = await waitFor(() => transitionAt(pair.daemon, 'a', 'wedged', before), {
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
      const state = await pair.haproxy.serversState();
      expect(state).toMatch(/\bengines \d+ a 127\.0\.0\.1 0 /); // srv_op_state 0: stopped (HAProxy's own view)
      // The figure the acceptance bounds, printed for the report (the bound is the assertion below).
      console.log(`[${check}] wedged verdict → HAProxy DOWN: ${downAt - verdictAt} ms`);
      expect(downAt - verdictAt).toBeLessThan(5_000);

      const results = await Promise.all(
        Array.from({ length: 20 }, () => userRequest(pair.haproxy.port, users)),
      );
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

      pair.sims.a.disableFault('decode_stall');
      await waitFor(() => pair.daemon.runtime?.watchdog?.targets.get('a')?.state.state === 'ok', {
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
      for (const t of TARGETS) pair.sims[t].enableFault('decode_stall');
      for (const t of TARGETS)
        await waitFor(() => transitionAt(pair.daemon, t, 'wedged', before), {
          timeoutMs: 30_000,
          what: `${t} wedged`,
        });
      const up = await waitFor(
        async () => {
          const s = await pair.haproxy.status();
          const ups = TARGETS.filter((t) => s.get(t)?.startsWith('UP'));
          const downs = TARGETS.filter((t) => s.get(t)?.startsWith('DOWN'));
          if (ups.length !== 1 || downs.length !== 1) return undefined;
          // HAProxy's rise and fall lag the answer: wait until its one server up is the one wedgewatch holds in.
          const held = pair.daemon.runtime?.traffic?.view.get(ups[0]!);
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
      for (const t of TARGETS) pair.sims[t].disableFault('decode_stall');
    });
  },
);
