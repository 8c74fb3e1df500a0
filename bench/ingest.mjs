// bench:ingest — lines/s of `replay` (all built-in packs) over a deterministic 1,000,000-line SGLang-style
// log, in process, median of 3; and, where mtail is installed, the same file through an equivalent mtail
// program (generated from the same packs) in the same run. Prints figures; asserts nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeLog } from './ingest-gen.mjs';

const { replayFiles } = await import('../dist/logs/replay.js');
const { PACKS } = await import('../dist/logs/packs/index.js');
const { LOG_PACKS } = await import('../dist/config/schema.js');

const LINES = Number(process.env.LINES ?? 1_000_000);
const dir = join(tmpdir(), 'wedgewatch-bench');
mkdirSync(dir, { recursive: true });
const file = join(dir, `sglang-${LINES}.log`);
if (!existsSync(file)) await writeLog(file, LINES, { seed: 42, faults: true });
const size = statSync(file).size;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

replayFiles({ files: [file], packs: [...LOG_PACKS] }); // warm the page cache and the JIT
const runs = [];
let result;
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  result = replayFiles({ files: [file], packs: [...LOG_PACKS] });
  runs.push((performance.now() - t) / 1000);
}
const s = median(runs);
const rate = result.lines / s;
const events = result.events.length + result.droppedEvents;
const rssMb = process.resourceUsage().maxRSS / 1024;
console.log(
  `file: ${file} (${result.lines} lines, ${(size / 1e6).toFixed(1)} MB, ${(size / result.lines).toFixed(0)} B/line)`,
);
console.log(
  `wedgewatch replay, all packs: runs ${runs.map((x) => x.toFixed(2)).join(', ')} s, median ${s.toFixed(2)} s`,
);
console.log(
  `  ${Math.round(rate).toLocaleString('en')} lines/s, ${(size / s / 1e6).toFixed(0)} MB/s, ${events} events, peak RSS ${rssMb.toFixed(0)} MB`,
);

// mtail: one labelled counter per rule (RE2 has no lookahead: the "other reason" rules keep their prefix),
// multi-line rules count their header, and the batch-line gauges.
const which = spawnSync('sh', ['-c', 'command -v mtail'], { encoding: 'utf8' });
if (which.status !== 0) {
  console.log('mtail: not installed (apt-get install -y mtail to compare)');
} else {
  const progs = join(dir, 'progs');
  mkdirSync(progs, { recursive: true });
  const re2 = (src) =>
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
  const mruns = [];
  let mrss = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = spawnSync(
      '/usr/bin/time',
      [
        '-f',
        '%M',
        'mtail',
        '--one_shot',
        '--one_shot_format=prometheus',
        '--progs',
        progs,
        '--logs',
        file,
        '--logtostderr',
      ],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    mruns.push((performance.now() - t) / 1000);
    if (r.status !== 0) {
      console.log(`mtail failed: ${r.stderr.slice(-500)}`);
      process.exit(1);
    }
    mrss = Math.max(mrss, Number(r.stderr.trim().split('\n').at(-1)) / 1024 || 0);
  }
  const ms = median(mruns);
  const mrate = result.lines / ms;
  console.log(
    `mtail --one_shot, same rules: runs ${mruns.map((x) => x.toFixed(2)).join(', ')} s, median ${ms.toFixed(2)} s`,
  );
  console.log(`  ${Math.round(mrate).toLocaleString('en')} lines/s, peak RSS ${mrss.toFixed(0)} MB`);
  console.log(`ratio wedgewatch/mtail: ${(rate / mrate).toFixed(1)}x`);
}
