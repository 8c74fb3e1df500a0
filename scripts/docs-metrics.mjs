// Rewrites the rows of docs/metrics.md's table from the registry createMetrics builds (dist/, so run
// `npm run build` first): name, type and labels come from code, in the order src/metrics.ts declares them; the
// meaning column is kept from the row already there, and a new family gets its help text to edit down.
// test/ops/docs-metrics.test.ts fails until the table matches the registry.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createMetrics } from '../dist/metrics.js';

const readmePath = fileURLToPath(new URL('../docs/metrics.md', import.meta.url));
const text = readFileSync(readmePath, 'utf8');

// The page is the table: from its title to the end.
const start = text.indexOf('# Metrics\n');
if (start !== 0) throw new Error('docs/metrics.md does not start with "# Metrics"');
const end = text.length;
const section = text.slice(start, end);

const ROW = /^\| `([a-z_:]+)` \|[^|]*\|[^|]*\| (.*) \|$/;
const meanings = new Map();
for (const line of section.split('\n')) {
  const m = ROW.exec(line);
  if (m) meanings.set(m[1], m[2]);
}

const { registry } = createMetrics({ defaults: false });
const rows = (await registry.getMetricsAsJSON()).map((f) => {
  const labels = registry.getSingleMetric(f.name).labelNames ?? [];
  const cell = labels.length > 0 ? ` ${labels.join(', ')} ` : ' ';
  return `| \`${f.name}\` | ${f.type} |${cell}| ${meanings.get(f.name) ?? f.help} |`;
});

// The family rows are replaced as one block where the first of them stood; other rows (process_*) stay.
const lines = section.split('\n');
const first = lines.findIndex((l) => ROW.test(l));
if (first < 0) throw new Error('docs/metrics.md has no metric rows');
const kept = lines.filter((l, i) => i < first || !ROW.test(l));
kept.splice(first, 0, ...rows);
writeFileSync(readmePath, text.slice(0, start) + kept.join('\n') + text.slice(end));
console.log(`docs/metrics.md: ${rows.length} metric families`);
