// @ts-check
// The verdict's CPU cost per call (evaluate() runs after every signal; replay runs it per matched line): a healthy
// memory (two hops, both connection kinds, health, three engines, full windows) and the same memory wedged (every
// completion failing), each 500,000 times after a warm-up. Prints figures; asserts nothing.
//   npm run build && node bench/verdict-cost.mjs      WEDGEWATCH_ROOT=<another build to compare>  N=500000
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(process.env.WEDGEWATCH_ROOT ?? fileURLToPath(new URL('..', import.meta.url)));
const { evaluate } = await import(join(ROOT, 'dist/core/verdict/evaluate.js'));
const { detectSchema } = await import(join(ROOT, 'dist/config/schema.js'));
const N = Number(process.env.N ?? 500_000);

const NOW = 50_000_000;
const cfg = {
  detect: detectSchema.parse({}),
  hops: ['proxy', 'router'],
  probes: { chat: { kind: 'chat' }, health: { kind: 'health' }, canary: { kind: 'canary' } },
};
/**
 * @param {string} probe
 * @param {string} kind
 * @param {string} endpoint
 * @param {string} conn
 * @param {string} result
 */
const slot = (probe, kind, endpoint, conn, result) => ({
  probe,
  probeKind: kind,
  endpoint,
  conn,
  failStreak: result === 'ok' ? 0 : 2,
  okStreak: result === 'ok' ? 5 : 0,
  slowStreak: 0,
  leakStreak: 0,
  recent: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  last: { result, start: NOW - 5000, durationMs: 100 },
});
/**
 * @param {string} service
 * @param {Record<string, unknown>} [more]
 */
const engine = (service, more = {}) => ({
  service,
  running: 1,
  queued: 0,
  transferQueue: 0,
  preallocQueue: 0,
  lastSignalAt: NOW - 1000,
  lastProgressAt: NOW - 1000,
  lastSource: 'metrics',
  stalled: false,
  ...more,
});
/** @param {string} result */
function memory(result) {
  /** @type {Record<string, ReturnType<typeof slot>>} */
  const slots = {};
  for (const e of cfg.hops)
    for (const c of ['fresh', 'keepalive']) slots[`chat|${e}|${c}`] = slot('chat', 'chat', e, c, result);
  slots['health|router|fresh'] = slot('health', 'health', 'router', 'fresh', 'ok');
  return {
    target: 't',
    state: 'ok',
    since: 0,
    diagnosis: null,
    cause: '',
    slots,
    engines: {
      prefill: engine('prefill'),
      decode: engine('decode'),
      router: engine('router', { routerInflight: 1, routerBusySince: NOW - 2000 }),
    },
    aborts: [],
    criticalSinceOk: [],
    lastOkAt: NOW - 1000,
    counters: { signals: 0, transitions: 0, wedges: 0, criticalEvents: 0, confirmations: 0 },
  };
}

console.log(`bench:verdict-cost: ${ROOT} on Node ${process.version}, ${N} calls each`);
for (const [name, s] of [
  ['healthy', memory('ok')],
  ['wedged', memory('timeout')],
]) {
  let v;
  for (let i = 0; i < N / 10; i++) v = evaluate(s, NOW, cfg);
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) v = evaluate(s, NOW, cfg);
  const t = process.cpuUsage(t0);
  console.log(
    `  ${name}: ${((t.user + t.system) / N).toFixed(2)} µs CPU per evaluate (${v.state}/${v.diagnosis})`,
  );
}
