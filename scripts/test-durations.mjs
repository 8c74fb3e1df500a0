// Writes test/durations.json from a vitest JSON report: each test file's wall time (s) on the run it reports, for
// the files that took 3 s or more. test/sequencer.ts starts the longest first. A file not listed (a new one, a fast
// one) runs after the listed ones of its project; a stale figure only changes the order, never a result.
// Usage: npx vitest run --reporter=json --outputFile=test-artifacts/vitest.json && node scripts/test-durations.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const report = JSON.parse(readFileSync(process.argv[2] ?? `${root}test-artifacts/vitest.json`, 'utf8'));
// A report from another checkout (a CI clone) names its files there: from their test/ folder on.
const file = (name) =>
  relative(root, name).startsWith('..') ? name.slice(name.indexOf('/test/') + 1) : relative(root, name);
const rows = report.testResults
  .map((t) => [file(t.name), Math.round((t.endTime - t.startTime) / 1000)])
  .filter(([, s]) => s >= 3)
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
writeFileSync(`${root}test/durations.json`, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
console.log(`test/durations.json: ${rows.length} files`);
