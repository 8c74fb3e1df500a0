// @ts-check
// Wrong answers by window (issue 26), measured through the pure core at the example cadence: a canary every 30 s
// with 10 % jitter and every 4th run asking two questions (the canary probe of examples/wedgewatch.yaml),
// the example's detect settings, and Prometheus at the documented 15 s scrape (docs/deploy.md) and its default 1 m
// evaluation interval, with the shipped WedgewatchWrongOutput `for:` on the slot's hold it selects on
// (wedgewatch_probe_wrong_output_held, exported from the same slot memory). Each trial: an hour healthy, then answers
// wrong at `--rate` for `--fault` minutes from a random phase, then healthy until back to ok. Prints, per rate:
// P(page within 10 minutes), page time quantiles, pages per incident (a label that drops mid-fault and comes back
// pages twice), time back to ok after the fault, and the healthy hour's transitions and pages (expected 0).
// The figures behind docs/decisions.md "Wrong answers by window"; asserts nothing.
// Usage: npm run bench:wrong-window [-- --trials 2000 --rates 0.1,0.5,1 --fault 60 --seed 26 --for 5m]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';

const dist = process.env.WEDGEWATCH_DIST ?? new URL('../dist/', import.meta.url).pathname;
const { reduceInPlace } = await import(join(dist, 'core/reduce/reduce.js'));
const { initialState } = await import(join(dist, 'core/memory.js'));
const { detectSchema } = await import(join(dist, 'config/schema.js'));
const { WRONG_ANSWERS, WRONG_WINDOW, wrongHeld } = await import(join(dist, 'core/wrong-window.js'));
const { mulberry32 } = await import(new URL('../test/helpers/ingest-gen.mjs', import.meta.url).href);

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '2000' },
    rates: { type: 'string', default: '0.1,0.5,1' },
    fault: { type: 'string', default: '60' },
    seed: { type: 'string', default: '26' },
    scrape: { type: 'string', default: '15' },
    eval: { type: 'string', default: '60' },
    // Another `for:` than the shipped one, to compare (e.g. 5m, the old value).
    for: { type: 'string' },
  },
});
const TRIALS = Number(args.trials);
const FAULT_MS = Number(args.fault) * 60_000;
const SCRAPE_MS = Number(args.scrape) * 1000;
const EVAL_MS = Number(args.eval) * 1000;
const rng = mulberry32(Number(args.seed));

// The example cadence: the canary probe of examples/wedgewatch.yaml (every, pairEvery; jitter is the schema
// default), read from the file so a change there shows here.
const exampleText = readFileSync(new URL('../examples/wedgewatch.yaml', import.meta.url), 'utf8');
const exampleDoc = parse(exampleText);
const canary = exampleDoc.targets[0].probes.find((/** @type {{ kind: string }} */ p) => p.kind === 'canary');
if (!canary) throw new Error('examples/wedgewatch.yaml has no canary probe');
/** @type {Record<string, number>} */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000 };
const parseMs = (/** @type {unknown} */ d) => {
  const m = /^(\d+)(ms|s|m)$/.exec(String(d));
  if (!m) throw new Error(`cannot read duration ${d}`);
  return Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? NaN);
};
const EVERY_MS = parseMs(canary.every);
const PAIR_EVERY = Number(canary.pairEvery ?? 4);
const JITTER = 0.1;
const detect = detectSchema.parse(exampleDoc.targets[0].detect ?? {});

// The shipped alert's `for:`.
const rules = parse(readFileSync(new URL('../alerts/wedgewatch.rules.yml', import.meta.url), 'utf8'));
const wrongRule = rules.groups
  .flatMap((/** @type {{ rules: { alert?: string, for?: string }[] }} */ g) => g.rules)
  .find((/** @type {{ alert?: string }} */ r) => r.alert === 'WedgewatchWrongOutput');
const FOR_MS = parseMs(args.for ?? wrongRule.for ?? '0s');

const cfg = { detect, hops: ['router'], probes: { canary: { kind: 'canary' } } };

/**
 * One trial: returns the label's timeline as [time, wrong?] changes, the transitions in the healthy hour, and the
 * times (relative to the fault's start) the label came on and the target got back to ok.
 */
/** @param {number} rate */
function trial(rate) {
  const s = initialState('t', 0);
  let run = Math.floor(rng() * PAIR_EVERY);
  let t = rng() * EVERY_MS;
  const healthyEnd = 3_600_000;
  const faultStart = healthyEnd + rng() * EVERY_MS;
  const faultEnd = faultStart + FAULT_MS;
  /** @type {[number, boolean][]} */
  const changes = [];
  let wrongNow = false;
  let healthyTransitions = 0;
  /** @type {number | undefined} */
  let okAfter;
  let lastState = s.state;
  for (; ; t += EVERY_MS) {
    const start = t + rng() * JITTER * EVERY_MS;
    const questions = PAIR_EVERY > 0 && run++ % PAIR_EVERY === PAIR_EVERY - 1 ? 2 : 1;
    const inFault = start >= faultStart && start < faultEnd;
    let wrong = false;
    for (let q = 0; q < questions; q++) if (inFault && rng() < rate) wrong = true;
    const end = start + 300;
    reduceInPlace(
      s,
      {
        kind: 'probe',
        target: 't',
        probe: 'canary',
        probeKind: 'canary',
        endpoint: 'router',
        conn: 'fresh',
        result: wrong ? 'wrong_output' : 'ok',
        start,
        durationMs: 300,
        ...(wrong ? { error: 'wrong answer: expected "7748", got "7749"' } : {}),
      },
      end,
      cfg,
    );
    if (s.state !== lastState) {
      if (end < healthyEnd && lastState !== 'unknown') healthyTransitions++;
      lastState = s.state;
    }
    // What WedgewatchWrongOutput selects on: a slot's hold (wedgewatch_probe_wrong_output_held), not the label.
    const w = Object.values(s.slots).some(wrongHeld);
    if (w !== wrongNow) {
      changes.push([end, w]);
      wrongNow = w;
    }
    if (end > faultEnd && s.state === 'ok' && okAfter === undefined) {
      okAfter = end - faultEnd;
      break;
    }
    if (end > faultEnd + 6 * 3_600_000) break;
  }
  return { changes, healthyTransitions, faultStart, faultEnd, okAfter };
}

/** Prometheus: scrapes every SCRAPE_MS, evaluates every EVAL_MS (random phases), `for:` FOR_MS. Firing starts. */
/**
 * @param {[number, boolean][]} changes
 * @param {number} from
 * @param {number} to
 */
function pages(changes, from, to) {
  const labelAt = (/** @type {number} */ time) => {
    let on = false;
    for (const [at, w] of changes) {
      if (at > time) break;
      on = w;
    }
    return on;
  };
  const scrapePhase = rng() * SCRAPE_MS;
  const evalPhase = rng() * EVAL_MS;
  /** @type {number[]} */
  const fired = [];
  /** @type {number | undefined} */
  let pendingSince;
  let firing = false;
  for (let e = from + evalPhase; e < to; e += EVAL_MS) {
    // The newest scrape at or before this evaluation.
    const scrapedAt = Math.floor((e - scrapePhase) / SCRAPE_MS) * SCRAPE_MS + scrapePhase;
    const on = labelAt(scrapedAt);
    if (!on) {
      pendingSince = undefined;
      firing = false;
      continue;
    }
    pendingSince ??= e;
    if (!firing && e - pendingSince >= FOR_MS) {
      firing = true;
      fired.push(e);
    }
  }
  return fired;
}

const quantile = (/** @type {number[]} */ xs, /** @type {number} */ q) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const min = (/** @type {number} */ ms) => (ms / 60_000).toFixed(1);

console.log(
  `canary every ${EVERY_MS / 1000} s (jitter ${JITTER}, pairEvery ${PAIR_EVERY}); window: ${WRONG_ANSWERS} wrong of the last ${WRONG_WINDOW} answers, held until ${WRONG_WINDOW} clean; WedgewatchWrongOutput for: ${FOR_MS / 1000} s; scrape ${SCRAPE_MS / 1000} s, evaluation ${EVAL_MS / 1000} s; ${TRIALS} trials, fault ${FAULT_MS / 60_000} min`,
);
console.log(
  '| rate | P(page ≤ 10 min) | page p50 / p90 (min) | incidents paged more than once | time back to ok p50 / max (min) | healthy hour: transitions, pages |',
);
console.log('|---|---|---|---|---|---|');
for (const rate of args.rates.split(',').map(Number)) {
  let within = 0;
  let twice = 0;
  let healthyT = 0;
  let healthyPages = 0;
  const firstPage = [];
  const back = [];
  for (let i = 0; i < TRIALS; i++) {
    const r = trial(rate);
    healthyT += r.healthyTransitions;
    healthyPages += pages(r.changes, 0, r.faultStart).length;
    const p = pages(r.changes, r.faultStart, r.faultEnd + (r.okAfter ?? 0) + 60_000);
    if (p.length > 0) {
      firstPage.push(p[0] - r.faultStart);
      if (p[0] - r.faultStart <= 600_000) within++;
    }
    if (p.length > 1) twice++;
    if (r.okAfter !== undefined) back.push(r.okAfter);
  }
  console.log(
    `| ${rate} | ${((100 * within) / TRIALS).toFixed(1)} % | ${min(quantile(firstPage, 0.5))} / ${min(quantile(firstPage, 0.9))} | ${((100 * twice) / TRIALS).toFixed(1)} % | ${min(quantile(back, 0.5))} / ${min(Math.max(...back))} | ${healthyT}, ${healthyPages} |`,
  );
}
