// @ts-check
// The fault matrix (issue 26; docs/design.md#principles, 10): every simulator fault against the real daemon on
// deployed settings — the example configs' probes, cadence, timeouts and detect thresholds
// (examples/wedgewatch.yaml for SGLang PD, examples/vllm.yaml for vLLM), the simulators' default PD timeouts —
// each injected after a healthy period at a random phase against the probe schedule, held, then ended. Per fault:
// time to the expected diagnosis, diagnosis changes while it held (at most 1, only an escalation), time back to ok.
// `silent_wedge` is the bootstrap thread death with no log sources. Plans: test/helpers/fault-matrix/plans.mjs.
// Usage: npm run bench:detect [-- --trials 3 --hold 120 --faults decode_stall,crash --parallel 8 --fast --json F]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadDist, runPlan, verdictOf } from '../test/helpers/fault-matrix/matrix.mjs';
import { plans } from '../test/helpers/fault-matrix/plans.mjs';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '3' },
    faults: { type: 'string' },
    hold: { type: 'string' },
    parallel: { type: 'string' },
    fast: { type: 'boolean', default: false },
    slow: { type: 'boolean', default: false },
    json: { type: 'string' },
    timeline: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(`usage: npm run bench:detect [-- options]
  --trials N      trials per fault (default 3), each after a healthy period
  --faults a,b    only these plans (default: every plan but the slow ones)
  --slow          the slow plans too (leakAfter, orphanAfter, long-input and conversation cadences: 20 min each)
  --fast          the test settings (probes every 2 s) instead of the example cadence
  --hold S        seconds the fault is held after the diagnosis (default 120, --fast 10)
  --parallel N    plans at a time (default: all of them)
  --json FILE     every trial as JSON
  --timeline      print each trial's labels from the fault on (ok included), with time and cause`);
  process.exit(0);
}
/**
 * A plan as this file reads it (test/helpers/fault-matrix/plans.mjs), and one trial's outcome (matrix.mjs).
 * @typedef {{ name: string, engine: string, slow?: boolean, expect: { states: string[], diagnoses?: string[] } }} Plan
 * @typedef {{ ok: boolean, error?: string, ms: number, reached?: string, seen: string[], changes: { escalation: boolean }[], stateChanges?: number, backMs?: number, timeline?: { ms: number, state: string, diagnosis?: string, cause?: string, slots?: string, engines?: string }[] }} Trial
 */
const d = await loadDist();
/** @type {Plan[]} */
const all = plans({ abortCascade: d.abortCascade });
const known = new Set(all.map((p) => p.name));
const wanted = args.faults?.split(',');
for (const n of wanted ?? [])
  if (!known.has(n)) throw new Error(`unknown plan ${n} (have ${[...known].join(', ')})`);
// queue_leak needs leakAfter (10 min) at the example's settings: only with --slow or when named.
const selected = all.filter((p) => (wanted ? wanted.includes(p.name) : !p.slow || args.slow || args.fast));
const TRIALS = Number(args.trials);
const HOLD_MS = Number(args.hold ?? (args.fast ? 10 : 120)) * 1000;
const PARALLEL = Number(args.parallel ?? selected.length * TRIALS);

console.log(
  `fault matrix: ${selected.length} faults × ${TRIALS} trials, ${args.fast ? 'fast test settings (probes every 2 s)' : 'example cadence (examples/wedgewatch.yaml, examples/vllm.yaml)'}, ` +
    `fault held ${HOLD_MS / 1000} s after the diagnosis, ${PARALLEL} at a time`,
);
const started = Date.now();
// Each trial is its own simulator and daemon, run side by side: a trial's recovery (20 min for wrong answers)
// does not hold up the next, and every trial starts after its own healthy period.
const jobs = selected.flatMap((plan) => Array.from({ length: TRIALS }, () => plan));
/** @type {Map<Plan, Trial[]>} */
const done = new Map(selected.map((p) => [p, []]));
await Promise.all(
  Array.from({ length: Math.min(PARALLEL, jobs.length) }, async () => {
    for (let plan = jobs.shift(); plan; plan = jobs.shift()) {
      const r = await runPlan(plan, {
        d,
        trials: 1,
        holdMs: HOLD_MS,
        fast: args.fast,
        onTrial: (/** @type {Plan} */ p, /** @type {Trial} */ t) => {
          console.error(
            `  ${p.name}: ${t.ok ? `${t.reached} in ${(t.ms / 1000).toFixed(1)} s, ${t.changes.length} change(s), ${t.stateChanges} state change(s)` : t.error}, back to ok ${t.backMs === undefined ? 'never' : `${(t.backMs / 1000).toFixed(1)} s`}  [${((Date.now() - started) / 1000).toFixed(0)} s]`,
          );
          if (args.timeline)
            for (const l of t.timeline ?? []) {
              console.error(
                `    +${(l.ms / 1000).toFixed(1)} s ${l.state}/${l.diagnosis ?? '-'}: ${l.cause ?? ''}`,
              );
              if (l.state !== 'ok') console.error(`      slots: ${l.slots}\n      engines: ${l.engines}`);
            }
        },
      }).catch((err) => ({
        plan,
        trials: [{ ok: false, error: String(err?.stack ?? err), ms: NaN, seen: [], changes: [] }],
      }));
      done.get(plan)?.push(.../** @type {Trial[]} */ (r.trials));
    }
  }),
);
const results = selected.map((plan) => ({ plan, trials: done.get(plan) ?? [] }));

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sec = (/** @type {number} */ ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '—');
/** @type {{ [column: string]: string | string[], problems: string[] }[]} */
const rows = [];
let failed = 0;
for (const { plan, trials } of results) {
  const ok = trials.filter((t) => t.ok);
  const problems = verdictOf(trials);
  if (problems.length > 0) failed++;
  const changes = ok.map((t) => t.changes.length);
  // Each distinct sequence of labels a trial went through, in order.
  const seen = [...new Set(ok.map((t) => t.seen.join(' → ')))];
  rows.push({
    fault: plan.name,
    engine: plan.engine,
    expected: `${plan.expect.states.join('/')} · ${plan.expect.diagnoses?.join(' or ') ?? 'any'}`,
    reached: `${ok.length}/${trials.length}`,
    toDiagnosis: `${sec(median(ok.map((t) => t.ms)))} (max ${sec(Math.max(...ok.map((t) => t.ms)))})`,
    changes: `${changes.join(' ') || '—'}${ok.some((t) => t.changes.some((c) => !c.escalation)) ? ' (not all escalations)' : ''}`,
    stateChanges: ok.map((t) => t.stateChanges).join(' ') || '—',
    backToOk: `${sec(median(trials.map((t) => t.backMs).filter((x) => x !== undefined)))} (max ${sec(Math.max(...trials.map((t) => t.backMs ?? Infinity)))})`,
    seen: seen.join('; '),
    problems,
  });
}
console.log(
  '\n| fault | engine | expected | reached | time to diagnosis, median (max) | changes while held, per trial | state changes after it, per trial | back to ok, median (max) | labels seen |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.fault} | ${r.engine} | ${r.expected} | ${r.reached} | ${r.toDiagnosis} | ${r.changes} | ${r.stateChanges} | ${r.backToOk} | ${r.seen} |`,
  );
for (const r of rows) for (const p of r.problems) console.log(`FAIL ${r.fault}: ${p}`);
console.log(
  `\n${rows.length - failed} of ${rows.length} faults met the bar (${((Date.now() - started) / 60_000).toFixed(1)} min)`,
);
if (args.json)
  writeFileSync(
    args.json,
    JSON.stringify(
      results.map(({ plan, trials }) => ({ name: plan.name, trials })),
      null,
      2,
    ),
  );
process.exitCode = failed > 0 ? 1 : 0;
