// @ts-check
// Every probe kind on a healthy simulator for a long stretch (default 10 minutes): the reference configs' probes
// — examples/wedgewatch.yaml against the SGLang PD simulator, examples/vllm.yaml against the vLLM one — with their
// optional probes (longinput, conversation) uncommented, at the examples' cadence, timeouts and connection kinds,
// run by the daemon's own scheduler. Prints runs and false failures per probe (the acceptance is zero), with
// questions, matrix cells and conversation rounds counted, and quotes every failure.
// Usage: npm run bench:answers [-- --minutes 10 --engine both|sglang|vllm]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { parse, stringify } from 'yaml';

const dist = process.env.WEDGEWATCH_DIST ?? new URL('../dist/', import.meta.url).pathname;
const { parseConfigText } = await import(join(dist, 'config/load.js'));
const { createMetrics } = await import(join(dist, 'metrics.js'));
const { ProbeScheduler } = await import(join(dist, 'sources/probes/schedule.js'));
const { startSim } = await import(join(dist, 'sim/index.js'));
const { startVllmSim } = await import(join(dist, 'sim/vllm/index.js'));

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    engine: { type: 'string', default: 'both' },
  },
});
const MINUTES = Number(args.minutes);
const example = (/** @type {string} */ name) => new URL(`../examples/${name}`, import.meta.url).pathname;

/** The example's text with its optional probes (the commented block after the marker line) switched on. */
/** @param {string} text */
function withOptionalProbes(text) {
  const lines = text.split('\n');
  const at = lines.findIndex((/** @type {string} */ l) =>
    l.includes('Optional probes shaped like the traffic that breaks'),
  );
  if (at < 0) throw new Error('no optional-probes block in the example');
  let i = at + 1;
  while (i < lines.length && /^\s*#/.test(lines[i]) && !/^\s*# - name:/.test(lines[i])) i++;
  for (; i < lines.length && /^(\s*)# ([- ].*)$/.test(lines[i]); i++)
    lines[i] = lines[i].replace(/^(\s*)# /, '$1');
  return lines.join('\n');
}

/** @param {string} engine */
async function bench(engine) {
  const sim = engine === 'vllm' ? await startVllmSim() : await startSim();
  const file = example(engine === 'vllm' ? 'vllm.yaml' : 'wedgewatch.yaml');
  const doc = parse(withOptionalProbes(readFileSync(file, 'utf8')));
  const t = doc.targets[0];
  // The example's hops, pointed at the simulator's: same names, so the probes' `endpoints:` still hold.
  const urls = engine === 'vllm' ? { [t.endpoints[0].name]: sim.urls.server } : sim.urls;
  const endpoints = t.endpoints
    .filter((/** @type {{ name: string }} */ e) => urls[e.name])
    .map((/** @type {{ name: string }} */ e) => ({ name: e.name, url: urls[e.name] }));
  const text = stringify({
    stateDir: '/nonexistent-bench-state',
    targets: [{ name: `bench-${engine}`, model: 'sim-model', endpoints, probes: t.probes }],
  });
  const target = parseConfigText(text, resolve('bench.yaml'), {}).config.targets[0];
  /** @type {import('../src/core/signals.js').ProbeResultSignal[]} */
  const results = [];
  const scheduler = new ProbeScheduler({
    target,
    headers: new Map(),
    metrics: createMetrics({ defaults: false }),
    logger: pino({ level: 'silent' }),
    onResult: (/** @type {import('../src/core/signals.js').ProbeResultSignal} */ r) => results.push(r),
  });
  const t0 = Date.now();
  scheduler.start();
  try {
    await new Promise((r) => setTimeout(r, MINUTES * 60_000));
  } finally {
    await scheduler.stop({ drain: true });
    await sim.stop();
  }
  const out = [];
  const cadence = target.probes.map(
    (/** @type {{ name: string, kind: string, every: number }} */ p) =>
      `${p.name} (${p.kind}) every ${p.every / 1000} s`,
  );
  out.push(
    `${engine} simulator, healthy: ${((Date.now() - t0) / 60_000).toFixed(1)} min at ${file.split('/').pop()}'s cadence (optional probes on): ${cadence.join(', ')}`,
  );
  let falseFailures = 0;
  for (const p of target.probes) {
    const rs = results.filter((r) => r.probe === p.name);
    const skipped = rs.filter((r) => r.result === 'skipped_overlap').length;
    const ran = rs.filter((r) => r.result !== 'skipped_overlap');
    const failed = ran.filter((r) => r.result !== 'ok');
    falseFailures += failed.length;
    let extra = '';
    if (p.kind === 'canary') {
      const answers = ran.flatMap((r) => r.detail?.answers ?? []);
      extra = `; ${answers.length} questions, ${answers.filter((a) => !a.ok).length} wrong, ${answers.filter((a) => a.mixup).length} mix-ups`;
    } else if (p.kind === 'toolcall') {
      const cells = ran.flatMap((r) => r.detail?.cells ?? []);
      extra = `; ${cells.length} matrix cells (${cells.filter((c) => c.cell === 'large_args').length} large_args), ${cells.filter((c) => c.result !== 'ok').length} failed`;
    } else if (p.kind === 'conversation') {
      const rounds = ran.flatMap((r) => r.detail?.rounds ?? []);
      extra = `; ${rounds.length} rounds`;
    }
    out.push(
      `  ${p.name.padEnd(12)} ${p.kind.padEnd(12)} runs ${String(ran.length).padStart(4)}  false failures ${failed.length}  skipped (overlap) ${skipped}${extra}`,
    );
    for (const f of failed)
      out.push(
        `    ${new Date(f.start).toISOString()} ${f.endpoint}/${f.conn}: ${f.result}: ${f.error ?? ''}`,
      );
  }
  out.push(`  false failures in all: ${falseFailures}`);
  return { out, falseFailures };
}

const engines = args.engine === 'both' ? ['sglang', 'vllm'] : [args.engine];
// Both at once: the simulators are separate processes' worth of servers on their own ports, and the stretch is long.
const runs = await Promise.all(engines.map((e) => bench(e)));
for (const r of runs) console.log(r.out.join('\n'));
const total = runs.reduce((n, r) => n + r.falseFailures, 0);
console.log(`false failures, every simulator: ${total}`);
process.exitCode = total === 0 ? 0 : 1;
