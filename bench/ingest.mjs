// @ts-check
// bench:ingest — lines/s of `replay` (all built-in packs) over deterministic 1,000,000-line logs:
//   tuned   test/helpers/ingest-gen.mjs: the generator the scanner was developed against;
//   varied  bench/ingest-varied.mjs: multi-rank prefixes, every batch-line field, request and access logs, long
//           tracebacks: text nobody tuned for;
//   json    the tuned log as JSON records ({"time","level","message"}), read with --format json.
// For each: in process (replayFiles, median of 3), whole process (`node dist/cli.js replay FILE`, start-up
// included, median of 3) and, where mtail is installed, an equivalent mtail program (generated from the same
// packs) on the same file in the same run. Each figure is given for wall time and for CPU time (user + system):
// on a machine other work is loading, the CPU-time figure is the one that says what the code costs.
// Prints figures; asserts nothing.
//   npm run bench:ingest      LINES=1000000  GENERATORS=tuned,varied  MTAIL=0|1  MTAIL_RUNS=1
//                             WEDGEWATCH_ROOT=<another build to compare>
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR as dir, ensureFiles, fileOf, LINES } from './ingest-files.mjs';

const ROOT = resolve(process.env.WEDGEWATCH_ROOT ?? fileURLToPath(new URL('..', import.meta.url)));
const { replayFiles } = await import(join(ROOT, 'dist/commands/replay-files.js'));
const { PACKS } = await import(join(ROOT, 'dist/sources/logs/packs/index.js'));
const { LOG_PACKS } = await import(join(ROOT, 'dist/config/schema.js'));

/** The format each generator's file is read with. */
/** @type {Record<string, string>} */
const FORMAT = { tuned: 'plain', varied: 'plain', json: 'json' };
const chosen = (process.env.GENERATORS ?? 'tuned,varied,json').split(',');
/** Every pack on the command line too: the CLI's default is now the engine's (sglang), the bench runs them all. */
const PACK_ARGS = LOG_PACKS.flatMap((/** @type {string} */ p) => ['--pack', p]);

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const runsText = (/** @type {number[]} */ xs) => xs.map((x) => x.toFixed(2)).join(', ');
const rate = (/** @type {number} */ lines, /** @type {number} */ s) =>
  `${Math.round(lines / s).toLocaleString('en')} lines/s`;

// mtail: one labelled counter per rule (RE2 has no lookahead: the "other reason" rules keep their prefix),
// multi-line rules count their header, and the batch-line gauges.
// MTAIL=0 skips it (its runs take longer than ours); MTAIL_RUNS sets how many (default 1: it is the slow one).
const hasMtail =
  process.env.MTAIL !== '0' && spawnSync('sh', ['-c', 'command -v mtail'], { encoding: 'utf8' }).status === 0;
const MTAIL_RUNS = Number(process.env.MTAIL_RUNS ?? 1);
const progs = join(dir, 'progs');
if (hasMtail) {
  mkdirSync(progs, { recursive: true });
  const re2 = (/** @type {string} */ src) =>
    src
      .replace(/\(\?<(\w+)>/g, '(?P<$1>')
      .replace(/\(\?!.*$/, '')
      .replace(/\//g, '\\/');
  let prog = 'counter log_events_total by rule\ngauge running\ngauge queued\ngauge gen_throughput\n\n';
  for (const p of LOG_PACKS) {
    for (const r of PACKS[p].rules) prog += `/${re2(r.match)}/ {\n  log_events_total["${r.name}"]++\n}\n`;
  }
  prog += '/(Prefill|Decode) batch.*#running-req: (?P<r>\\d+)/ {\n  running = $r\n}\n';
  prog += '/(Prefill|Decode) batch.*#queue-req: (?P<q>\\d+)/ {\n  queued = $q\n}\n';
  prog += '/gen throughput \\(token\\/s\\): (?P<g>[\\d.]+)/ {\n  gen_throughput = $g\n}\n';
  writeFileSync(join(progs, 'wedgewatch.mtail'), prog);
}

/** Runs a command `n` times under /usr/bin/time: median wall and CPU seconds, peak RSS (MB). */
/**
 * @param {string} cmd
 * @param {string[]} args
 */
function timed(cmd, args, n = 3) {
  const runs = [];
  const cpus = [];
  let rss = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', cmd, ...args], {
      encoding: 'utf8',
      maxBuffer: 256 << 20,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    runs.push((performance.now() - t) / 1000);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.slice(-500)}`);
    const [u, sys, m] = r.stderr.trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
    cpus.push(u + sys);
    rss = Math.max(rss, m / 1024 || 0);
  }
  return { runs, s: median(runs), cpu: median(cpus), rss };
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

console.log(`bench:ingest: ${ROOT} on Node ${process.version}, ${LINES} lines per file, all packs`);
for (const name of chosen) {
  await ensureFiles([name]);
  const file = fileOf(name);
  const size = statSync(file).size;
  const format = FORMAT[name];
  const formatArgs = format === 'plain' ? [] : ['--format', format];
  replayFiles({ files: [file], packs: [...LOG_PACKS], format }); // warm the page cache and the JIT
  const runs = [];
  const cpus = [];
  let result;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const c = cpuNow();
    result = replayFiles({ files: [file], packs: [...LOG_PACKS], format });
    runs.push((performance.now() - t) / 1000);
    cpus.push(cpuNow() - c);
  }
  const s = median(runs);
  const cpu = median(cpus);
  const lines = result.lines;
  const events = result.events.length + result.droppedEvents;
  console.log(
    `${name}: ${file} (${lines} lines, ${(size / 1e6).toFixed(1)} MB, ${(size / lines).toFixed(0)} B/line, ${events} events)`,
  );
  console.log(
    `  in process:    wall ${runsText(runs)} s, median ${s.toFixed(3)} s, ${rate(lines, s)}; CPU median ${cpu.toFixed(3)} s, ${rate(lines, cpu)}  (replayFiles: rules and gauges, no verdict timeline)`,
  );
  const whole = timed(process.execPath, [
    join(ROOT, 'dist/cli.js'),
    'replay',
    ...PACK_ARGS,
    ...formatArgs,
    file,
  ]);
  console.log(
    `  whole process: wall ${runsText(whole.runs)} s, median ${whole.s.toFixed(3)} s, ${rate(lines, whole.s)}; CPU median ${whole.cpu.toFixed(3)} s, ${rate(lines, whole.cpu)}; peak RSS ${whole.rss.toFixed(0)} MB  (node dist/cli.js replay FILE)`,
  );
  // The same without the verdict timeline: what the detector run over every engine line costs on this log.
  const bare = timed(process.execPath, [
    join(ROOT, 'dist/cli.js'),
    'replay',
    ...PACK_ARGS,
    ...formatArgs,
    '--no-timeline',
    file,
  ]);
  console.log(
    `  whole process, --no-timeline: wall ${runsText(bare.runs)} s, median ${bare.s.toFixed(3)} s, ${rate(lines, bare.s)}; CPU median ${bare.cpu.toFixed(3)} s, ${rate(lines, bare.cpu)}`,
  );
  if (!hasMtail || format !== 'plain') {
    if (format !== 'plain') {
      console.log('  mtail: not compared (its program reads plain lines)');
      continue;
    }
    console.log(
      process.env.MTAIL === '0'
        ? '  mtail: skipped (MTAIL=0)'
        : '  mtail: not installed (apt-get install -y mtail to compare)',
    );
    continue;
  }
  const m = timed(
    'mtail',
    ['--one_shot', '--one_shot_format=prometheus', '--progs', progs, '--logs', file, '--logtostderr'],
    MTAIL_RUNS,
  );
  console.log(
    `  mtail --one_shot, same rules: wall ${runsText(m.runs)} s, median ${m.s.toFixed(3)} s, ${rate(lines, m.s)}; CPU median ${m.cpu.toFixed(3)} s; peak RSS ${m.rss.toFixed(0)} MB`,
  );
  console.log(
    `  wedgewatch (whole process) vs mtail: ${(m.s / whole.s).toFixed(1)}x faster by wall time, ${(m.cpu / whole.cpu).toFixed(1)}x by CPU time`,
  );
}
