// bench:issue40 — issue 40's measure: of the corpus' 23 critical incidents and 13 warnings
// (test/fixtures/logs/issue40-corpus.ts), how many `wedgewatch replay FILE` with no flag raises, per build, and how
// many events it raises where it should raise none (healthy lines, user text). Counts; asserts nothing.
//   npm run bench:issue40 [-- BUILDS=/path/to/other/build:/path/to/this]   (default: this checkout)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { it } from 'vitest';
import { writeCorpus } from '../test/fixtures/logs/issue40-files.js';

interface Event {
  type: string;
  line?: number;
  severity?: string;
  rule?: string;
}

it('issue 40 corpus: raised per build', { timeout: 900_000 }, () => {
  const roots = (process.env.BUILDS ?? resolve('.')).split(':').filter(Boolean);
  const dir = mkdtempSync(join(tmpdir(), 'ww-issue40-bench-'));
  try {
    const files = writeCorpus(dir);
    for (const root of roots) {
      let critical = 0;
      let criticalOf = 0;
      let warning = 0;
      let warningOf = 0;
      let falseEvents = 0;
      const missed: string[] = [];
      for (const f of files) {
        const r = spawnSync(process.execPath, [join(root, 'dist/cli.js'), 'replay', '--json', f.file], {
          encoding: 'utf8',
        });
        const events = r.stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Event)
          .filter((e) => e.type === 'event');
        const inside = events.filter((e) => e.line! >= f.from && e.line! <= f.to);
        falseEvents += events.length - inside.length;
        if (f.entry === undefined) {
          falseEvents += inside.length;
          continue;
        }
        const has = (s: string) => inside.some((e) => e.severity === s);
        if (f.entry.expect === 'critical') {
          criticalOf++;
          if (has('critical')) critical++;
          else missed.push(`critical: ${f.entry.id}`);
        } else {
          warningOf++;
          // A warning raised as a critical is a false page, not the warning.
          if (has('warning') && !has('critical')) warning++;
          else missed.push(`warning: ${f.entry.id}`);
        }
      }
      console.log(
        `${root}: ${critical} of ${criticalOf} critical incidents, ${warning} of ${warningOf} warnings raised; ` +
          `${falseEvents} event(s) on healthy lines or user text`,
      );
      for (const m of missed) console.log(`  not raised: ${m}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
