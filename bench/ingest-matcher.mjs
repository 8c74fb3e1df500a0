// @ts-check
// bench:ingest-matcher — the rule matcher alone (rules/matcher.ts LineMatcher) on the lines a replay hands it: each build's
// replay of a bench:ingest file is run once in process with LineMatcher#match recorded (the lines the prefilter
// passed, and every line while a multi-line rule is open), then a fresh matcher of that build's full rule set is
// timed on them, best of REPEAT passes. What the whole-process figure (bench:ingest-compare) cannot isolate: the
// matcher is ~1 % of the lines and a few % of the time. Prints figures; asserts nothing.
//   node bench/ingest-matcher.mjs [BUILD_ROOT ...]        (default: this checkout; run `npm run build` first)
//   GENERATORS=tuned,varied REPEAT=15 node bench/ingest-matcher.mjs ../wt-main .
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildRoots, ensureFiles, fileOf, LINES } from './ingest-files.mjs';

const roots = buildRoots();
const REPEAT = Number(process.env.REPEAT ?? 15);
const chosen = (process.env.GENERATORS ?? 'tuned,varied').split(',');
// The matcher is timed on the lines a plain replay hands it: the JSON file read as plain text would time the wrong ones.
if (chosen.includes('json'))
  throw new Error('bench:ingest-matcher times plain files only (GENERATORS=tuned,varied)');
await ensureFiles(chosen);

console.log(`bench:ingest-matcher: best of ${REPEAT} passes, ${LINES}-line files, Node ${process.version}`);
for (const root of roots) {
  // rules/ since the matcher was split by stage; one rules.js in builds before it.
  const split = existsSync(join(root, 'dist/sources/logs/rules/matcher.js'));
  const R = split
    ? {
        ...(await import(join(root, 'dist/sources/logs/rules/compile.js'))),
        ...(await import(join(root, 'dist/sources/logs/rules/matcher.js'))),
      }
    : await import(join(root, 'dist/sources/logs/rules.js'));
  const { replayFiles } = await import(join(root, 'dist/commands/replay-files.js'));
  const { LOG_PACKS } = await import(join(root, 'dist/config/schema.js'));
  for (const name of chosen) {
    /** @type {string[]} */
    const lines = [];
    const original = R.LineMatcher.prototype.match;
    R.LineMatcher.prototype.match = function (/** @type {string} */ line, /** @type {unknown[]} */ ...rest) {
      lines.push(line);
      return original.call(this, line, ...rest);
    };
    try {
      replayFiles({ files: [fileOf(name)], packs: [...LOG_PACKS], format: 'plain', timeline: false });
    } finally {
      R.LineMatcher.prototype.match = original;
    }
    const set = R.compileRuleSet([...LOG_PACKS], []);
    let best = Infinity;
    let events = 0;
    for (let k = 0; k < REPEAT; k++) {
      // A fixed clock: the lines' own stamps decide the windows, as in replay.
      const m = new R.LineMatcher(set, { now: () => 0 });
      let n = 0;
      const t = performance.now();
      for (let i = 0; i < lines.length; i++) m.match(lines[i], i * 100, () => n++, i);
      m.finish(() => n++);
      best = Math.min(best, performance.now() - t);
      events = n;
    }
    const chars = lines.reduce((a, l) => a + l.length, 0);
    console.log(
      `${name.padEnd(7)} ${root}: ${lines.length} lines (${Math.round(chars / lines.length)} chars each), ${set.rules.length} rules, ${events} events: best ${best.toFixed(1)} ms (${((best * 1000) / lines.length).toFixed(2)} µs a line)`,
    );
  }
}
