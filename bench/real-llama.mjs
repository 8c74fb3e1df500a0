// @ts-check
// Real faults on the real process (issue 38): upstream llama.cpp's llama-server (scripts/real-llama/fixture.mjs)
// watched by the daemon (dist/cli.js) with examples/llamacpp.yaml's probes at the example's cadence and timeouts
// (chat every 10 s, tools every 5 m, structured every 5 m, health every 10 s, /slots every 30 s, the default
// detect thresholds). Per scenario: a fresh server and daemon, ok first, then the fault, held, then ended; every
// second the bench reads /health (2 s bound) and the target's state. Prints /health during the fault, the state
// and diagnosis timeline (seconds from the fault), time to the first not-ok and to the scenario's expected state,
// time back to ok after the fault ended, wedged onsets and remediations (dry run: counted, never run).
// Usage: npm run bench:real-llama [-- --scenarios a,b --json out.json --minutes 10 --hold 120 --parallel 1 --canary
// --learn-load N --phase-spread S]
/* global AbortController, AbortSignal, Buffer, clearTimeout, fetch */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  ALIAS,
  exampleConfig,
  health,
  requireFixture,
  startDaemon,
  startLlama,
  waitFor,
} from '../scripts/real-llama/harness.mjs';

const { values: args } = parseArgs({
  options: {
    scenarios: { type: 'string' },
    json: { type: 'string' },
    minutes: { type: 'string', default: '10' },
    hold: { type: 'string', default: '120' },
    recover: { type: 'string', default: '600' },
    parallel: { type: 'string', default: '1' },
    canary: { type: 'boolean', default: false },
    answers: { type: 'boolean', default: false },
    'all-cells': { type: 'boolean', default: false },
    'learn-load': { type: 'string', default: '0' },
    'phase-spread': { type: 'string', default: '15' },
    root: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const MINUTES = Number(args.minutes);
const HOLD_MS = Number(args.hold) * 1000;
const RECOVER_MS = Number(args.recover) * 1000;
/**
 * The fault starts a random 0–S s after the target is ok (and after any learning window). Without it every trial
 * met the probes at the same point of their rounds: each round's offset is a hash of the target and probe names
 * (schedule.ts phaseOffset) and the first ok comes a fixed time after the start, so a hang found by the next chat
 * round was measured at one phase only (the grammar at 27–28 s in every trial).
 */
const PHASE_SPREAD_MS = Number(args['phase-spread']) * 1000;
/**
 * @typedef {{ at: number, health: number | string, healthMs: number, state: string, diagnosis: string | null, cause?: string }} Sample
 * @typedef {{ stays?: string, state?: string[], within?: number, backWithin?: number, notState?: string[], remediations?: number, health?: number }} Expect
 * @typedef {{ llama: Awaited<ReturnType<typeof startLlama>>, daemon: Awaited<ReturnType<typeof startDaemon>>, note: (s: string) => void, holdAfterNotOk: () => Promise<void>, sample400?: string }} Ctx
 * @typedef {{ what: string, expect?: Expect, server?: { parallel?: number }, learnMs?: number, fault: (c: Ctx) => Promise<void> }} Scenario
 * @typedef {{ t: number, label: string, cause?: string }} Step
 * @typedef {{ at: number, itlMs: number }} ChatRun
 * @typedef {{ name: string, what: string, expect: Expect | null, notes: string[], okBeforeMs?: number | null, heldS?: number, backMs?: number | null, tEnd?: number, remediations?: number, remediationsSkipped?: number, health?: string, timeline?: Step[], notOkS?: number | null, expectedS?: number | null, wedgedOnsets?: number, states?: string, notOkSamples?: number, sampleCount?: number }} Result
 */

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
/** The crawl's duty cycle: runs this long, then is stopped this long (10 % of the time). */
const CRAWL_RUN_MS = 20;
const CRAWL_STOP_MS = 180;
/** Healthy time before the crawl: the chat probes' first 5 passes (every 10 s), with time to spare. */
const LEARN_MS = 90_000;

/** A streamed chat completion of `maxTokens`, read to its end (or until `signal` aborts it). */
/**
 * @param {string} url
 * @param {number} maxTokens
 * @param {AbortSignal} signal
 * @returns {Promise<{ status: number | undefined, chunks?: number, ms: number, error?: boolean | string }>}
 */
function generate(url, maxTokens, signal, prompt = 'Tell me a very long story about a lighthouse keeper.') {
  return new Promise((resolve) => {
    const body = JSON.stringify({
      model: ALIAS,
      messages: [{ role: 'user', content: prompt }],
      max_tokens: maxTokens,
      stream: true,
    });
    const t0 = Date.now();
    const req = httpRequest(
      `${url}/v1/chat/completions`,
      // A connection of its own: llama-server closes the connection after a streamed response, and Node's default
      // agent keeps sockets alive, so the next generation on it failed (24 of 46 in a 10-minute saturation run: the
      // "saturation" had gaps of a second each time).
      { method: 'POST', headers: { 'content-type': 'application/json' }, signal, agent: false },
      (res) => {
        let chunks = 0;
        res.on('data', () => chunks++);
        res.on('end', () => resolve({ status: res.statusCode, chunks, ms: Date.now() - t0 }));
        res.on('error', () => resolve({ status: res.statusCode, chunks, ms: Date.now() - t0, error: true }));
      },
    );
    req.on('error', (err) =>
      resolve({
        status: 0,
        error: /** @type {NodeJS.ErrnoException} */ (err).code ?? err.message,
        ms: Date.now() - t0,
      }),
    );
    req.end(body);
  });
}

/** `n` clients, each sending `maxTokens` generations back to back until `untilMs`. */
/**
 * @param {string} url
 * @param {number} n
 * @param {number} maxTokens
 * @param {number} untilMs
 * @param {{ requests: number, errors: number, kinds?: Record<string, number> }} stats
 */
async function load(url, n, maxTokens, untilMs, stats) {
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (Date.now() < untilMs) {
        const ac = new AbortController();
        const t = setTimeout(() => ac.abort(), Math.max(1, untilMs - Date.now()));
        const r = await generate(url, maxTokens, ac.signal);
        clearTimeout(t);
        stats.requests++;
        if (r.status !== 200) {
          stats.errors++;
          const kind = r.status ? `HTTP ${r.status}` : String(r.error);
          stats.kinds = { ...stats.kinds, [kind]: (stats.kinds?.[kind] ?? 0) + 1 };
        }
        if (r.status === 0 && Date.now() < untilMs) await sleep(1000); // refused: do not spin
      }
    }),
  );
}

/** A raw HTTP request whose answer is never read: the socket is paused from the start. */
/**
 * @param {string} url
 * @param {number} maxTokens
 */
function neverRead(url, maxTokens) {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({
    model: ALIAS,
    messages: [{ role: 'user', content: 'Tell me a very long story.' }],
    max_tokens: maxTokens,
    stream: true,
  });
  const s = connect({ host: hostname, port: Number(port) });
  s.pause();
  s.on('error', () => {});
  s.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return s;
}

// An ambiguous GBNF grammar: 20,000 alternatives that all match "a", so every character leaves 20,000 live parse
// stacks (distinct rule positions, not deduplicated), and every candidate token is checked against each of them (llama_grammar_reject_candidates) on
// the server's main loop. Memory stays flat (the stack count does not grow with the output); time per token is
// minutes, so the main loop spins while the HTTP threads (/health) answer. llama.cpp 80fb11a src/llama-grammar.cpp
// (llama_grammar_accept / llama_grammar_reject_candidates): no bound on the number of stacks.
const AMBIGUOUS_GRAMMAR = `root ::= s root | s\ns ::= ${Array.from({ length: 20_000 }, () => '"a"').join(' | ')}\n`;

/**
 * @param {string} url
 * @param {string} path
 * @param {unknown} body
 * @param {number} timeoutMs
 * @returns {Promise<{ status: number, text: string }>}
 */
function postJson(url, path, body, timeoutMs) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  }).then(
    async (r) => ({ status: r.status, text: (await r.text()).slice(0, 300) }),
    (err) => ({ status: 0, text: String(err.name ?? err) }),
  );
}

/**
 * The scenarios. `fault(ctx)` starts the fault and returns once it has ended (or returns `{ end }` for the
 * runner to call after `hold`). `expect` is the state the issue's acceptance asks for, when it names one.
 */
/** @type {Record<string, Scenario>} */
const SCENARIOS = {
  healthy: {
    what: `no fault: ${MINUTES} min of the example config on a healthy server (tools probe included)`,
    expect: { stays: 'ok' },
    fault: async (c) => {
      await sleep(MINUTES * 60_000);
      c.note(`held ${MINUTES} min`);
    },
  },
  sigstop: {
    what: 'SIGSTOP (the whole process frozen), held, then SIGCONT',
    expect: { state: ['wedged', 'degraded', 'down'], within: 30, backWithin: 60 },
    fault: async (c) => {
      c.llama.signal('SIGSTOP');
      await c.holdAfterNotOk();
      c.llama.signal('SIGCONT');
    },
  },
  kill9: {
    what: 'kill -9, held, then the same server restarted on the same port',
    expect: { state: ['down'], within: 15, backWithin: 60 },
    fault: async (c) => {
      await c.llama.kill9();
      await c.holdAfterNotOk();
      await c.llama.restart();
      c.note(`restart: /health 200 after ${(c.llama.readyMs / 1000).toFixed(1)} s`);
    },
  },
  saturation: {
    what: `both slots busy with long generations (3000 tokens each, back to back) for ${MINUTES} min`,
    expect: { notState: ['wedged'], remediations: 0 },
    fault: async (c) => {
      /** @type {{ requests: number, errors: number, kinds?: Record<string, number> }} */
      const stats = { requests: 0, errors: 0 };
      await load(c.llama.url, 2, 3000, Date.now() + MINUTES * 60_000, stats);
      c.note(`${stats.requests} generations, ${stats.errors} not 200 ${JSON.stringify(stats.kinds ?? {})}`);
    },
  },
  noread: {
    what: 'clients that never read their stream (3000 tokens each; a new one every 10 s, at most 12 open)',
    fault: async (c) => {
      /** @type {import('node:net').Socket[]} */
      const open = [];
      const until = Date.now() + HOLD_MS;
      while (Date.now() < until) {
        open.push(neverRead(c.llama.url, 3000));
        if (open.length > 12) open.shift()?.destroy();
        await sleep(10_000);
      }
      for (const s of open) s.destroy();
      c.note(`${open.length} never-read clients open at the end`);
    },
  },
  parallel1: {
    what: '--parallel 1, its one slot held by a long generation (7000 tokens, back to back)',
    server: { parallel: 1 },
    fault: async (c) => {
      /** @type {{ requests: number, errors: number, kinds?: Record<string, number> }} */
      const stats = { requests: 0, errors: 0 };
      await load(c.llama.url, 1, 7000, Date.now() + HOLD_MS, stats);
      c.note(`${stats.requests} generations, ${stats.errors} not 200 ${JSON.stringify(stats.kinds ?? {})}`);
    },
  },
  beyond_context: {
    what: 'a request beyond the context every 2 s (a 12,000-word prompt, 4,096 tokens a slot)',
    expect: { notState: ['wedged', 'down'] },
    fault: async (c) => {
      const prompt = 'word '.repeat(12_000);
      const until = Date.now() + HOLD_MS;
      /** @type {Map<number, number>} */
      const seen = new Map();
      while (Date.now() < until) {
        const r = await postJson(
          c.llama.url,
          '/v1/chat/completions',
          { model: ALIAS, messages: [{ role: 'user', content: prompt }], max_tokens: 16 },
          30_000,
        );
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        if (!c.sample400 && r.status === 400) c.sample400 = r.text;
        await sleep(2000);
      }
      c.note(`answers ${[...seen].map(([k, v]) => `${k}×${v}`).join(' ')}; ${c.sample400 ?? ''}`);
    },
  },
  grammar: {
    what: 'an ambiguous grammar (20,000 alternatives matching "a") that spins the main loop, held, then the server restarted',
    expect: { state: ['wedged'], within: 30, health: 200 },
    fault: async (c) => {
      // Sent, not awaited: its answer would take minutes per token.
      const pending = postJson(
        c.llama.url,
        '/completion',
        { prompt: 'a', n_predict: 64, grammar: AMBIGUOUS_GRAMMAR },
        HOLD_MS + 60_000,
      );
      await c.holdAfterNotOk();
      // The spin ends only with the request (n_predict tokens) or the process: restart, as an operator would.
      await c.llama.kill9();
      await c.llama.restart();
      const r = await pending;
      c.note(`the grammar request: ${r.status || r.text}; restarted`);
    },
  },
  crawl: {
    what: `a duty-cycle crawl: the process runs ${CRAWL_RUN_MS} ms in every ${CRAWL_RUN_MS + CRAWL_STOP_MS} ms (SIGCONT/SIGSTOP), 10× slower, after ${LEARN_MS / 1000} s healthy`,
    expect: { state: ['degraded'] },
    // A crawl is judged against the deployment's own healthy past: the chat probes' token rate is learned from their
    // first 5 passes (src/core/reduce/objectives.ts onProbeRate, LEARN_SAMPLES; chat every 10 s), and the engine
    // reads ok within seconds of start. A crawl started at the first ok was itself learned as the normal rate.
    learnMs: LEARN_MS,
    fault: async (c) => {
      const until = Date.now() + Math.max(HOLD_MS, 180_000);
      // A period shorter than a probe's generation (8 tokens, ~50 ms at 150 tok/s): a throttled engine slows every
      // step, and a 1 s period let a probe's whole answer come inside one 100 ms run window (its token rate
      // unchanged; only its wait grew).
      let ran = 0;
      let stopped = 0;
      try {
        while (Date.now() < until) {
          let t = Date.now();
          c.llama.signal('SIGCONT');
          await sleep(CRAWL_RUN_MS);
          ran += Date.now() - t;
          t = Date.now();
          c.llama.signal('SIGSTOP');
          await sleep(CRAWL_STOP_MS);
          stopped += Date.now() - t;
        }
      } finally {
        c.llama.signal('SIGCONT');
      }
      c.note(
        `ran ${((100 * ran) / (ran + stopped)).toFixed(1)} % of the time (${ran} ms of ${ran + stopped})`,
      );
    },
  },
};

if (args.help) {
  console.log(`usage: npm run bench:real-llama [-- options]
  --scenarios a,b   only these (default all: ${Object.keys(SCENARIOS).join(', ')})
  --minutes N       healthy and saturation length (default 10)
  --hold S          seconds a fault is held (default 120; after the first not-ok for sigstop, kill9, grammar)
  --recover S       seconds to wait for ok after the fault ended (default 600)
  --parallel N      scenarios at a time (default 1: each has the machine to itself)
  --root DIR        another built tree's dist/cli.js and examples/llamacpp.yaml (a before/after column)
  --phase-spread S  the fault starts a random 0–S s after the first ok (default 15: every phase of a 15 s round)
  --learn-load N    N busy loops from the start until the fault, in scenarios with a learning window (crawl)
  --all-cells       the example's whole tool-call matrix (default: the cells a random model can pass)
  --canary          keep the canary probe (a random-weight model cannot pass it)
  --answers         keep the structured and long-input probes (a random-weight model cannot pass them either)
  --json FILE       every scenario's samples and summary as JSON`);
  process.exit(0);
}

const wanted = args.scenarios?.split(',') ?? Object.keys(SCENARIOS);
for (const n of wanted)
  if (!SCENARIOS[n]) throw new Error(`unknown scenario ${n} (have ${Object.keys(SCENARIOS)})`);
const fx = requireFixture();

/**
 * @param {string} name
 * @returns {Promise<Result & { samples: Sample[] }>}
 */
async function runScenario(name) {
  const def = SCENARIOS[name];
  if (!def) throw new Error(`unknown scenario ${name}`);
  // Busy loops from the start until the fault (--learn-load N): a learning window on a loaded host, the fault on a
  // quieter one (issue 38: the crawl stayed ok once, its objective learned beside our own test run).
  const burners = def.learnMs
    ? Array.from({ length: Number(args['learn-load']) }, () =>
        spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
      )
    : [];
  const stopBurners = () => {
    for (const b of burners) if (b.exitCode === null) b.kill('SIGKILL');
  };
  const llama = await startLlama(def.server ?? {}).catch((err) => {
    stopBurners();
    throw err;
  });
  // A daemon that fails to start must not leave its server running (it would load every later scenario).
  const daemon = await startDaemon({
    configText: exampleConfig({
      url: llama.url,
      logFile: llama.logFile,
      stateDir: `${llama.dir}/state`,
      canary: args.canary,
      answers: args.answers,
      toolCells: args['all-cells'] ? null : undefined,
      root: args.root,
    }),
    cli: args.root ? `${args.root}/dist/cli.js` : undefined,
  }).catch(async (err) => {
    stopBurners();
    await llama.cleanup();
    throw err;
  });
  /** @type {Sample[]} */
  const samples = [];
  /** @type {string[]} */
  const notes = [];
  let t0 = 0;
  let sampling = true;
  /** Our chat probes' passing runs by start and connection: their inter-token latency (ms) after the first token. */
  /** @type {Map<string, ChatRun>} */
  const chatRuns = new Map();
  const collect = async () => {
    for (const r of await daemon.probes().catch(() => []))
      if (r.probeKind === 'chat' && r.result === 'ok' && r.tokensPerSecond > 0)
        chatRuns.set(`${r.start}|${r.endpoint}|${r.conn}`, { at: r.start, itlMs: 1000 / r.tokensPerSecond });
  };
  let tick = 0;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      // /api/probes keeps the last 100 runs: read every 10 s, well inside that.
      if (tick++ % 10 === 0) await collect();
      const [h, s] = await Promise.all([
        health(llama.url, 2000),
        daemon.status().catch(() => ({ state: 'daemon?', diagnosis: null })),
      ]);
      samples.push({
        at,
        health: h.status,
        healthMs: h.ms,
        state: s.state,
        diagnosis: s.diagnosis,
        cause: s.cause,
      });
      await sleep(Math.max(0, 1000 - (Date.now() - at)));
    }
  })();
  /** @type {Result} */
  const result = { name, what: def.what, expect: def.expect ?? null, notes };
  try {
    const okAt = await waitFor(
      async () => (await daemon.status()).state === 'ok' && Date.now(),
      240_000,
      'ok before the fault',
      1000,
    ).catch(() => undefined);
    result.okBeforeMs = okAt === undefined ? null : okAt - (samples[0]?.at ?? okAt);
    if (okAt === undefined) notes.push(`never ok before the fault: ${JSON.stringify(samples.at(-1))}`);
    const load = () =>
      loadavg()
        .map((x) => x.toFixed(1))
        .join(' ');
    notes.push(`load at the first ok ${load()}`);
    if (def.learnMs) {
      await sleep(def.learnMs);
      notes.push(`${def.learnMs / 1000} s healthy before the fault (learning window); load then ${load()}`);
    }
    if (burners.length > 0) {
      stopBurners();
      notes.push(`${burners.length} busy loops ran from the start to the fault`);
    }
    if (PHASE_SPREAD_MS > 0) {
      const wait = Math.random() * PHASE_SPREAD_MS;
      await sleep(wait);
      notes.push(
        `the fault started ${(wait / 1000).toFixed(1)} s later (--phase-spread ${PHASE_SPREAD_MS / 1000})`,
      );
    }
    t0 = Date.now();
    /** @type {Ctx} */
    const ctx = {
      llama,
      daemon,
      note: (s) => notes.push(s),
      /** Holds until the first not-ok sample (at most 120 s), then `--hold`. */
      holdAfterNotOk: async () => {
        await waitFor(() => samples.some((x) => x.at >= t0 && x.state !== 'ok'), 120_000, 'not ok').catch(
          () => notes.push('still ok 120 s into the fault'),
        );
        await sleep(HOLD_MS);
      },
    };
    await def.fault(ctx);
    const tEnd = Date.now();
    notes.push(`load at the fault's end ${load()}`);
    result.heldS = (tEnd - t0) / 1000;
    const back =
      name === 'healthy'
        ? undefined
        : await waitFor(
            () => samples.find((x) => x.at >= tEnd && x.state === 'ok')?.at,
            RECOVER_MS,
            'ok after the fault',
            1000,
          ).catch(() => undefined);
    result.backMs = back === undefined ? null : back - tEnd;
    result.tEnd = tEnd;
    await collect();
    if (def.learnMs) notes.push(chatRates([...chatRuns.values()], t0, tEnd));
    const events = await daemon.events().catch(() => []);
    /** @typedef {{ type: string, time: number, data?: { result?: string } }} JournalEvent */
    const remediations = events.filter(
      (/** @type {JournalEvent} */ e) =>
        e.type === 'remediation' &&
        e.time >= t0 &&
        !['cooldown', 'capped', 'paused'].includes(e.data?.result ?? ''),
    ).length;
    result.remediations = remediations;
    result.remediationsSkipped =
      events.filter((/** @type {JournalEvent} */ e) => e.type === 'remediation' && e.time >= t0).length -
      remediations;
  } finally {
    stopBurners();
    sampling = false;
    await sampler;
    await daemon.stop();
    await llama.cleanup();
  }
  summarise(result, samples, t0);
  return { ...result, samples };
}

/**
 * What our chat probes streamed before the fault (the window their objective is learned from: reduce/objectives.ts
 * onProbeRate) and during it, in inter-token latency (ms): a crawl is detected only if the second is over the
 * objective the first taught.
 * @param {ChatRun[]} runs
 * @param {number} t0
 * @param {number} tEnd
 */
function chatRates(runs, t0, tEnd) {
  runs.sort((a, b) => a.at - b.at);
  const ms = (/** @type {number} */ x) => x.toFixed(1);
  const med = (/** @type {number[]} */ xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0
      ? NaN
      : s.length % 2
        ? s[s.length >> 1]
        : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const before = runs.filter((r) => r.at < t0).map((r) => r.itlMs);
  const during = runs.filter((r) => r.at >= t0 && r.at <= tEnd).map((r) => r.itlMs);
  return `chat ITL before the fault (ms, in order): ${before.map(ms).join(' ')}; during: median ${ms(med(during))} of ${during.length} (${ms(Math.min(...during))}–${ms(Math.max(...during))})`;
}

/**
 * @param {Result} r
 * @param {Sample[]} samples
 * @param {number} t0
 */
function summarise(r, samples, t0) {
  const during = samples.filter((x) => x.at >= t0 && x.at <= (r.tEnd ?? Infinity));
  /** @type {Map<number | string, number>} */
  const h = new Map();
  let maxOk = 0;
  for (const x of during) {
    h.set(x.health, (h.get(x.health) ?? 0) + 1);
    if (x.health === 200) maxOk = Math.max(maxOk, x.healthMs);
  }
  r.health = `${[...h].map(([k, v]) => `${k}×${v}`).join(' ')}${maxOk ? ` (200 in ≤ ${maxOk} ms)` : ''}`;
  /** @type {Step[]} */
  const timeline = [];
  for (const x of samples.filter((s) => s.at >= t0)) {
    const label = `${x.state}${x.diagnosis ? `/${x.diagnosis}` : ''}`;
    if (timeline.at(-1)?.label !== label) timeline.push({ t: (x.at - t0) / 1000, label, cause: x.cause });
  }
  r.timeline = timeline;
  const firstNot = during.find((x) => x.state !== 'ok');
  r.notOkS = firstNot ? (firstNot.at - t0) / 1000 : null;
  const want = r.expect?.state;
  const hit = want && samples.find((x) => x.at >= t0 && want.includes(x.state));
  r.expectedS = hit ? (hit.at - t0) / 1000 : null;
  r.wedgedOnsets = timeline.filter(
    (x) => x.label.startsWith('wedged') && x.t <= (r.heldS ?? Infinity),
  ).length;
  r.states = [...new Set(during.map((x) => x.state))].join(',');
  r.notOkSamples = during.filter((x) => x.state !== 'ok').length;
  r.sampleCount = during.length;
}

/** @param {Result} r */
function line(r) {
  const tl = (r.timeline ?? []).map((x) => `${x.t.toFixed(0)}s ${x.label}`).join(' → ');
  return [
    `## ${r.name}: ${r.what}`,
    `  /health during: ${r.health}`,
    `  timeline (s from the fault): ${tl}`,
    `  states during: ${r.states} (${r.notOkSamples} of ${r.sampleCount} samples not ok)`,
    `  first not ok: ${r.notOkS ?? 'never'} s; expected ${r.expect?.state?.join('|') ?? '-'}: ${r.expectedS ?? (r.expect?.state ? 'never' : '-')} s; held ${r.heldS?.toFixed(0)} s; back to ok ${r.name === 'healthy' ? '-' : r.backMs === null || r.backMs === undefined ? 'never' : `${(r.backMs / 1000).toFixed(1)} s`} after the end; wedged onsets ${r.wedgedOnsets}; remediations ${r.remediations} (+${r.remediationsSkipped} skipped)`,
    ...r.notes.map((n) => `  note: ${n}`),
  ].join('\n');
}

console.log(
  `real llama-server ${fx.ready.commit.slice(0, 7)} (${fx.ready.package}), model ${(fx.ready.modelBytes / 1e6).toFixed(0)} MB; scenarios ${wanted.join(', ')}; load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
const queue = [...wanted];
/** @type {((Result & { samples: Sample[] }) | { name: string, error: string })[]} */
const results = [];
await Promise.all(
  Array.from({ length: Math.min(Number(args.parallel), queue.length) }, async () => {
    for (let n = queue.shift(); n; n = queue.shift()) {
      const r = await runScenario(n).catch((err) => ({ name: n, error: String(err?.stack ?? err) }));
      results.push(r);
      console.log('error' in r ? `## ${n}: FAILED ${r.error}` : line(r));
    }
  }),
);
console.log(
  `load at the end ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2));
