// Requests hung per minute of wedge, with and without wedgewatch taking the wedged backend out (issue 43): a real
// HAProxy in front of two simulated SGLang PD deployments (test/traffic/pair.ts), users at a steady rate through
// HAProxy, one deployment's decode scheduler stalled (decode_stall) for the whole sending window. Three ways
// HAProxy checks its servers: the deployment's own /health (no draining: it stays 200 while wedged), wedgewatch's
// agent-check port, and GET /ready as `option httpchk`'s target. Prints one table; asserts nothing.
// Run: npm run bench:drain   (WEDGE_S=60 RATE=4 HUNG_S=20 by default)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { it } from 'vitest';
import { waitFor } from '../test/helpers/wait.js';
import {
  startPair,
  transitionAt,
  userRequest,
  type CheckMode,
  type UserOutcome,
} from '../test/traffic/pair.js';

const num = (name: string, dflt: number): number => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
  return v;
};
/** Seconds of wedge during which users send requests. */
const WEDGE_S = num('WEDGE_S', 60);
/** User requests per second through HAProxy (both deployments together). */
const RATE = num('RATE', 4);
/** A request with no whole answer after this many seconds is hung (a healthy one takes well under a second). */
const HUNG_S = num('HUNG_S', 20);
/**
 * SGLang's own give-up on a request stuck in PD (SGLANG_DISAGGREGATION_WAITING_TIMEOUT, 300 s by default): above
 * HUNG_S, so a request on the wedged deployment hangs as it does on a real one.
 */
const PD_TIMEOUT_MS = 300_000;

const MODES: Array<{ mode: CheckMode; label: string }> = [
  { mode: 'health', label: 'no draining: HAProxy checks the engine /health' },
  { mode: 'agent', label: 'wedgewatch agent-check port' },
  { mode: 'httpchk', label: 'wedgewatch GET /ready as httpchk' },
];

interface Row {
  label: string;
  sent: number;
  outcomes: Record<UserOutcome, number>;
  /** Hung requests sent after HAProxy marked the wedged server down (undefined: it never did). */
  hungAfterDown: number | undefined;
  verdictS: number | undefined;
  downAfterVerdictS: number | undefined;
}

async function scenario(mode: CheckMode, label: string): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), `ww-bench-drain-${mode}-`));
  const pair = await startPair(dir, mode, PD_TIMEOUT_MS);
  const users = new Agent({ connections: 512 });
  try {
    await waitFor(
      async () => (await pair.statusOf('a')).startsWith('UP') && (await pair.statusOf('b')).startsWith('UP'),
      {
        timeoutMs: 60_000,
        what: 'both servers UP in HAProxy',
      },
    );
    await waitFor(
      () => ['a', 'b'].every((t) => pair.daemon.runtime?.watchdog?.targets.get(t)?.state.state === 'ok'),
      { timeoutMs: 60_000, what: 'both targets ok' },
    );
    // Both deployments serve before the wedge (HAProxy starts its servers UP before their first check passes).
    const warm = await Promise.all(
      Array.from({ length: 8 }, () => userRequest(pair.haproxy.port, users, HUNG_S * 1000)),
    );
    if (warm.some((o) => o !== 'ok'))
      throw new Error(`${mode}: requests fail before the wedge: ${warm.join(', ')}`);
    await waitFor(
      async () => (await pair.statusOf('a')).startsWith('UP') && (await pair.statusOf('b')).startsWith('UP'),
      {
        timeoutMs: 10_000,
        what: 'both servers still UP after the warm-up',
      },
    );
    const start = Date.now();
    pair.sims.a.enableFault('decode_stall');
    // HAProxy's view, polled beside the load: when it first marks the wedged server down.
    let downAt: number | undefined;
    let polling = true;
    const poller = (async () => {
      while (polling && downAt === undefined) {
        if ((await pair.statusOf('a')).startsWith('DOWN')) downAt = Date.now();
        else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Open loop: request i leaves at start + i / RATE whatever the others do, as independent users would.
    const total = Math.round(WEDGE_S * RATE);
    const sent: Array<Promise<{ at: number; outcome: UserOutcome }>> = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const at = Date.now();
      sent.push(userRequest(pair.haproxy.port, users, HUNG_S * 1000).then((outcome) => ({ at, outcome })));
    }
    const results = await Promise.all(sent);
    polling = false;
    await poller;
    const verdictAt = transitionAt(pair.daemon, 'a', 'wedged', start);
    const outcomes: Record<UserOutcome, number> = { ok: 0, hung: 0, failed: 0 };
    for (const r of results) outcomes[r.outcome]++;
    pair.sims.a.disableFault('decode_stall');
    return {
      label,
      sent: results.length,
      outcomes,
      hungAfterDown:
        downAt === undefined
          ? undefined
          : results.filter((r) => r.outcome === 'hung' && r.at > downAt!).length,
      verdictS: verdictAt === undefined ? undefined : (verdictAt - start) / 1000,
      downAfterVerdictS:
        downAt === undefined || verdictAt === undefined ? undefined : (downAt - verdictAt) / 1000,
    };
  } finally {
    await users.close();
    await pair.stop();
  }
}

it('requests hung per minute of wedge, with and without draining', { timeout: 1_800_000 }, async () => {
  const rows: Row[] = [];
  for (const { mode, label } of MODES) {
    rows.push(await scenario(mode, label));
    const r = rows.at(-1)!;
    console.log(`${label}: ${JSON.stringify(r.outcomes)} of ${r.sent}`);
  }
  const perMin = (n: number) => (n / (WEDGE_S / 60)).toFixed(1);
  const s = (v: number | undefined) => (v === undefined ? '—' : `${v.toFixed(2)} s`);
  const lines = [
    `${WEDGE_S} s of wedge (decode_stall on one of two deployments), ${RATE} requests/s through HAProxy, hung = no answer within ${HUNG_S} s`,
    '',
    '| HAProxy checks | sent | ok | hung | failed (cut or refused) | hung per minute of wedge | lost (hung + failed) per minute | verdict after the wedge | HAProxy DOWN after the verdict | hung after DOWN |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.sent} | ${r.outcomes.ok} | ${r.outcomes.hung} | ${r.outcomes.failed} | **${perMin(r.outcomes.hung)}** | ${perMin(r.outcomes.hung + r.outcomes.failed)} | ${s(r.verdictS)} | ${s(r.downAfterVerdictS)} | ${r.hungAfterDown ?? '—'} |`,
    ),
  ];
  console.log(`\n${lines.join('\n')}\n`);
});
