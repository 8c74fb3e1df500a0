// Issue 37's verify findings (5, 6, 8) and issue 38's llama-server shape, thrown at `node dist/cli.js verify`
// as a user runs it: every step, against a hostile engine on 127.0.0.1 (test/helpers/hostile-engine.mjs).
// Each row prints verify's peak RSS (VmHWM, sampled every 50 ms; killed past 1.2 GB) beside what it checks; the
// bar is 300 MB. The knobs are the defaults scaled down in counts and timeouts only (requests, sessions,
// rounds) and, for the engines whose hostility is time rather than size, in limits per request (2 s): the sizes
// verify reads are the engine's, which is what these rows vary.
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, track } from './harness.mjs';
import { startSim } from './main-env.mjs';

const ENGINE = fileURLToPath(new URL('../../test/helpers/hostile-engine.mjs', import.meta.url));

/**
 * An engine of hostile-engine.mjs in a child process of its own: { url, model, stats() }, killed with `scope`. Apart, because
 * pumping hundreds of MB would stall this process, and with it the monitors of the daemons it measures.
 */
async function spawnEngine(scope, spec) {
  const child = track(
    fork(ENGINE, [JSON.stringify(spec)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }),
  );
  scope.add(() => child.kill('SIGKILL'));
  const first = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`hostile engine exited (${code}) before it listened`)));
  });
  const ask = () =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve(m.stats));
      child.send('stats');
    });
  return { url: first.url, model: first.model, stats: ask };
}

const MB = 1024 * 1024;
export const VERIFY_RSS_LIMIT = 300 * MB;
const fmtMB = (b) => `${(b / MB).toFixed(0)} MB`;

/** The defaults scaled down in counts only: requests, sessions, rounds, trials. */
const FEW = [
  ['--repeat', '1'],
  ['--liveness.n', '1'],
  ['--throughput.levels', '1x1,4x4'],
  ['--long-context.n', '1'],
  ['--conversation.sessions', '2'],
  ['--conversation.rounds', '3'],
  ['--batching.sample-interval', '50ms'],
  ['--correctness.n', '1'],
  ['--correctness.concurrency', '2'],
  ['--abort.sessions', '4'],
  ['--abort.after', '1s'],
  ['--abort.settle', '200ms'],
  ['--abort.probes', '1'],
  ['--toolcall.concurrency', '2'],
  ['--toolcall.rounds', '2'],
].flat();

/** Short limits per request: for the engines whose hostility is time (a drip), not size. */
const SHORT = [
  ['--liveness.timeout', '2s'],
  ['--throughput.timeout', '2s'],
  ['--long-context.timeout', '2s'],
  ['--conversation.timeout', '2s'],
  ['--batching.timeout', '2s'],
  ['--correctness.timeout', '2s'],
  ['--abort.liveness-timeout', '2s'],
  ['--toolcall.timeout', '2s'],
].flat();

/**
 * Runs verify (every step, FEW, and `extra`) against `url`, killed after `timeoutMs` or past 1.2 GB RSS; resolves
 * runCli's result and the parsed report.
 */
async function runVerify(url, model, { extra = [], timeoutMs = 50_000 } = {}) {
  const r = await runCli(
    ['verify', '--url', url, '--model', model, '--metrics-url', `${url}/metrics`, '--json', ...FEW, ...extra],
    { timeoutMs },
  );
  let report;
  try {
    report = JSON.parse(r.stdout.toString('utf8'));
  } catch {
    report = undefined;
  }
  return { ...r, report };
}

const step = (report, name) => report?.steps?.find((s) => s.step === name);

/** How the run ended, in a few words: killed, timed out, the exit code and verdict. */
function ending(r) {
  if (r.rssKilled) return `killed past ${fmtMB(1.2 * 1024 * MB)} RSS`;
  if (r.timedOut) return `killed after ${(r.ms / 1000).toFixed(0)} s`;
  if (r.signal) return `died on ${r.signal}`;
  if (!r.report) return `exit ${r.code}, no report (${r.stderr.trim().split('\n').pop()?.slice(0, 80)})`;
  return `exit ${r.code} ${r.report.verdict}`;
}

const rssText = (r) => `peak RSS ${fmtMB(r.peakRss)}`;

/** One row per hostile engine: verify ends on its own, within the RSS bar, and `check` holds. */
async function hostileRow(scope, kind, engineOpts, check, extra = [], timeoutMs = undefined) {
  const engine = await spawnEngine(scope, { kind, opts: engineOpts });
  const r = await runVerify(engine.url, engine.model, { extra, timeoutMs });
  const stats = await engine.stats();
  const c = r.report ? check(r.report, stats, r) : { ok: false, note: '' };
  const ended = !r.rssKilled && !r.timedOut && !r.signal && r.report !== undefined;
  return {
    pass: ended && r.peakRss < VERIFY_RSS_LIMIT && c.ok,
    value: `${rssText(r)}; ${ending(r)}${c.note ? `; ${c.note}` : ''}`,
  };
}

/** Every step that read the engine's answers failed them, naming the bound (not a timeout, not a crash). */
function failedOnBound(report, pattern) {
  const failed = report.steps.filter((s) => !s.ok);
  const named = failed.filter((s) => pattern.test(s.summary));
  return {
    ok: report.verdict === 'FAIL' && named.length > 0,
    note: `${named.length}/${report.steps.length} steps name the bound`,
  };
}

// 6. An endless stream: each answer is cut past max_tokens plus slack and fails.
export const endlessStream = (env, scope) =>
  hostileRow(scope, 'endless', {}, (rep) => failedOnBound(rep, /past max_tokens|more than max_tokens/));

// 6. 270 MB replies: nothing near that size is kept or carried into the next round.
export const hugeReplies = (env, scope) =>
  hostileRow(scope, 'huge-replies', {}, (rep, stats) => ({
    ...failedOnBound(rep, /past max_tokens|more than max_tokens|bytes/),
    note: `largest request body ${fmtMB(stats.maxBodyBytes)}`,
  }));

// 6. A slow drip (a token every 200 ms, never [DONE]): each request ends at its timeout, memory flat.
export const slowDrip = (env, scope) =>
  hostileRow(
    scope,
    'drip',
    {},
    (rep) => ({ ok: rep.verdict === 'FAIL', note: `${rep.steps.filter((s) => !s.ok).length} steps failed` }),
    SHORT,
    100_000,
  );

// 6. Endless tool-call deltas (a new call index each, 32 KB of arguments).
export const toolFlood = (env, scope) =>
  hostileRow(scope, 'tool-flood', {}, (rep) =>
    failedOnBound(rep, /past max_tokens|more than max_tokens|bytes/),
  );

// 6. SSE comments forever: bytes without a single event.
export const endlessPings = (env, scope) =>
  hostileRow(scope, 'pings', {}, (rep) => failedOnBound(rep, /bytes/));

// 8. usage.completion_tokens 10^15 after 4 token chunks: a wrong answer, never a throughput, never saved.
export async function hugeUsage(env, scope) {
  const save = join(scope.dir, 'huge-usage-results.json');
  return hostileRow(
    scope,
    'huge-usage',
    {},
    (rep) => {
      const tp = step(rep, 'throughput');
      const saved = existsSync(save) ? JSON.parse(readFileSync(save, 'utf8')) : undefined;
      const rates = (saved?.steps ?? []).flatMap((s) =>
        Object.entries(s.figures ?? {})
          .filter(([, f]) => f.unit === 'tok/s')
          .map(([, f]) => f.value),
      );
      const maxRate = rates.length ? Math.max(...rates) : 0;
      return {
        ok: tp !== undefined && !tp.ok && /usage/.test(tp.summary) && maxRate < 1e7,
        note: `throughput ${tp?.ok ? 'PASS' : 'FAIL'}; largest tok/s saved ${maxRate.toExponential(1)}`,
      };
    },
    ['--save', save],
  );
}

// 5. max_model_len 10^9 and 10^7: the prompt is capped (a flag raises it), the request bodies stay small.
function contextRow(maxModelLen) {
  return (env, scope) =>
    hostileRow(scope, 'context', { maxModelLen }, (rep, stats) => {
      const lc = step(rep, 'long-context');
      const tokens = lc?.data?.tokens;
      return {
        ok: typeof tokens === 'number' && tokens <= 131_072 && stats.maxBodyBytes < 8 * MB,
        note: `long-context ${tokens ?? '?'} tokens, largest request body ${fmtMB(stats.maxBodyBytes)}`,
      };
    });
}
export const contextBillion = contextRow(1e9);
export const contextTenMillion = contextRow(1e7);

// Issue 38: llama-server's shape (closes after each streamed response, context in /props and /slots, the
// running count as llamacpp:requests_processing) before the simulator: every step passes.
export async function llamaShape(env, scope) {
  const sim = await startSim({ logDir: join(scope.dir, 'llama-sim') });
  scope.add(() => sim.stop());
  const front = await spawnEngine(scope, {
    llama: { upstream: sim.urls.router, model: 'sim-model', nCtx: 4096, slots: 4 },
  });
  const r = await runVerify(front.url, 'sim-model', {
    extra: [...SHORT, '--throughput.levels', '1x2,4x8', '--throughput.max-tokens', '64'],
  });
  const stats = await front.stats();
  const steps = r.report?.steps ?? [];
  const passed = steps.filter((s) => s.ok).length;
  const failed = steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.summary.slice(0, 70)}`);
  return {
    pass: r.report?.verdict === 'PASS' && r.peakRss < VERIFY_RSS_LIMIT,
    value:
      `${passed}/${steps.length} steps pass; ${stats.closedReused} requests met a closed connection; ${rssText(r)}; ${ending(r)}` +
      (failed.length ? ` — ${failed.join(' | ')}` : ''),
  };
}
