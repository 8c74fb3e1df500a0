// Issue 24's findings 1–18 as checks on what an operator can observe of the real daemon: events in its
// journal, alerts in Prometheus, bundles, remediation runs, engine requests and aborts, status codes, lag and
// RSS. One function per finding; each returns { pass, value } and registers what it starts with `scope`, which
// the runner cleans up (also when the finding runs past its budget).
/* global fetch, Buffer */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  CLI,
  DIST,
  Daemon,
  ROOT,
  fakeEngine,
  freePort,
  metricSum,
  procCpuMs,
  rawRequest,
  runCli,
  sleep,
  track,
  until,
  unitMemoryHigh,
  whichBinary,
} from './harness.mjs';
import { LEAK_OFFSETS, LEAK_SECRET, markerRuns, startSim } from './main-env.mjs';

const { bootstrapThreadTraceback, pyTime } = await import(join(DIST, 'sim/logfmt.js'));

const MB = 1024 * 1024;
const LAG_LIMIT_S = 0.1;
const fmtS = (s) => (s >= 1 ? `${s.toFixed(1)} s` : `${(s * 1000).toFixed(0)} ms`);
const fmtMB = (b) => `${(b / MB).toFixed(0)} MB`;
const lagText = (d) => `lag ${fmtS(d.worstLagS())}${d.maxStallS > 0 ? ' (unanswered scrape)' : ''}`;

/**
 * What the summary adds up across findings.
 * @type {{ userTextEvents: number, userTextAlerts: string[], userTextBundles: number, userTextRemediations: number, promNote: string | undefined, stopAborts: number, daemons: import('./harness.mjs').Daemon[] }}
 */
export const tally = {
  userTextEvents: 0,
  userTextAlerts: [],
  userTextBundles: 0,
  userTextRemediations: 0,
  promNote: undefined,
  stopAborts: 0,
  daemons: [],
};

/** A daemon of one finding: its lag and RSS count in the summary; the scope kills it. */
async function daemonFor(scope, name, config, opts = {}) {
  const port = await freePort();
  const dir = scope.dir;
  config.web = { listenAddress: `127.0.0.1:${port}`, ...config.web };
  config.stateDir ??= join(dir, `${name}-state`);
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, stringify(config));
  const d = new Daemon(name, path, { port, ...opts });
  tally.daemons.push(d);
  scope.add(() => d.kill());
  return d;
}

/** Waits until the daemon answers /-/healthy, at most `ms`; resolves the wait in seconds (Infinity if never). */
async function answersWithin(d, ms) {
  const t0 = Date.now();
  const ok = await until(
    () =>
      rawRequest(d.port, { path: '/-/healthy', headers: d.headers, timeoutMs: 1000 }).then(
        (r) => r.status === 200,
      ),
    { timeoutMs: ms, intervalMs: 200 },
  );
  return ok ? (Date.now() - t0) / 1000 : Infinity;
}

/** A 64 KB-ish prompt line as SGLang logs one with --log-requests (tokenizer_manager `Receive: obj=`). */
const promptLine = (text) =>
  `[${pyTime(new Date())}] Receive: obj=GenerateReqInput(text='${text}', sampling_params={'max_new_tokens': 8}, rid='u-1')\n`;

// ---------------------------------------------------------------------------------------------------------
// 1. A prompt pages on-call: SGLang's tool-call parsers log raw model output in an f-string
// (function_call/*_detector.py: `logger.warning(f"Failed to parse JSON part: {json_array_str}, JSON parse
// error: {str(e)}")`); a raw newline inside a JSON string is what makes json.loads fail, so the lines after the
// first are unprefixed model output. Appended to the running daemon's prefill log: healthy engine, then a slow
// one. A real traceback afterwards must still be raised (else "nothing raised" would prove nothing).
export function toolParserEcho(at = new Date()) {
  const fake = bootstrapThreadTraceback(7).join('\n');
  return (
    `[${pyTime(at)}] Failed to parse JSON part: {"name": "run_diagnostics", "arguments": {"notes": "summarise this:\n` +
    `${fake}\n"}}, JSON parse error: Invalid control character at: line 1 column 68 (char 67)\n`
  );
}

export async function finding1(env) {
  const d = env.daemon;
  const t0 = Date.now();
  const metricsBefore = await d.metrics();
  const eventsBefore = metricSum(metricsBefore, 'wedgewatch_log_events_total', (l) =>
    l.includes('target="pd"'),
  );
  const remBefore = markerRuns(env.marker);
  const bundlesOf = async () => (await d.json('/api/incidents?target=pd'))?.incidents?.length ?? 0;
  const bundlesBefore = await bundlesOf();
  await until(
    async () => (await d.json('/api/status'))?.targets?.find((t) => t.target === 'pd')?.state === 'ok',
    {
      timeoutMs: 15_000,
      what: 'pd ok before the echo',
    },
  );

  // Healthy engine: the echo alone.
  env.appendPrefill(toolParserEcho());
  await sleep(8000);
  // Slow engine: completions stream, slowly (first token ≈ 0.6 s, whole answer ≈ 5 s with factor 60): a second
  // echo meets a probe still in flight past confirmAfter (3 s), which the issue saw "confirm" the fake line.
  env.sim.enableFault('slow', { factor: 60 });
  await sleep(1500);
  env.appendPrefill(toolParserEcho());
  await sleep(9000);
  env.sim.disableFault('slow');
  await sleep(2000); // one more rule evaluation in Prometheus after the last scrape

  const evs = (await d.events('pd', { since: t0 })) ?? [];
  const raised = evs.filter((e) => ['critical_log', 'critical_confirmed'].includes(e.type)).length;
  const transitions = evs
    .filter((e) => e.type === 'transition' && e.data?.to !== 'ok')
    .map((e) => e.data?.to);
  const metricsAfter = await d.metrics();
  const eventsAfter = metricSum(metricsAfter, 'wedgewatch_log_events_total', (l) =>
    l.includes('target="pd"'),
  );
  const logEvents = (eventsAfter ?? 0) - (eventsBefore ?? 0);
  const bundles = (await bundlesOf()) - bundlesBefore;
  const remediations = markerRuns(env.marker) - remBefore;
  let alerts = [];
  if (env.prom) alerts = await env.prom.firedSince(t0, 'pd');
  else tally.promNote = 'prometheus not installed: alerts not evaluated';
  tally.userTextEvents += Math.max(raised, logEvents);
  tally.userTextAlerts.push(...alerts);
  tally.userTextBundles += bundles;
  tally.userTextRemediations += remediations;

  // The control: the same traceback written by the interpreter (unprefixed, on its own) is still raised.
  // Raised: a log event counted for pd (whatever severity the fix gives an unconfirmed critical), or journaled.
  const tc = Date.now();
  env.appendPrefill(bootstrapThreadTraceback(8).join('\n') + '\n');
  const control = await until(
    async () => {
      const n = metricSum(await d.metrics(), 'wedgewatch_log_events_total', (l) => l.includes('target="pd"'));
      if ((n ?? 0) > (eventsAfter ?? 0)) return true;
      return ((await d.events('pd', { since: tc, type: 'critical_log' })) ?? []).length > 0;
    },
    { timeoutMs: 8000, intervalMs: 250 },
  );
  const pass =
    raised === 0 &&
    logEvents === 0 &&
    transitions.length === 0 &&
    alerts.length === 0 &&
    bundles === 0 &&
    remediations === 0 &&
    control === true;
  return {
    pass,
    value:
      `events ${Math.max(raised, logEvents)} (journal ${raised}, log_events_total +${logEvents}), states [${transitions.join(',') || 'ok'}], ` +
      `alerts [${env.prom ? alerts.join(',') : 'n/a: no prometheus'}], bundles ${bundles}, remediations ${remediations}; ` +
      `real traceback after it ${control ? 'raised' : 'NOT raised'}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 2. A prompt freezes the daemon: 30 logged prompts of 64 KB `a-a-…` (a credential-shape regex's worst case),
// then an incident capture redacts the log window. The daemon's own work must not hold its event loop 100 ms,
// measured in the daemon's own CPU time (cpu-lag.mjs, loaded into it): the most CPU it used between two firings
// of a 10 ms timer. The wall-clock lag gauge is shown beside it; it is no bar here because it counts the time
// the host gave other processes: on a shared 2-core host it failed 2 runs in 5 (46–140 ms, issue 37, 9), and at
// load 22 a 30 ms burst of the same work lagged 300 ms (nice does not help across cgroups).
export async function finding2(env, scope) {
  let failing = false;
  const engine = await fakeEngine((req, res) => {
    res.writeHead(failing ? 500 : 200);
    res.end(failing ? 'down' : 'ok');
  });
  scope.add(() => engine.close());
  const log = join(scope.dir, 'f2-prefill.log');
  writeFileSync(log, '');
  const cpuLag = join(scope.dir, 'f2-cpu-lag.txt');
  writeFileSync(cpuLag, '');
  const d = await daemonFor(
    scope,
    'f2',
    {
      incidents: { on: ['down'], captureTimeout: '20s' },
      targets: [
        {
          name: 't2',
          endpoints: [{ name: 'e', url: engine.url }],
          probes: [
            { name: 'health', kind: 'health', every: '1s', jitter: 0, timeout: '1s', path: '/health' },
          ],
          logs: [{ service: 'prefill', path: log, from: 'end' }],
          detect: { downAfter: 1 },
        },
      ],
    },
    {
      nodeArgs: ['--import', join(ROOT, 'bench/adversarial/cpu-lag.mjs')],
      env: { WW_CPU_LAG_FILE: cpuLag },
    },
  );
  await d.start();
  // The window starts here, for the daemon's gauge (a scrape resets it), its CPU-time lag and its CPU clock.
  await d.sampleLag();
  d.maxLagS = 0;
  d.maxStallS = 0;
  const w0 = Date.now();
  const cpu0 = procCpuMs(d.pid);
  const prompt = 'a-'.repeat(32_000);
  for (let i = 0; i < 30; i++) appendFileSync(log, promptLine(prompt));
  await sleep(1500);
  failing = true;
  const t0 = Date.now();
  const captured = await until(
    async () => ((await d.json('/api/incidents', 2000))?.incidents?.length ?? 0) > 0,
    { timeoutMs: 15_000, intervalMs: 500 },
  );
  const took = (Date.now() - t0) / 1000;
  const wait = await answersWithin(d, 3000);
  await d.sampleLag();
  const w1 = Date.now();
  const cpuMs = procCpuMs(d.pid) - cpu0;
  // The intervals the window covers (each line closes 250 ms; the first after w0 may open before it).
  await until(() => cpuLagLines(cpuLag).some((l) => l.t >= w1), { timeoutMs: 3000, intervalMs: 100 });
  const lines = cpuLagLines(cpuLag).filter((l) => l.t > w0 && l.t <= w1 + 250);
  const ownS = lines.length ? Math.max(...lines.map((l) => l.cpuMs)) / 1000 : Infinity;
  const readS = Math.max(0, ...lines.filter((l) => l.t <= t0).map((l) => l.cpuMs)) / 1000;
  const captureS = Math.max(0, ...lines.filter((l) => l.t > t0).map((l) => l.cpuMs)) / 1000;
  return {
    pass: captured === true && ownS < LAG_LIMIT_S && wait !== Infinity,
    value:
      `lag in own CPU ${lines.length ? `${fmtS(ownS)} (reading ${fmtS(readS)}, capture ${fmtS(captureS)})` : 'not measured'}; ${lagText(d)} wall; ` +
      `CPU ${cpuMs.toFixed(0)} ms over ${((w1 - w0) / 1000).toFixed(1)} s; ` +
      `capture ${captured ? `done within ${took.toFixed(1)} s` : `not done in ${took.toFixed(0)} s`}${wait === Infinity ? '; daemon unresponsive' : ''}`,
  };
}

/** cpu-lag.mjs's lines: { t (unix ms), cpuMs, wallMs }. */
function cpuLagLines(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [t, cpuMs, wallMs] = l.split(' ').map(Number);
      return { t, cpuMs, wallMs };
    });
}

// ---------------------------------------------------------------------------------------------------------
// 3. Stopping the daemon kills the engine's bootstrap thread: with nixl_abort_unhandled on and completions in
// flight, a reload (SIGHUP), a restart (SIGTERM, start) and a stop (SIGTERM) must abort none of them.
export async function finding3(env, scope) {
  const sim = await startSim({
    logDir: join(scope.dir, 'f3-sim'),
    waitingTimeoutMs: 5000,
    bootstrapTimeoutMs: 5000,
  });
  scope.add(() => sim.stop());
  const aborts = [];
  const off = sim.onEvent((ev) => {
    if (ev.kind === 'abort' && /wedgewatch-/.test(ev.message)) aborts.push(ev);
  });
  scope.add(off);
  sim.enableFault('nixl_abort_unhandled');
  // 8 tokens at 10 ms × 40 per step: a completion takes ≈ 3.5 s, so one is nearly always in flight.
  sim.enableFault('slow', { factor: 40 });
  const config = {
    targets: [
      {
        name: 't3',
        model: 'sim-model',
        endpoints: [{ name: 'router', url: sim.urls.router }],
        probes: [{ name: 'chat', kind: 'chat', every: '1s', jitter: 0, timeout: '12s', conn: ['fresh'] }],
      },
    ],
  };
  const d = await daemonFor(scope, 'f3', config);
  const inFlight = () =>
    until(() => sim.state().running + sim.state().prefillInflight + sim.state().prefillBootstrapQueue > 0, {
      timeoutMs: 8000,
      intervalMs: 20,
    });
  const rows = [];
  const step = async (what, act) => {
    const before = aborts.length;
    const busy = await inFlight();
    await act();
    await sleep(1000); // the aborts of a cut connection land within milliseconds
    rows.push(`${what} ${aborts.length - before}${busy ? '' : ' (nothing in flight)'}`);
  };
  await d.start();
  await step('reload', async () => {
    d.child.kill('SIGHUP');
    await sleep(500);
  });
  let exitedOk = true;
  await step('restart', async () => {
    exitedOk = (await d.signal('SIGTERM', 15_000)) && exitedOk;
    await d.start();
  });
  await step('stop', async () => {
    exitedOk = (await d.signal('SIGTERM', 15_000)) && exitedOk;
  });
  tally.stopAborts += aborts.length;
  const alive = sim.state().bootstrapThreadAlive;
  return {
    pass: aborts.length === 0 && alive && exitedOk,
    value: `wedgewatch- aborts: ${rows.join(', ')}; bootstrap thread ${alive ? 'alive' : 'DEAD'}${exitedOk ? '' : '; SIGTERM not honoured in 15 s'}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 4. A common user rule that backtracks: `(?<msg>.*) failed after (?<n>\d+) retries` over 5 logged 64 KB
// prompts (≈ 2.5 s each on V8's backtracking engine). Either `check` refuses the rule, or the daemon runs it without blocking its event loop.
export async function finding4(env, scope) {
  const engine = await fakeEngine((req, res) => res.end('ok'));
  scope.add(() => engine.close());
  const log = join(scope.dir, 'f4-app.log');
  writeFileSync(log, '');
  const d = await daemonFor(scope, 'f4', {
    targets: [
      {
        name: 't4',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [{ name: 'health', kind: 'health', every: '5s', timeout: '1s', path: '/health' }],
        logs: [{ service: 'app', path: log, from: 'end', packs: [] }],
      },
    ],
    rules: [{ name: 'retries', severity: 'warning', match: '(?<msg>.*) failed after (?<n>\\d+) retries' }],
  });
  const checked = await runCli(['check', '--config', d.configPath], { timeoutMs: 10_000 });
  if (checked.code !== 0 && !checked.timedOut)
    return { pass: true, value: `check refuses the rule (exit ${checked.code})` };
  await d.start();
  await sleep(1000);
  const t0 = Date.now();
  // A layer the daemon knows nothing of logs the prompt as it came (no engine echo marker to skip it by). The
  // prompt holds the rule's literals (the prefilter passes it) but no digits after them: `.*` backtracks from
  // every start, quadratic in the line.
  const prompt = `${'x '.repeat(32_000)}and the upload failed after several retries`;
  const line = `[${pyTime(new Date())}] WARNING app: slow request, prompt: ${prompt}\n`;
  for (let i = 0; i < 5; i++) appendFileSync(log, line);
  // Read: the lines counted, or 10 s.
  const read = await until(
    async () =>
      (metricSum(await d.metrics(2000), 'wedgewatch_log_lines_total', (l) => l.includes('target="t4"')) ??
        0) >= 5,
    { timeoutMs: 10_000, intervalMs: 500 },
  );
  const wait = await answersWithin(d, 3000);
  await d.sampleLag();
  return {
    pass: read === true && d.worstLagS() < LAG_LIMIT_S && wait !== Infinity,
    value: `check accepts it; ${lagText(d)}; 5 lines ${read ? `read in ${((Date.now() - t0) / 1000).toFixed(1)} s` : 'not read in 10 s'}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 5. A FIFO swapped in between the follower's stat and its open: the path flips between a new regular file and a
// FIFO (each renamed over it, so it always exists) for 6 s. The race window is microseconds; where strace is
// installed it widens it: the daemon's openat calls are delayed 300 ms (strace -e inject=openat:delay_enter),
// so an open after a stat that saw a regular file meets the FIFO about half the time. The daemon must stay
// responsive and stop on SIGTERM. Its lag is left out of the summary (the delay is the bench's doing).
const SWAPPER = `
const { linkSync, renameSync, writeFileSync } = require('node:fs');
const [path, fifo, ms] = process.argv.slice(1);
const tmpR = path + '.r', tmpF = path + '.f', scratch = path + '.s';
const end = Date.now() + Number(ms);
while (Date.now() < end) {
  // A new regular file each time (an inode the follower saw before is adopted, not opened again); the scratch
  // write keeps the regular phase as long as the FIFO phase.
  writeFileSync(tmpR, 'a line\\n');
  renameSync(tmpR, path);
  writeFileSync(scratch, 'x');
  linkSync(fifo, tmpF);
  renameSync(tmpF, path);
}
`;

export async function finding5(env, scope) {
  const engine = await fakeEngine((req, res) => res.end('ok'));
  scope.add(() => engine.close());
  const dir = join(scope.dir, 'f5');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'app.log');
  const fifo = join(dir, 'fifo.src');
  writeFileSync(path, 'one line\n');
  execFileSync('mkfifo', [fifo]);
  const d = await daemonFor(scope, 'f5', {
    targets: [
      {
        name: 't5',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [{ name: 'health', kind: 'health', every: '5s', timeout: '1s', path: '/health' }],
        logs: [{ service: 'app', path, from: 'start', packs: [] }],
      },
    ],
  });
  await d.start();
  d.inSummary = false;
  let widened = 'no strace: the race window is not widened';
  if (whichBinary('strace')) {
    const st = track(
      spawn(
        'strace',
        [
          '-f',
          '-qq',
          '-p',
          String(d.pid),
          '-e',
          'trace=openat',
          '-e',
          'inject=openat:delay_enter=300000',
          '-o',
          '/dev/null',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      ),
    );
    let err = '';
    st.stderr.on('data', (x) => (err += x));
    scope.add(() => st.kill('SIGKILL'));
    await sleep(1000);
    widened =
      st.exitCode === null ? 'openat delayed 300 ms by strace' : `strace failed: ${err.trim().slice(0, 80)}`;
  }
  const swapper = track(
    spawn(process.execPath, ['-e', SWAPPER, path, fifo, '6000'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  scope.add(() => swapper.kill('SIGKILL'));
  let frozenAt;
  const t0 = Date.now();
  while (Date.now() - t0 < 6500) {
    const r = await rawRequest(d.port, { path: '/-/healthy', timeoutMs: 1500 });
    if (r.status !== 200) {
      frozenAt ??= (Date.now() - t0) / 1000;
      // Two misses in a row: frozen, not a slow answer.
      const again = await rawRequest(d.port, { path: '/-/healthy', timeoutMs: 1500 });
      if (again.status !== 200) break;
      frozenAt = undefined;
    }
    await sleep(250);
  }
  swapper.kill('SIGKILL');
  // Where the main thread waits: fifo_open is the FIFO, not the bench's delay.
  let wchan = '';
  try {
    wchan = readFileSync(`/proc/${d.pid}/wchan`, 'utf8');
  } catch {
    // gone
  }
  const stopped = await d.signal('SIGTERM', 5000);
  return {
    pass: frozenAt === undefined && stopped,
    value: `${frozenAt === undefined ? 'answered throughout 6 s of swaps' : `frozen after ${frozenAt.toFixed(1)} s (main thread in ${wchan || '?'})`}; SIGTERM ${stopped ? 'honoured' : 'ignored (5 s)'} (${widened})`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 6. Probe rounds on the wall clock. No faketime here: the daemon runs with bench/adversarial/clock-shift.mjs
// preloaded, which steps Date (CLOCK_REALTIME) by an offset from a file while performance.now and timers
// (CLOCK_MONOTONIC) go on: what a real clock step is. A health probe every 1 s must keep its cadence after a
// 1 h backward step and after a 1 h forward step.
export async function finding6(env, scope) {
  const engine = await fakeEngine((req, res) => res.end('ok'));
  scope.add(() => engine.close());
  const clockFile = join(scope.dir, 'f6-clock-offset');
  writeFileSync(clockFile, '0');
  const d = await daemonFor(
    scope,
    'f6',
    {
      targets: [
        {
          name: 't6',
          endpoints: [{ name: 'e', url: engine.url }],
          probes: [
            { name: 'health', kind: 'health', every: '1s', jitter: 0, timeout: '1s', path: '/health' },
          ],
        },
      ],
    },
    {
      nodeArgs: ['--import', join(ROOT, 'bench/adversarial/clock-shift.mjs')],
      env: { WW_BENCH_CLOCK_FILE: clockFile },
    },
  );
  await d.start();
  const window = async (ms) => {
    const before = engine.count('/health');
    await sleep(ms);
    return engine.count('/health') - before;
  };
  const base = await window(3000);
  writeFileSync(clockFile, String(-3600_000));
  const back = await window(5000);
  writeFileSync(clockFile, String(3600_000));
  const fwd = await window(5000);
  // 1 s cadence: about 3, 5 and 5 runs. A stopped scheduler shows 0; a burst far more.
  const pass = back >= 3 && fwd >= 3 && fwd <= 10 && back <= 10;
  return { pass, value: `health runs: ${base} in 3 s, ${back} in 5 s after −1 h, ${fwd} in 5 s after +1 h` };
}

// ---------------------------------------------------------------------------------------------------------
// 7. Engine /metrics parsing amplifies memory: bodies of long label values (4 MB, then 15.5 MB: under the 16 MB
// cap), each scraped every 2 s a few times. RSS must stay within the unit's MemoryHigh and the event loop under
// 100 ms. (The daemon is killed past 1.2 GB: on main the 15.5 MB body heads for ~2 GB.)
function longLabelBody(bytes) {
  const lines = ['# TYPE sglang:num_running_reqs gauge'];
  const long = 'v'.repeat(3900);
  let size = lines[0].length;
  for (let i = 0; size < bytes; i++) {
    const l = `sglang:num_running_reqs{model_name="m",x="${long}${i}"} ${i}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
}

export async function finding7(env, scope) {
  const bodies = [longLabelBody(4 * MB), longLabelBody(15.5 * MB)];
  let body = bodies[0];
  const engine = await fakeEngine((req, res, _b, path) => {
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return res.end(body);
    }
    res.end('ok');
  });
  scope.add(() => engine.close());
  const d = await daemonFor(scope, 'f7', {
    targets: [
      {
        name: 't7',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [{ name: 'health', kind: 'health', every: '5s', timeout: '1s', path: '/health' }],
        engines: [{ service: 'decode', metrics: `${engine.url}/metrics`, every: '2s', timeout: '3s' }],
      },
    ],
  });
  await d.start();
  const scrapes = async (n, ms) => {
    const from = engine.count('/metrics');
    await until(() => engine.count('/metrics') >= from + n || d.rssKilled || !d.alive(), {
      timeoutMs: ms,
      intervalMs: 200,
    });
    await sleep(500);
    await d.sampleLag();
  };
  await scrapes(4, 10_000);
  const at4 = { rss: d.peakRss, lag: d.worstLagS() };
  body = bodies[1];
  await scrapes(3, 9000);
  await d.kill(); // records VmHWM
  const high = unitMemoryHigh();
  return {
    pass: d.peakRss < high && d.worstLagS() < LAG_LIMIT_S && !d.rssKilled,
    value:
      `4 MB: peak RSS ${fmtMB(at4.rss)}, lag ${fmtS(at4.lag)}; then 15.5 MB: peak RSS ${fmtMB(d.peakRss)}` +
      `${d.rssKilled ? ' (killed at the bench cap)' : ''}, ${lagText(d)} (MemoryHigh ${fmtMB(high)})`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 8. /probe for health probes is unthrottled: 300 sequential GETs must not become ~300 engine requests. And a
// GET with side effects from another site (what a web page's fetch sends) is refused.
export async function finding8(env) {
  const before = env.side.count('/health');
  const codes = new Map();
  const t0 = Date.now();
  for (let i = 0; i < 300 && Date.now() - t0 < 30_000; i++) {
    const r = await rawRequest(env.daemon.port, { path: '/probe?target=side&probe=health', timeoutMs: 3000 });
    codes.set(r.status, (codes.get(r.status) ?? 0) + 1);
  }
  const requests = env.side.count('/health') - before;
  const crossBefore = env.side.count('/get_server_info');
  const cross = await rawRequest(env.daemon.port, {
    path: '/probe?target=side&probe=info',
    headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
  });
  const crossRequests = env.side.count('/get_server_info') - crossBefore;
  const crossOk = !(cross.status >= 200 && cross.status < 300) && crossRequests === 0;
  const codeText = [...codes].map(([c, n]) => `${n}×${c}`).join(' ');
  return {
    pass: requests <= 10 && crossOk,
    value: `${requests} engine requests from 300 GETs (${codeText}, ${((Date.now() - t0) / 1000).toFixed(1)} s); cross-site GET → ${cross.status}, ${crossRequests} engine request(s)`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 9. DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 sends Host and Origin that
// agree with each other. Pausing remediation for 24 h and /-/reload must not answer 2xx.
export async function finding9(env) {
  const port = env.daemon.port;
  const evil = {
    host: `evil.example:${port}`,
    origin: `http://evil.example:${port}`,
    'content-type': 'application/json',
  };
  const pause = await rawRequest(port, {
    method: 'POST',
    path: '/api/targets/pd/remediation/pause',
    headers: evil,
    body: JSON.stringify({ for: '24h' }),
  });
  const reload = await rawRequest(port, { method: 'POST', path: '/-/reload', headers: evil, body: '{}' });
  // Undo a pause that got through, so the findings after this one see remediation as configured.
  if (pause.status >= 200 && pause.status < 300)
    await rawRequest(port, {
      method: 'POST',
      path: '/api/targets/pd/remediation/resume',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
  const ok2xx = (s) => s >= 200 && s < 300;
  return {
    pass: !ok2xx(pause.status) && !ok2xx(reload.status) && pause.status !== 0 && reload.status !== 0,
    value: `pause 24h → ${pause.status}, /-/reload → ${reload.status}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 10. A secret cut by the error snippet escapes redaction: every `leak` endpoint answers 500 with the bearer
// token repeated at its own offset; no 12-character piece of it may appear in /api/status.
export async function finding10(env) {
  await until(
    async () => {
      const s = await env.daemon.json('/api/status');
      const t = s?.targets?.find((x) => x.target === 'leak');
      return (t?.probes ?? []).filter((p) => typeof p.error === 'string').length >= LEAK_OFFSETS.length;
    },
    { timeoutMs: 10_000, intervalMs: 500 },
  );
  const text = (await env.daemon.text('/api/status')).body.toString('utf8');
  let longest = 0;
  for (let len = LEAK_SECRET.length; len >= 4 && longest === 0; len--)
    for (let i = 0; i + len <= LEAK_SECRET.length; i++)
      if (text.includes(LEAK_SECRET.slice(i, i + len))) {
        longest = len;
        break;
      }
  const errors = (JSON.parse(text).targets?.find((x) => x.target === 'leak')?.probes ?? []).filter(
    (p) => typeof p.error === 'string',
  ).length;
  return {
    pass: longest < 12 && errors >= LEAK_OFFSETS.length,
    value: `longest piece of the ${LEAK_SECRET.length}-char secret in /api/status: ${longest} chars (${errors} endpoint errors recorded)`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 11. Credentials in an endpoint URL: refused by `check`, or sent to the engine and never shown. Which one is
// the fix's choice; either is a pass.
export async function finding11(env, scope) {
  const auths = [];
  const engine = await fakeEngine((req, res) => {
    auths.push(req.headers.authorization);
    res.writeHead(500);
    res.end('no');
  });
  scope.add(() => engine.close());
  const password = 'hunter2-Pa55word';
  const d = await daemonFor(scope, 'f11', {
    targets: [
      {
        name: 't11',
        endpoints: [{ name: 'e', url: `http://opuser:${password}@127.0.0.1:${engine.port}` }],
        probes: [{ name: 'info', kind: 'serverinfo', every: '1m', timeout: '1s', path: '/get_server_info' }],
      },
    ],
  });
  const checked = await runCli(['check', '--config', d.configPath]);
  if (checked.code !== 0 && !checked.timedOut)
    return { pass: true, value: `check refuses it (exit ${checked.code})` };
  await d.start();
  const dbg = await d.text('/probe?target=t11&probe=info&debug=true');
  const shown = dbg.body.toString('utf8').includes(password);
  const basic = `Basic ${Buffer.from(`opuser:${password}`).toString('base64')}`;
  const sent = auths.includes(basic);
  return {
    pass: !shown && sent,
    value: `check accepts it (exit ${checked.code}); credentials ${sent ? 'sent' : 'NOT sent'} to the engine; password ${shown ? 'SHOWN' : 'not shown'} in /probe?debug=true`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 12. `check` on a FIFO or /dev/zero as bearerTokenFile or tls.caFile: finishes within 10 s, RSS under 256 MB
// (killed at twice that: the bench must not take the machine's memory).
const RSS_BOUND = 256 * MB;
export async function finding12(env, scope) {
  const fifo = join(scope.dir, 'f12.fifo');
  execFileSync('mkfifo', [fifo]);
  const cases = [
    ['token FIFO', { bearerTokenFile: fifo }, 'http'],
    ['token /dev/zero', { bearerTokenFile: '/dev/zero' }, 'http'],
    ['caFile FIFO', { tls: { caFile: fifo } }, 'https'],
    ['caFile /dev/zero', { tls: { caFile: '/dev/zero' } }, 'https'],
  ];
  const runs = await Promise.all(
    cases.map(async ([what, ep, scheme], i) => {
      const path = join(scope.dir, `f12-${i}.yaml`);
      writeFileSync(
        path,
        stringify({
          stateDir: join(scope.dir, 'f12-state'),
          targets: [{ name: 't', endpoints: [{ name: 'e', url: `${scheme}://127.0.0.1:1`, ...ep }] }],
        }),
      );
      const r = await runCli(['check', '--config', path], { timeoutMs: 10_000, rssKillAt: 2 * RSS_BOUND });
      return { what, ...r };
    }),
  );
  const bad = runs.filter((r) => r.timedOut || r.rssKilled || r.peakRss > RSS_BOUND);
  return {
    pass: bad.length === 0,
    value: runs
      .map(
        (r) =>
          `${r.what}: ${r.timedOut ? 'hung >10 s' : r.rssKilled ? `killed past ${fmtMB(2 * RSS_BOUND)}` : `exit ${r.code} in ${(r.ms / 1000).toFixed(1)} s`}, ${fmtMB(r.peakRss)}`,
      )
      .join('; '),
  };
}

// ---------------------------------------------------------------------------------------------------------
// 13 and 16 share a daemon with basic auth (web config file, bcrypt users): `monitor` (what the bench
// scrapes with) and `scraper`, which first authenticates during the attack.
async function authDaemon(scope) {
  const { default: bcrypt } = await import('bcryptjs');
  const engine = await fakeEngine((req, res) => res.end('ok'));
  scope.add(() => engine.close());
  const webConfig = join(scope.dir, 'web.yml');
  writeFileSync(
    webConfig,
    stringify({
      basic_auth_users: {
        monitor: bcrypt.hashSync('monitor-pw-1', 10),
        scraper: bcrypt.hashSync('scraper-pw-1', 10),
      },
    }),
  );
  const basic = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  const d = await daemonFor(
    scope,
    'auth',
    {
      targets: [
        {
          name: 'ta',
          endpoints: [{ name: 'e', url: engine.url }],
          probes: [{ name: 'health', kind: 'health', every: '5s', timeout: '1s', path: '/health' }],
        },
      ],
    },
    { extraArgs: ['--web.config.file', webConfig], authorization: basic('monitor', 'monitor-pw-1') },
  );
  await d.start();
  // The bad attempts are another client's on the shared address (a misconfigured one behind the same NAT).
  return { d, scraper: basic('scraper', 'scraper-pw-1'), wrong: basic('admin', 'wrong-password') };
}

// 13. Auth back-off per address: bad attempts from the shared address (respecting each Retry-After, as a slow
// attacker does) must not lock out a valid scraper on the same address.
export async function finding13(env, scope) {
  const { d, scraper, wrong } = await authDaemon(scope);
  scope.shared.auth = { d, scraper };
  const codes = [];
  const t0 = Date.now();
  for (let i = 0; i < 8 && Date.now() - t0 < 9000; i++) {
    const r = await rawRequest(d.port, { path: '/metrics', headers: { authorization: wrong } });
    codes.push(r.status);
    if (r.status === 429) await sleep(Math.min(3000, 1000 * Number(r.headers['retry-after'] ?? 1)));
  }
  const valid = await rawRequest(d.port, { path: '/metrics', headers: { authorization: scraper } });
  return {
    pass: valid.status === 200,
    value: `after ${codes.length} bad attempts (${codes.join(',')}), the valid scraper got ${valid.status}`,
  };
}

// 16. 520 connections that send half a request line and stall (the cap counts before auth): an authenticated
// /metrics must still be answered within 5 s.
export async function finding16(env, scope) {
  const auth = scope.shared.auth ?? (await authDaemon(scope));
  const { d, scraper } = auth;
  const socks = [];
  scope.add(() => socks.forEach((s) => s.destroy()));
  await Promise.all(
    Array.from(
      { length: 520 },
      () =>
        new Promise((resolve) => {
          const s = connect(d.port, '127.0.0.1', () => {
            s.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
            resolve();
          });
          s.on('error', () => resolve());
          s.setTimeout(20_000, () => s.destroy());
          socks.push(s);
        }),
    ),
  );
  await sleep(300);
  const r = await rawRequest(d.port, {
    path: '/metrics',
    headers: { authorization: scraper },
    timeoutMs: 5000,
  });
  const open = socks.filter((s) => !s.destroyed).length;
  socks.forEach((s) => s.destroy());
  return {
    pass: r.status === 200,
    value: `${open} slow connections open; authenticated /metrics → ${r.status || r.error}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 14. Terminal escapes (OSC title, OSC 52 clipboard, CSI) from an engine body must not reach /probe?debug=true,
// nor a log line's escapes `replay`'s output, as raw bytes.
// ESC, BEL and the C1 CSI: the characters a terminal acts on.
const RAW_ESCAPE_CODES = [0x1b, 0x07, 0x9b];
const hasRawEscape = (text) => RAW_ESCAPE_CODES.some((c) => text.includes(String.fromCharCode(c)));
export async function finding14(env, scope) {
  const dbg = await env.daemon.text('/probe?target=side&probe=esc&debug=true');
  const dbgText = dbg.body.toString('utf8');
  const inDebug = hasRawEscape(dbgText);
  const log = join(scope.dir, 'f14-prefill.log');
  writeFileSync(
    log,
    `Exception in thread Thread-3 (bootstrap_thread): \x1b]0;pwned\x07\n` +
      `AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic? \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\n`,
  );
  const rep = await runCli(['replay', log], { timeoutMs: 15_000 });
  const repText = rep.stdout.toString('utf8');
  const inReplay = hasRawEscape(repText);
  const meaningful = dbg.status === 200 && /engine error/.test(dbgText) && /NixlMsgGuard/.test(repText);
  return {
    pass: !inDebug && !inReplay && meaningful,
    value: `raw escapes in /probe?debug=true: ${inDebug ? 'YES' : 'no'} (HTTP ${dbg.status}), in replay: ${inReplay ? 'YES' : 'no'}${meaningful ? '' : ' (engine text or event not shown: nothing to judge)'}`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 15. `check` must refuse a completion probe `timeout: 1ms` and an engine scrape `every: 1ms`.
export async function finding15(env, scope) {
  const base = (t) => ({
    stateDir: join(scope.dir, 'f15-state'),
    targets: [{ name: 't', endpoints: [{ name: 'e', url: 'http://127.0.0.1:1' }], ...t }],
  });
  const cases = [
    ['chat timeout 1ms', base({ probes: [{ name: 'chat', kind: 'chat', every: '15s', timeout: '1ms' }] })],
    [
      'scrape every 1ms',
      base({ engines: [{ service: 'decode', metrics: 'http://127.0.0.1:1/metrics', every: '1ms' }] }),
    ],
  ];
  const runs = await Promise.all(
    cases.map(async ([what, cfg], i) => {
      const path = join(scope.dir, `f15-${i}.yaml`);
      writeFileSync(path, stringify(cfg));
      return { what, ...(await runCli(['check', '--config', path])) };
    }),
  );
  return {
    pass: runs.every((r) => r.code !== 0 && !r.timedOut),
    value: runs.map((r) => `${r.what}: exit ${r.code}`).join('; '),
  };
}

// ---------------------------------------------------------------------------------------------------------
// 17. A corrupt offsets file with `from: end`: 20 critical markers written while the daemon was down must all
// be raised when it starts again.
export async function finding17(env, scope) {
  const engine = await fakeEngine((req, res) => res.end('ok'));
  scope.add(() => engine.close());
  const log = join(scope.dir, 'f17-app.log');
  writeFileSync(log, 'before\n');
  const stateDir = join(scope.dir, 'f17-state');
  const d = await daemonFor(scope, 'f17', {
    stateDir,
    targets: [
      {
        name: 't17',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [{ name: 'health', kind: 'health', every: '5s', timeout: '1s', path: '/health' }],
        logs: [{ service: 'app', path: log, packs: [] }],
      },
    ],
    rules: [{ name: 'marker', severity: 'critical', match: 'BENCH-MARKER seq=(?<seq>\\d+)' }],
  });
  await d.start();
  appendFileSync(log, 'a line read while up\n');
  const offsets = () => readdirSync(stateDir).filter((f) => /offsets/.test(f));
  await until(() => offsets().length > 0, { timeoutMs: 8000, what: 'an offsets file in stateDir' });
  await sleep(500);
  if (!(await d.stop(10_000))) throw new Error('the daemon did not stop on SIGTERM');
  for (const f of offsets()) writeFileSync(join(stateDir, f), '{"files": {"\u0000garbage');
  const markers = Array.from(
    { length: 20 },
    (_, i) => `[${pyTime(new Date())}] ERROR BENCH-MARKER seq=${i}\n`,
  );
  appendFileSync(log, markers.join(''));
  const t0 = Date.now();
  await d.start();
  const seen = new Set();
  await until(
    async () => {
      // Any journal event that carries a marker line (the fix may journal an unconfirmed critical differently).
      for (const e of (await d.events('t17')) ?? []) {
        const m = /BENCH-MARKER seq=(\d+)/.exec(`${e.data?.line ?? ''} ${e.summary ?? ''}`);
        if (m) seen.add(Number(m[1]));
      }
      return seen.size >= 20;
    },
    { timeoutMs: 8000, intervalMs: 300 },
  );
  return {
    pass: seen.size === 20,
    value: `${seen.size} of 20 markers raised (${((Date.now() - t0) / 1000).toFixed(1)} s after the start)`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 18. A garbage /metrics body must be a failed scrape (wedgewatch_engine_scrape_success 0), and a capture fetch
// answered 302 must not be recorded as ok in the bundle's manifest.
export async function finding18(env, scope) {
  const valid = await (await fetch(`${env.sim.urls.decode}/metrics`)).text();
  let mode = 'valid';
  const engine = await fakeEngine((req, res, _b, path) => {
    if (path === '/health') {
      res.writeHead(mode === 'down' ? 500 : 200);
      return res.end('health');
    }
    if (path === '/get_server_info') {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      return res.end();
    }
    if (path === '/metrics' && mode === 'valid') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return res.end(valid);
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body><h1>Welcome to nginx!</h1>\n<p>{"not": "metrics"}</p></body></html>\n');
  });
  scope.add(() => engine.close());
  const d = await daemonFor(scope, 'f18', {
    incidents: { on: ['down'], captureTimeout: '10s', fetchTimeout: '2s' },
    targets: [
      {
        name: 't18',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [{ name: 'health', kind: 'health', every: '1s', jitter: 0, timeout: '1s', path: '/health' }],
        engines: [{ service: 'decode', metrics: `${engine.url}/metrics`, every: '1s', timeout: '1s' }],
        detect: { downAfter: 1 },
      },
    ],
  });
  await d.start();
  const success = async () =>
    metricSum(await d.metrics(), 'wedgewatch_engine_scrape_success', (l) => l.includes('target="t18"'));
  await until(async () => (await success()) === 1, { timeoutMs: 6000, intervalMs: 300 });
  mode = 'garbage';
  const n = engine.count('/metrics');
  await until(() => engine.count('/metrics') >= n + 2, { timeoutMs: 6000, intervalMs: 200 });
  await sleep(300);
  const afterGarbage = await success();
  mode = 'down';
  const inc = await until(async () => (await d.json('/api/incidents'))?.incidents?.[0], {
    timeoutMs: 10_000,
    intervalMs: 500,
  });
  let infoStatus = 'no bundle';
  if (inc) {
    const full = await until(
      async () => {
        const m = (await d.json(`/api/incidents/${inc.id}`))?.manifest;
        return m?.pieces?.length ? m : undefined;
      },
      { timeoutMs: 8000, intervalMs: 500 },
    );
    infoStatus = full?.pieces?.find((p) => /server_info/.test(p.name))?.status ?? 'no server_info piece';
  }
  return {
    pass: afterGarbage === 0 && infoStatus !== 'ok' && infoStatus !== 'no bundle',
    value: `scrape_success after a garbage body: ${afterGarbage}; capture fetch answered 302: ${infoStatus}`,
  };
}

export { CLI };
