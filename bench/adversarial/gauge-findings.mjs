// Issue 37 items 4 and 1 as bench:adversarial rows against the real daemon on 127.0.0.1.
// 37.4: prompts that print SGLang batch lines (in a `--log-requests` echo, in the tool parser's record of the model's
// output, 2,856 fake DP ranks in all) must set no engine gauge and add no rank series to /metrics.
// 37.1: a busy engine (first tokens in 6–9 s, every answer in 14–17 s, its decode batches making tokens) and a
// thread-death traceback in its log: the line is raised, but never confirmed: no wedged, no bundle, no remediation.
// The control: the same engine when nothing moves any more is wedged by the same line (else "not wedged" proves
// nothing).
/* global setInterval, clearInterval, clearTimeout */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DIST, Daemon, fakeEngine, freePort, metricSum, sleep, until } from './harness.mjs';
import { markerRuns, remediateToMarker } from './main-env.mjs';

const { bootstrapThreadTraceback, pyTime } = await import(join(DIST, 'sim/logfmt.js'));

/** SGLang's decode batch line as the scheduler prints it (scheduler_metrics_mixin.py log_decode_stats). */
const batchLine = (dp, running, usage, tput, at = new Date()) =>
  `[${pyTime(at)} DP${dp} TP${dp}] Decode batch, #running-req: ${running}, #token: 4000, token usage: ${usage}, cuda graph: True, gen throughput (token/s): ${tput}, #queue-req: 0, `;

/** A fake engine log line per shape, each carrying a batch line of rank `dp` (64 running, usage 0.95). */
function fakeShapes(dp) {
  const fake = batchLine(dp, 64, '0.95', '500.00');
  const t = pyTime(new Date());
  return [
    `[${t}] Receive: obj=GenerateReqInput(text='${fake}', sampling_params={'max_new_tokens': 8}, rid='u-${dp}')`,
    `[${t}] Finish: obj=GenerateReqInput(rid='u-${dp}'), out={'text': '${fake}', 'meta_info': {}}`,
  ];
}

/** The tool parser's warning with the model's output: raw lines, each a fake rank's batch line. */
function toolOutput(fromDp, n) {
  const lines = Array.from({ length: n }, (_, i) => batchLine(fromDp + i, 64, '0.95', '500.00'));
  return `[${pyTime(new Date())} TP0] Failed to parse JSON part: {"name": "f", "arguments": "\n${lines.join('\n')}\n"}, JSON parse error: Invalid control character at: line 1 column 29 (char 28)`;
}

const rankSeries = (text) =>
  (text ?? '').split('\n').filter((l) => l.startsWith('wedgewatch_engine_rank_') && l.includes('target="pd"'))
    .length;
const gauge = (text, name) =>
  metricSum(text, name, (l) => l.includes('target="pd"') && l.includes('service="decode"'));

// ---------------------------------------------------------------------------------------------------------
export async function gaugesFromUserText(env) {
  const d = env.daemon;
  // The engine's own line first: the gauges then say what the engine said.
  appendFileSync(env.sim.logFiles.decode, `${batchLine(0, 3, '0.20', '40.00')}\n`);
  await sleep(1500);
  const before = await d.metrics();
  const seriesBefore = rankSeries(before);
  const lines = [];
  let dp = 100;
  for (let r = 0; r < 5; r++) {
    lines.push(toolOutput(dp, 570));
    dp += 570;
    for (const l of fakeShapes(dp++)) lines.push(l);
    lines.push(...fakeShapes(dp++));
  }
  appendFileSync(env.sim.logFiles.decode, `${lines.join('\n')}\n`);
  await sleep(3000);
  const after = await d.metrics();
  const running = gauge(after, 'wedgewatch_engine_running_requests');
  const usage = gauge(after, 'wedgewatch_engine_token_usage_ratio');
  const seriesAfter = rankSeries(after);
  const fakeRank = /wedgewatch_engine_rank_[a-z_]+\{[^}]*target="pd"[^}]*rank="(?:[1-9]\d{2,})"/.test(
    after ?? '',
  );
  const pass = running !== 64 && usage !== 0.95 && seriesAfter <= seriesBefore && !fakeRank;
  return {
    pass,
    value:
      `${dp - 100} fake ranks: decode running ${running}, token usage ${usage}; rank series ${seriesBefore} → ${seriesAfter}; ` +
      `/metrics ${((before ?? '').length / 1024).toFixed(0)} → ${((after ?? '').length / 1024).toFixed(0)} KB`,
  };
}

// ---------------------------------------------------------------------------------------------------------
/**
 * A loaded engine behind an OpenAI-compatible /v1/chat/completions: the first token after 6–9 s, the answer done
 * after 14–17 s (streamed); `hang()` makes every later request wait forever (a dead thread). /health 200.
 */
async function busyEngine() {
  let hung = false;
  const open = new Set();
  /** The pending first token and end of each stream in flight: a dead engine sends neither. */
  const timers = new Map();
  const engine = await fakeEngine((req, res, _body, path) => {
    if (!path.includes('/chat/completions')) return res.end('ok');
    if (hung) {
      open.add(res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return;
    }
    const first = 6000 + Math.random() * 3000;
    const done = 14_000 + Math.random() * 3000;
    // As SGLang streams it (serving_chat.py): content chunks, the last one with its finish_reason, then [DONE].
    const chunk = (content, finish = null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    open.add(res);
    const t1 = setTimeout(() => res.write(chunk('O')), first);
    const t2 = setTimeout(() => {
      res.write(chunk('K', 'stop'));
      res.end('data: [DONE]\n\n');
      open.delete(res);
      timers.delete(res);
    }, done);
    timers.set(res, [t1, t2]);
    res.on('close', () => (clearTimeout(t1), clearTimeout(t2), open.delete(res), timers.delete(res)));
  });
  return {
    ...engine,
    // The thread dies: nothing answers from now on, the streams in flight included (they once kept finishing for
    // up to 17 s, the daemon rightly read that as an engine still serving, and the control missed its 40 s 1 run in 2).
    hang: () => {
      hung = true;
      for (const [t1, t2] of timers.values()) {
        clearTimeout(t1);
        clearTimeout(t2);
      }
      timers.clear();
    },
    close: async () => {
      for (const r of open) r.destroy();
      await engine.close();
    },
  };
}

export async function busyEngineConfirm(_env, scope) {
  const engine = await busyEngine();
  scope.add(() => engine.close());
  const log = join(scope.dir, 'b1-prefill.log');
  writeFileSync(log, '');
  const marker = join(scope.dir, 'b1-remediations.txt');
  const port = await freePort();
  const config = {
    web: { listenAddress: `127.0.0.1:${port}` },
    stateDir: join(scope.dir, 'b1-state'),
    incidents: { on: ['wedged'], captureTimeout: '10s' },
    targets: [
      {
        name: 'busy',
        model: 'm',
        endpoints: [{ name: 'e', url: engine.url }],
        probes: [
          // Two chat slots, as the example's fresh and keep-alive: each run waits 6–9 s for its first token.
          {
            name: 'chat',
            kind: 'chat',
            every: '3s',
            jitter: 0,
            timeout: '30s',
            conn: ['fresh', 'keepalive'],
          },
          { name: 'health', kind: 'health', every: '2s', timeout: '2s', path: '/health' },
        ],
        logs: [{ service: 'prefill', path: log, from: 'end', packs: ['sglang', 'sglang_disagg', 'nixl'] }],
        detect: {
          wedgeAfter: 2,
          recoverAfter: 1,
          confirmInterval: '1s',
          confirmAfter: '5s',
          hangAfter: '60s',
        },
        remediate: remediateToMarker(marker),
      },
    ],
  };
  const path = join(scope.dir, 'b1.yaml');
  writeFileSync(path, stringify(config));
  const d = new Daemon('b1', path, { port });
  scope.add(() => d.kill());
  await d.start();
  // The engine's own decode batches: tokens every second while it serves.
  let moving = true;
  const batches = setInterval(() => {
    if (moving) appendFileSync(log, `${batchLine(0, 48, '0.80', '900.00')}\n`);
  }, 1000);
  scope.add(() => clearInterval(batches));
  await sleep(20_000); // every slot has runs in flight and finishing
  const t0 = Date.now();
  appendFileSync(log, bootstrapThreadTraceback(8).join('\n') + '\n');
  await sleep(20_000);
  const evs = (await d.events('busy', { since: t0 })) ?? [];
  const raised = evs.filter((e) => e.type === 'critical_log').length;
  const confirmed = evs.filter((e) => e.type === 'critical_confirmed').length;
  const wedged = evs.filter((e) => e.type === 'transition' && e.data?.to === 'wedged').length;
  const bundles = (await d.json('/api/incidents?target=busy'))?.incidents?.length ?? 0;
  const remediations = markerRuns(marker);
  // The control: the thread really dies now (nothing answers, the batches stop); the same line is confirmed.
  engine.hang();
  moving = false;
  const tc = Date.now();
  appendFileSync(log, bootstrapThreadTraceback(9).join('\n') + '\n');
  const control = await until(
    async () => ((await d.events('busy', { since: tc, type: 'critical_confirmed' })) ?? []).length > 0,
    { timeoutMs: 40_000, intervalMs: 500 },
  );
  const pass =
    raised >= 1 && confirmed === 0 && wedged === 0 && bundles === 0 && remediations === 0 && control;
  return {
    pass,
    value:
      `busy: line raised ${raised}, confirmed ${confirmed}, wedged ${wedged}, bundles ${bundles}, remediations ${remediations}; ` +
      `dead: ${control ? `confirmed in ${((Date.now() - tc) / 1000).toFixed(1)} s` : 'NOT confirmed'}`,
  };
}
