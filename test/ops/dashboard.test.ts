// What the dashboard promises an on-call engineer, checked on the JSON: a wedgewatch instance picker that
// every query honours, units on every panel, runbook and status-page links, an alert list, heatmaps per hop
// and connection kind, and every recording rule on some panel (none is computed for nobody).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARD, dashboardQueries, loadRules } from './tools.js';

interface Panel {
  title: string;
  type: string;
  repeat?: string;
  targets?: { expr: string }[];
  fieldConfig?: { defaults?: { unit?: string; links?: { url: string }[] } };
}
const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
  panels: Panel[];
  links: { url: string }[];
  templating: { list: { name: string }[] };
};
const panels = dash.panels.filter((p) => p.type !== 'row');

describe('dashboard', () => {
  it('has instance, target and hop variables, and every query selects on the instance', () => {
    expect(dash.templating.list.map((v) => v.name)).toEqual(
      expect.arrayContaining(['datasource', 'instance', 'target', 'endpoint', 'runbooks']),
    );
    for (const q of dashboardQueries()) expect(q.expr, q.where).toMatch(/instance=~"\$instance"/);
  });

  it('every data panel has a unit and a status-page link; the dashboard links the runbooks', () => {
    for (const p of panels.filter((x) => x.targets?.length)) {
      expect(p.fieldConfig?.defaults?.unit, p.title).toBeTruthy();
      expect(
        p.fieldConfig?.defaults?.links?.map((l) => l.url),
        p.title,
      ).toContain('http://${__field.labels.instance}/');
    }
    expect(dash.links.map((l) => l.url)).toEqual(
      expect.arrayContaining(['${runbooks}', 'http://${instance}/']),
    );
    expect(
      panels.filter((p) => p.fieldConfig?.defaults?.links?.some((l) => l.url.startsWith('${runbooks}#')))
        .length,
    ).toBeGreaterThan(10);
  });

  it('has an alert list, per hop × connection heatmaps, and the watcher panels', () => {
    expect(panels.some((p) => p.type === 'alertlist')).toBe(true);
    const heatmaps = panels.filter((p) => p.type === 'heatmap');
    expect(heatmaps.length).toBeGreaterThanOrEqual(4);
    for (const h of heatmaps) {
      expect(h.repeat, h.title).toBe('endpoint');
      expect(h.targets![0]!.expr, h.title).toMatch(/conn="(fresh|keepalive)"/);
    }
    const exprs = dashboardQueries()
      .map((q) => q.expr)
      .join('\n');
    for (const name of [
      'wedgewatch_engine_scrape_success',
      'wedgewatch_log_read_errors_total',
      'wedgewatch_remediation_paused',
      'wedgewatch_engine_token_usage_ratio',
      'wedgewatch_config_last_reload_success_timestamp_seconds',
      'wedgewatch_probe_inflight_seconds',
      'wedgewatch_probe_failure_duration_seconds_bucket',
      'wedgewatch_scheduler_last_tick_timestamp_seconds',
    ])
      expect(exprs, name).toContain(name);
  });

  it('every recording rule is used by the dashboard or an alert', () => {
    const rules = loadRules();
    const used =
      dashboardQueries()
        .map((q) => q.expr)
        .join('\n') +
      rules
        .filter((r) => r.alert)
        .map((r) => r.expr)
        .join('\n');
    for (const r of rules.filter((x) => x.record)) expect(used, r.record).toContain(r.record!);
  });
});
