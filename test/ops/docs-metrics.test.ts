// docs/metrics.md's table is the registry createMetrics builds, family for family: each family with its type and
// label names, and no row for a family that does not exist. A table kept by hand had lost six families and the
// `class`/`kind` labels the alerts select on (review of 3d0d65c). `node scripts/docs-metrics.mjs` (after
// `npm run build`) rewrites the rows from the registry.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';

interface Row {
  name: string;
  type: string;
  labels: string[];
}

/** The rows of the metrics page's table (from its "# Metrics" title to the next heading) that name one family. */
export function readmeMetricRows(readme: string): Row[] {
  const start = readme.indexOf('# Metrics\n');
  expect(start, 'the page has a "# Metrics" title').toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n#', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const m = /^\| `([a-z_:]+)` \|([^|]*)\|([^|]*)\|/.exec(line);
    if (!m) continue;
    const labels = m[3]!.trim();
    rows.push({ name: m[1]!, type: m[2]!.trim(), labels: labels === '' ? [] : labels.split(/\s*,\s*/) });
  }
  return rows;
}

async function registryRows(): Promise<Row[]> {
  const { registry } = createMetrics({ defaults: false });
  return (await registry.getMetricsAsJSON()).map((f) => ({
    name: f.name,
    type: String(f.type),
    // prom-client keeps the declared label names on the metric; its typings leave them out.
    labels: [
      ...((registry.getSingleMetric(f.name) as unknown as { labelNames?: string[] }).labelNames ?? []),
    ],
  }));
}

const readme = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

describe("docs/metrics.md's table", () => {
  it('parses rows with and without labels', () => {
    const rows = readmeMetricRows(
      '# Metrics\n\n| metric | type | labels | meaning |\n|---|---|---|---|\n' +
        '| `a_total` | counter | target, rule | x |\n| `b` | gauge | | y |\n| `process_*`, `x` | | | z |\n\n## Next\n' +
        '| `c` | gauge | target | not in the section |\n',
    );
    expect(rows).toEqual([
      { name: 'a_total', type: 'counter', labels: ['target', 'rule'] },
      { name: 'b', type: 'gauge', labels: [] },
    ]);
  });

  it('lists every family of the registry, with its type and labels in declared order', async () => {
    const documented = new Map(readmeMetricRows(readme).map((r) => [r.name, r]));
    const missing = [];
    const different = [];
    for (const f of await registryRows()) {
      const row = documented.get(f.name);
      if (!row) missing.push(f.name);
      else if (row.type !== f.type || row.labels.join(',') !== f.labels.join(','))
        different.push(`${f.name}: docs ${row.type} {${row.labels}} vs code ${f.type} {${f.labels}}`);
    }
    expect.soft(missing, 'families missing from docs/metrics.md (run scripts/docs-metrics.mjs)').toEqual([]);
    expect.soft(different, 'rows whose type or labels differ from src/metrics.ts').toEqual([]);
  });

  it('lists no family the registry does not have, and none twice', async () => {
    const names = new Set((await registryRows()).map((f) => f.name));
    const rows = readmeMetricRows(readme).map((r) => r.name);
    expect(rows.filter((n) => !names.has(n))).toEqual([]);
    expect(rows.filter((n, i) => rows.indexOf(n) !== i)).toEqual([]);
  });
});
