// Every metric name the shipped alert rules and dashboard use exists in src/metrics.ts (or is a series
// the rules themselves record), and every dashboard expression parses in promtool.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { exportedMetricNames } from '../../src/metrics.js';
import { metricNamesIn } from './promql-names.js';
import { dashboardQueries, loadRules, run, substituteGrafanaVariables } from './tools.js';

// Series Prometheus itself produces for every scrape target.
const PROMETHEUS_SERIES = new Set(['up']);

/** PromQL inside alert annotations: {{ printf "query" … | query }}. */
function annotationQueries(text: string): string[] {
  return [...text.matchAll(/printf\s+"((?:[^"\\]|\\.)*)"[^}]*\|\s*query/g)].map((m) =>
    JSON.parse(`"${m[1]}"`).replaceAll('%q', '"x"'),
  );
}

describe('metricNamesIn', () => {
  it('finds metric names and ignores functions, keywords, labels, strings and durations', () => {
    const names = metricNamesIn(
      'histogram_quantile(0.9, sum by (target, le) (rate(a_bucket{rule=~"b.*", x="sum(c)"}[5m]))) > 1e3 ' +
        'and on (target) group_left (diagnosis) topk by (target) (1, d == 1) or e offset 30m unless f:g:h',
    );
    expect([...names].sort()).toEqual(['a_bucket', 'd', 'e', 'f:g:h']);
  });

  it('sees a metric name used without a selector next to a keyword-like label', () => {
    expect([...metricNamesIn('time() - wedgewatch_x > 600')]).toEqual(['wedgewatch_x']);
  });
});

describe('metric names in alerts/ and dashboards/', () => {
  it('every name is declared in src/metrics.ts or recorded by the shipped rules', async () => {
    const declared = await exportedMetricNames();
    const rules = loadRules();
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    const uses: { where: string; expr: string }[] = [];
    for (const r of rules) {
      uses.push({ where: r.alert ?? r.record ?? '?', expr: r.expr });
      for (const a of Object.values(r.annotations ?? {})) {
        for (const q of annotationQueries(a)) uses.push({ where: `${r.alert} annotation`, expr: q });
      }
    }
    uses.push(...dashboardQueries());
    const unknown: string[] = [];
    let checked = 0;
    for (const u of uses) {
      for (const name of metricNamesIn(u.expr)) {
        checked++;
        if (!declared.has(name) && !recorded.has(name) && !PROMETHEUS_SERIES.has(name)) {
          unknown.push(`${u.where}: ${name}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    // Guards against an extractor that silently finds nothing.
    expect(checked).toBeGreaterThan(40);
    expect(uses.some((u) => u.where.endsWith('annotation'))).toBe(true);
  });
});

describe('dashboard expressions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-dash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every panel and annotation query parses in promtool (as recording rules)', async () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(15);
    const rules = queries.map((q, i) => ({
      record: `dashboard:query_${i}`,
      expr: substituteGrafanaVariables(q.expr),
    }));
    for (const r of rules) expect(r.expr).not.toContain('$');
    const file = join(dir, 'dashboard.rules.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    const res = await run('promtool', ['check', 'rules', file]);
    expect(res.stderr + res.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(res.code).toBe(0);
  });

  it('promtool rejects a broken expression, so the check above can fail', async () => {
    const file = join(dir, 'broken.rules.yml');
    writeFileSync(
      file,
      stringify({ groups: [{ name: 'x', rules: [{ record: 'x:y', expr: 'sum(rate(a[5m])' }] }] }),
    );
    const res = await run('promtool', ['check', 'rules', file]);
    expect(res.code).not.toBe(0);
  });
});
