// @ts-check
// bench:ingest-compare — whole-process `replay` of builds side by side, run alternately (build after build, file
// after file, RUNS times) so load on a shared machine falls on all of them alike: median wall and CPU (user +
// system) seconds per build and file. The files are bench:ingest's (written here when missing): the tuned and varied
// 1M-line logs and the tuned log as JSON records (`--format json`, for builds whose replay has it). Every pack of
// each build is named on its command line (the builds' defaults differ). Prints figures; asserts nothing.
//   node bench/ingest-compare.mjs [BUILD_ROOT ...]    (default: this checkout)
//   RUNS=7 LINES=1000000 GENERATORS=tuned,varied,json node bench/ingest-compare.mjs /work/wt-base /work/wt-ingest
// A build root is a checkout with `npm run build` done (e.g. `git worktree add ../wt-base 75d1be3`, npm ci, build).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildRoots, ensureFiles, fileOf, LINES } from './ingest-files.mjs';

const roots = buildRoots();
const RUNS = Number(process.env.RUNS ?? 5);
const chosen = (process.env.GENERATORS ?? 'tuned,varied,json').split(',');
await ensureFiles(chosen);

const builds = [];
for (const root of roots) {
  const { LOG_PACKS } = await import(join(root, 'dist/config/schema.js'));
  const help = spawnSync(process.execPath, [join(root, 'dist/cli.js'), 'replay', '--help'], {
    encoding: 'utf8',
  });
  builds.push({
    root,
    packs: LOG_PACKS.flatMap((/** @type {string} */ p) => ['--pack', p]),
    json: /"json"/.test(help.stdout),
  });
}

const results = new Map();
for (let i = 0; i < RUNS; i++) {
  for (const name of chosen) {
    for (const b of builds) {
      if (name === 'json' && !b.json) continue;
      const args = [join(b.root, 'dist/cli.js'), 'replay', ...b.packs];
      if (name === 'json') args.push('--format', 'json');
      // A plain file is read as plain by every build (replay's default became `auto` in issue 40).
      else if (b.json) args.push('--format', 'plain');
      const t = performance.now();
      const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args, fileOf(name)], {
        encoding: 'utf8',
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const wall = (performance.now() - t) / 1000;
      if (r.status !== 0) throw new Error(`${b.root} ${name}: ${r.stderr.slice(-400)}`);
      const [u = NaN, s = NaN] = (r.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
      const key = `${name}\u0000${b.root}`;
      if (!results.has(key)) results.set(key, { name, root: b.root, wall: [], cpu: [] });
      results.get(key).wall.push(wall);
      results.get(key).cpu.push(u + s);
    }
  }
}
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `bench:ingest-compare: ${RUNS} alternating runs, ${LINES} lines per file, Node ${process.version}`,
);
for (const r of results.values()) {
  console.log(
    `${r.name.padEnd(7)} ${r.root}: wall median ${median(r.wall).toFixed(3)} s (${r.wall.map((/** @type {number} */ x) => x.toFixed(2)).join(', ')}), CPU median ${median(r.cpu).toFixed(3)} s`,
  );
}
