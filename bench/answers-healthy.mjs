// The answer-checking probes on a healthy simulator for a long stretch (default 10 minutes): the canary, the
// tool-call matrix and the structured probe, as configured in examples/vllm.yaml (cadence, timeouts, connection
// kinds), run by the daemon's own scheduler against the simulator's router. Prints runs and false failures per
// probe (the acceptance is zero), with questions and matrix cells counted, and quotes every failure.
// Usage: npm run bench:answers [-- --minutes 10 --config examples/vllm.yaml]
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

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    config: { type: 'string', default: new URL('../examples/vllm.yaml', import.meta.url).pathname },
  },
});
const MINUTES = Number(args.minutes);
const KINDS = new Set(['canary', 'toolcall', 'structured']);

const sim = await startSim();
// The example's answer-checking probes, pointed at the simulator: same every, timeout, conn, cells.
const doc = parse(readFileSync(args.config, 'utf8'));
const example = doc.targets[0];
const probes = example.probes
  .filter((p) => KINDS.has(p.kind))
  .map((p) => {
    const copy = { ...p };
    delete copy.endpoints;
    return copy;
  });
const text = stringify({
  stateDir: '/nonexistent-bench-state',
  targets: [
    {
      name: 'bench',
      model: 'sim-model',
      endpoints: [{ name: 'router', url: sim.urls.router }],
      probes,
    },
  ],
});
const target = parseConfigText(text, resolve('bench.yaml'), {}).config.targets[0];

const results = [];
const scheduler = new ProbeScheduler({
  target,
  headers: new Map(),
  metrics: createMetrics({ defaults: false }),
  logger: pino({ level: 'silent' }),
  onResult: (r) => results.push(r),
});
const t0 = Date.now();
scheduler.start();
try {
  await new Promise((r) => setTimeout(r, MINUTES * 60_000));
} finally {
  await scheduler.stop({ drain: true });
  await sim.stop();
}

const cadence = target.probes.map(
  (p) =>
    `${p.name} (${p.kind}) every ${p.every / 1000} s over ${(p.conn ?? (p.kind === 'toolcall' ? ['fresh', 'keepalive'] : ['fresh'])).join('+')}`,
);
console.log(
  `answer probes on the healthy simulator: ${((Date.now() - t0) / 60_000).toFixed(1)} min, ${args.config}'s cadence: ${cadence.join(', ')}`,
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
    extra = `; ${cells.length} matrix cells, ${cells.filter((c) => c.result !== 'ok').length} failed`;
  }
  console.log(
    `${p.name.padEnd(11)} runs ${String(ran.length).padStart(4)}  false failures ${failed.length}  skipped (overlap) ${skipped}${extra}`,
  );
  for (const f of failed)
    console.log(`  ${new Date(f.start).toISOString()} ${f.conn}: ${f.result}: ${f.error ?? ''}`);
}
console.log(`false failures in all: ${falseFailures}`);
process.exitCode = 0;
