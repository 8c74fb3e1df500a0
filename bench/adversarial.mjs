// @ts-check
// bench:adversarial — issue 24's findings 1–18 thrown at the real daemon (`node <the unit's flags> dist/cli.js
// run`) on 127.0.0.1: the simulator in process, one shared daemon (with a real Prometheus evaluating the shipped
// rules, when installed) and a daemon of its own for each finding that stops, freezes or bloats one. Prints one
// row per finding (number, check, PASS/FAIL, what was measured), then the acceptance summary: max event-loop
// lag, peak RSS against the unit's MemoryHigh, events/alerts/bundles/remediations from user text, engine aborts
// caused by a daemon stop/restart/reload. Exits 1 when anything fails. Bounded: each finding has a budget, the
// whole run a deadline; every child process is killed at the end, on error too.
//   npm run bench:adversarial        ONLY=1,8,9 (a subset; the shared daemon still starts)
/* global clearTimeout */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, killAll, unitMemoryHigh } from './adversarial/harness.mjs';
import * as F from './adversarial/findings.mjs';
import * as V from './adversarial/verify-findings.mjs';
import * as G from './adversarial/gauge-findings.mjs';
import * as S from './adversarial/shield-findings.mjs';
import { startMainEnv } from './adversarial/main-env.mjs';

// The whole run stays under 10 minutes, set-up and summary included (issue 37's shield rows: +140 s).
const RUN_DEADLINE_MS = 560_000;
const LAG_LIMIT_S = 0.1;

/**
 * [number, check, function, budget ms]: in the order they run (shared-daemon ones first, while it is clean).
 * @typedef {{ pass: boolean, value: string }} Outcome
 * @typedef {[n: number | string, check: string, fn: (env: any, scope: Scope) => Promise<Outcome>, budget: number]} Finding
 * @typedef {{ n: number | string, check: string, result: string, value: string, s: number }} Row
 * @type {Finding[]}
 */
const FINDINGS = [
  [1, 'multi-line tool-parser echo raises no event/alert/bundle/remediation', F.finding1, 45_000],
  [
    '37.4',
    'fake batch lines (echo, tool output, 2,856 ranks): no gauge, no rank series',
    G.gaugesFromUserText,
    20_000,
  ],
  // Issue 37 items 1, 2, 7: shields that end early or never, and a flood of fake thread deaths.
  [
    '37.1',
    'early tail + fake thread death in tool output: 0 events; real one raised',
    S.finding37early,
    45_000,
  ],
  [
    '37.1f',
    'fake tail + forged SGLang record + thread death: 0 events; real one raised',
    S.finding37forged,
    45_000,
  ],
  ['37.2', 'tool output cut at maxLineBytes: 0 events; real traceback raised', S.finding37cut, 45_000],
  ['37.7', '2,500 fake thread deaths: 0 events, transitions held; real one raised', S.finding37flood, 50_000],
  [8, '/probe: 300 GETs throttled; cross-site GET refused', F.finding8, 35_000],
  [9, 'DNS rebinding: evil Host+Origin POSTs not 2xx', F.finding9, 10_000],
  [10, 'no 12+-char piece of a cut secret in /api/status', F.finding10, 15_000],
  [14, 'no raw terminal escapes in /probe?debug=true or replay', F.finding14, 20_000],
  [2, '30 × 64 KB `a-` prompts + capture: own lag < 100 ms', F.finding2, 35_000],
  [3, 'reload/restart/stop abort no in-flight completion', F.finding3, 60_000],
  [4, 'backtracking user rule: refused or lag < 100 ms', F.finding4, 25_000],
  [5, 'FIFO swapped in under the follower: daemon responsive', F.finding5, 20_000],
  [6, 'wall-clock step ±1 h keeps probe cadence', F.finding6, 25_000],
  [7, '4 / 15.5 MB long-label /metrics: RSS < MemoryHigh, lag < 100 ms', F.finding7, 30_000],
  [11, 'credentials in endpoint URL refused or sent, never shown', F.finding11, 15_000],
  [12, 'check on FIFO / /dev/zero token & caFile: < 10 s, bounded RSS', F.finding12, 15_000],
  [13, 'bad-auth back-off does not lock out a valid scraper', F.finding13, 25_000],
  [15, 'check refuses timeout 1ms and scrape every 1ms', F.finding15, 10_000],
  [16, '520 slow-header connections: authenticated /metrics answered', F.finding16, 15_000],
  [17, 'corrupt offsets + from: end: 20/20 markers raised', F.finding17, 30_000],
  [18, 'garbage /metrics is a failed scrape; 302 capture fetch not ok', F.finding18, 30_000],
  [
    '37.1',
    'busy engine (TTFT 6-9 s): a thread-death line not confirmed; dead: confirmed',
    G.busyEngineConfirm,
    90_000,
  ],
  // Issue 37's verify findings and issue 38's llama-server shape: `wedgewatch verify` against hostile engines.
  ['37.5a', 'verify, max_model_len 1e9: prompt capped; RSS < 300 MB', V.contextBillion, 60_000],
  ['37.5b', 'verify, max_model_len 1e7: prompt capped; RSS < 300 MB', V.contextTenMillion, 60_000],
  ['37.6a', 'verify, endless stream: cut past max_tokens; RSS < 300 MB', V.endlessStream, 60_000],
  ['37.6b', 'verify, 270 MB replies: cut, not carried on; RSS < 300 MB', V.hugeReplies, 60_000],
  ['37.6c', 'verify, a token every 200 ms, no [DONE]: RSS < 300 MB', V.slowDrip, 120_000],
  ['37.6d', 'verify, endless tool-call deltas: cut; RSS < 300 MB', V.toolFlood, 60_000],
  ['37.6e', 'verify, endless SSE comments: cut; RSS < 300 MB', V.endlessPings, 60_000],
  ['37.8', 'verify, usage 1e15 tokens: a wrong answer, nothing absurd saved', V.hugeUsage, 60_000],
  [38, 'verify, llama-server shape (closes after each stream): all pass', V.llamaShape, 120_000],
];

class Scope {
  /**
   * @param {string} dir
   * @param {Record<string, any>} shared
   */
  constructor(dir, shared) {
    this.dir = dir;
    this.shared = shared;
    /** @type {(() => unknown)[]} */
    this.cleanups = [];
  }
  /** @param {() => unknown} fn */
  add(fn) {
    this.cleanups.push(fn);
  }
  async close() {
    for (const fn of this.cleanups.reverse())
      await Promise.resolve()
        .then(fn)
        .catch(() => undefined);
    this.cleanups = [];
  }
}

/**
 * @param {Finding} finding
 * @param {any} env
 * @param {string} dir
 * @param {Record<string, any>} shared
 * @param {number} remainingMs
 * @returns {Promise<Row>}
 */
async function runFinding([n, check, fn, budget], env, dir, shared, remainingMs) {
  const scope = new Scope(dir, shared);
  const limit = Math.min(budget, remainingMs);
  const t0 = Date.now();
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Omit<Row, 's'>} */
  let row;
  try {
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`ran past its ${(limit / 1000).toFixed(0)} s budget`)),
        limit,
      );
    });
    const r = await Promise.race([fn(env, scope), timeout]);
    row = { n, check, result: r.pass ? 'PASS' : 'FAIL', value: r.value };
  } catch (err) {
    row = { n, check, result: 'FAIL', value: `error: ${/** @type {Error} */ (err).message}` };
  } finally {
    clearTimeout(timer);
    // Findings 13 and 16 share the auth daemon: it goes with 16's scope.
    if (n !== 13) await scope.close();
    else shared.closeAuth = () => scope.close();
    if (n === 16) await shared.closeAuth?.();
  }
  return { ...row, s: (Date.now() - t0) / 1000 };
}

/** @param {Row} r */
function printRow(r) {
  console.log(
    `${String(r.n).padStart(5)}  ${r.result}  ${r.check.padEnd(66)} ${r.value}  [${r.s.toFixed(1)} s]`,
  );
}

async function main() {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: npm run build first`);
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'ww-adversarial-'));
  const only = process.env.ONLY?.split(',').map((s) => s.trim());
  /** @type {Row[]} */
  const rows = [];
  let env;
  try {
    console.log(`bench:adversarial: ${CLI} on Node ${process.version}, everything on 127.0.0.1 (${dir})`);
    env = await startMainEnv(join(dir, 'main'));
    F.tally.daemons.push(env.daemon);
    console.log(
      `shared daemon ready (pid ${env.daemon.pid}); prometheus: ${env.prom ? env.prom.url : 'NOT INSTALLED — alerts not evaluated'}\n`,
    );
    console.log(`    #  RESULT  ${'check'.padEnd(66)} measured`);
    /** @type {Record<string, any>} */
    const shared = {};
    for (const f of FINDINGS) {
      if (only && !only.includes(String(f[0]))) continue;
      const remaining = RUN_DEADLINE_MS - (Date.now() - started);
      if (remaining < 5000) {
        const r = { n: f[0], check: f[1], result: 'FAIL', value: 'not run: the run deadline passed', s: 0 };
        rows.push(r);
        printRow(r);
        continue;
      }
      const r = await runFinding(f, env, dir, shared, remaining);
      rows.push(r);
      printRow(r);
    }
    await env.daemon.sampleLag();
    // The shared daemon's lag as Prometheus saw it across the run, on top of the bench's own scrapes.
    if (env.prom) {
      const secs = Math.ceil((Date.now() - started) / 1000);
      const res = await env.prom
        .query(`max_over_time(nodejs_eventloop_lag_max_seconds[${secs}s])`)
        .catch(() => []);
      const v = Number(res[0]?.value?.[1] ?? 0);
      env.daemon.maxLagS = Math.max(env.daemon.maxLagS, v);
    }
  } finally {
    for (const d of F.tally.daemons) await d.kill().catch(() => undefined);
    await env?.stop().catch(() => undefined);
    killAll();
    rmSync(dir, { recursive: true, force: true });
  }

  // Summary: the issue's acceptance.
  const t = F.tally;
  const worst = t.daemons
    .filter((d) => d.inSummary)
    .reduce((a, d) => (d.worstLagS() > a.lag ? { lag: d.worstLagS(), name: d.name } : a), {
      lag: 0,
      name: '-',
    });
  const peak = t.daemons.reduce((a, d) => (d.peakRss > a.rss ? { rss: d.peakRss, name: d.name } : a), {
    rss: 0,
    name: '-',
  });
  const high = unitMemoryHigh();
  const ran = (/** @type {number} */ n) => rows.some((r) => r.n === n);
  /** @type {[string, boolean, string][]} */
  const acceptance = [
    [
      'max event-loop lag < 100 ms',
      worst.lag < LAG_LIMIT_S,
      `${(worst.lag * 1000).toFixed(0)} ms (daemon ${worst.name})`,
    ],
    [
      `peak RSS within MemoryHigh (${(high / 2 ** 20).toFixed(0)} MB, systemd/wedgewatch.service)`,
      peak.rss <= high,
      `${(peak.rss / 2 ** 20).toFixed(0)} MB (daemon ${peak.name}, VmHWM)`,
    ],
    [
      'events from user text',
      ran(1) && t.userTextEvents === 0,
      ran(1) ? String(t.userTextEvents) : 'not run',
    ],
    [
      'alerts fired from user text',
      ran(1) && t.userTextAlerts.length === 0 && t.promNote === undefined,
      !ran(1)
        ? 'not run'
        : (t.promNote ??
          `${t.userTextAlerts.length}${t.userTextAlerts.length ? ` (${[...new Set(t.userTextAlerts)].join(', ')})` : ''}`),
    ],
    [
      'bundles captured from user text',
      ran(1) && t.userTextBundles === 0,
      ran(1) ? String(t.userTextBundles) : 'not run',
    ],
    [
      'remediations run from user text',
      ran(1) && t.userTextRemediations === 0,
      ran(1) ? String(t.userTextRemediations) : 'not run',
    ],
    [
      'engine aborts caused by daemon stop/restart/reload',
      ran(3) && t.stopAborts === 0,
      ran(3) ? String(t.stopAborts) : 'not run',
    ],
  ];
  console.log('\nsummary (issue 24 acceptance):');
  for (const [what, ok, value] of acceptance)
    console.log(`    ${ok ? 'PASS' : 'FAIL'}  ${what.padEnd(66)} ${value}`);
  const failed = rows.filter((r) => r.result !== 'PASS').length + acceptance.filter((a) => !a[1]).length;
  console.log(
    `\n${rows.filter((r) => r.result === 'PASS').length}/${rows.length} findings pass; ${acceptance.filter((a) => a[1]).length}/${acceptance.length} acceptance checks pass; ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench:adversarial failed: ${err.stack ?? err}`);
    killAll();
    process.exit(2);
  },
);
