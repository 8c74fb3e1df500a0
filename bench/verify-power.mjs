// @ts-check
// bench:verify-power — does the verify gate tell noise from a regression? One simulator (a child process, its
// own core) runs with --jitter; one baseline gate run is saved, then `--runs` gate runs each at slow:factor=1.0,
// 1.05 and 1.2 (interleaved, so a drift of the machine hits all three alike) are compared with it at the 10 %
// threshold. Each gate run is the throughput step alone, its two default levels (1x3, 32x64), default repeats
// (a warm-up + 5 trials per level). Prints the verdict rates per factor and the minimum detectable effect.
// Acceptance (issue 29): 1.0 never REGRESSION and PASS in >= 19/20; 1.2 REGRESSION in >= 19/20; 1.05 never
// REGRESSION.
// Usage: npm run bench:verify-power [-- --runs 20 --jitter 0.05 --max-tokens 32 --seed 29]
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { compareBaseline, toSaved } from '../dist/verify/baseline.js';
import { runVerify } from '../dist/verify/runner.js';
import { makeTarget } from '../dist/verify/target.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    jitter: { type: 'string', default: '0.03' },
    'max-tokens': { type: 'string', default: '32' },
    seed: { type: 'string', default: '29' },
    threshold: { type: 'string', default: '0.1' },
  },
});
const runs = Number(values.runs);
const jitter = Number(values.jitter);
const maxTokens = Number(values['max-tokens']);
const threshold = Number(values.threshold);
const FACTORS = [1.0, 1.05, 1.2];

// A fast model so 61 gate runs fit in minutes; the step time still grows with the batch as the default's does.
const MODEL = { stepBaseMs: 20, stepPerReqMs: 0.1, prefillMs: 2, maxRunning: 64, defaultMaxTokens: 16 };
const simSource = `
  import { startSim } from ${JSON.stringify(new URL('../dist/sim/index.js', import.meta.url).href)};
  const sim = await startSim({ model: ${JSON.stringify(MODEL)}, jitter: { sd: ${jitter}, seed: ${Number(values.seed)} } });
  process.stdout.write(JSON.stringify(sim.urls) + '\\n');
  process.stdin.on('end', () => sim.stop().then(() => process.exit(0)));
  process.stdin.resume();
`;
const child = spawn(process.execPath, ['--input-type=module', '-e', simSource], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const urls = await new Promise((resolve, reject) => {
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
  });
  child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
});

/** @param {number} factor */
async function setSlow(factor) {
  const res = await request(`${urls.control}/faults/slow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ factor }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200)
    throw new Error(`enabling slow:factor=${factor}: HTTP ${res.statusCode} ${text}`);
}

const target = makeTarget(urls.router, 'sim-model');
const gate = () =>
  runVerify({
    target,
    steps: ['throughput'],
    knobs: { throughput: { maxTokens } },
  });

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const t0 = performance.now();
try {
  await setSlow(1);
  const base = await gate();
  if (!base.ok) throw new Error(`baseline run failed: ${base.steps.map((s) => s.summary).join('; ')}`);
  const baseline = toSaved(base.url, base.model, base.steps);
  /** @typedef {{ PASS: number, INCONCLUSIVE: number, REGRESSION: number, mde: number[], agg: number[] }} Tally */
  /** @type {Record<string, Tally>} */
  const tally = Object.fromEntries(
    FACTORS.map((f) => [f, { PASS: 0, INCONCLUSIVE: 0, REGRESSION: 0, mde: [], agg: [] }]),
  );
  for (let i = 0; i < runs; i++) {
    for (const f of FACTORS) {
      await setSlow(f);
      const r = await gate();
      if (!r.steps[0].ok) throw new Error(`gate run failed at factor ${f}: ${r.steps[0].summary}`);
      const c = compareBaseline(baseline, r.steps, threshold, 0.05);
      const t = tally[f];
      t[/** @type {'PASS' | 'INCONCLUSIVE' | 'REGRESSION'} */ (c.verdict)]++;
      const agg = c.figures.filter((x) => x.key.endsWith('.agg_tok_s'));
      for (const a of agg) t.mde.push(a.mde);
      t.agg.push(...agg.map((a) => a.ratio));
      process.stderr.write(
        `[${((performance.now() - t0) / 1000).toFixed(0)}s] run ${i + 1}/${runs} slow:factor=${f}: ${c.verdict}` +
          (c.verdict !== 'PASS'
            ? ` (${c.figures
                .filter((x) => x.verdict !== 'PASS')
                .map((x) => `${x.key} ${x.verdict}`)
                .join(', ')})`
            : '') +
          '\n',
      );
    }
  }
  console.log(
    `verify power: ${runs} gate runs per factor against one baseline, threshold ${threshold * 100}%, ` +
      `sim --jitter ${jitter} (seed ${values.seed}), throughput step alone (1x3, 32x64, max_tokens=${maxTokens}), ` +
      `${base.repeat} trials per level after a warm-up; ${((performance.now() - t0) / 1000).toFixed(0)}s`,
  );
  console.log(
    'factor  PASS  INCONCLUSIVE  REGRESSION  agg tok/s after/before (median)  MDE agg tok/s (median, max)',
  );
  for (const f of FACTORS) {
    const t = tally[f];
    const fin = t.mde.filter(Number.isFinite);
    console.log(
      `${f.toFixed(2).padEnd(6)}  ${`${t.PASS}/${runs}`.padStart(5)}  ${`${t.INCONCLUSIVE}/${runs}`.padStart(12)}  ${`${t.REGRESSION}/${runs}`.padStart(10)}  ` +
        `${median(t.agg).toFixed(3).padStart(31)}  ${fin.length ? `${(median(fin) * 100).toFixed(1)}%, ${(Math.max(...fin) * 100).toFixed(1)}%` : 'none'}`,
    );
  }
  const ok =
    tally[1].REGRESSION === 0 &&
    tally[1].PASS >= Math.ceil(runs * 0.95) &&
    tally[1.2].REGRESSION >= Math.ceil(runs * 0.95) &&
    tally[1.05].REGRESSION === 0;
  console.log(
    `acceptance (1.0 never REGRESSION and PASS >= 95%; 1.2 REGRESSION >= 95%; 1.05 never REGRESSION): ${ok ? 'met' : 'NOT met'}`,
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  child.stdin.end();
}
