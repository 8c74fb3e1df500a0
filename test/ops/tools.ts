// Helpers for the ops tests: run the real Prometheus/Alertmanager/systemd tools, and read the shipped
// alert rules and dashboard. A missing binary fails the test loudly; it is never skipped.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RULES = `${ROOT}alerts/wedgewatch.rules.yml`;
export const RULE_TESTS = `${ROOT}alerts/wedgewatch.rules.test.yml`;
export const AM_CONFIG = `${ROOT}alerts/alertmanager.example.yml`;
export const DASHBOARD = `${ROOT}dashboards/wedgewatch.json`;
export const UNIT = `${ROOT}systemd/wedgewatch.service`;
export const RUNBOOKS = `${ROOT}docs/runbooks.md`;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Absolute path of a binary on PATH; throws (failing the test) if it is not installed. */
export function requireBinary(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  throw new Error(`${name} is not installed (bash .ci/run installs it); this test needs the real binary`);
}

export function run(bin: string, args: string[], timeoutMs = 30_000): Promise<RunResult> {
  const path = requireBinary(bin);
  return new Promise((resolve, reject) => {
    execFile(path, args, { timeout: timeoutMs, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

export interface RuleDef {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function loadRules(): RuleDef[] {
  const doc = parseYaml(readFileSync(RULES, 'utf8')) as { groups: { rules: RuleDef[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

export interface DashboardQuery {
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  type?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression in the dashboard: panel targets and annotation queries. */
export function dashboardQueries(): DashboardQuery[] {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Panel[];
    annotations?: { list: { name: string; expr?: string }[] };
  };
  const out: DashboardQuery[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ where: `panel "${p.title}"`, expr: t.expr });
      if (p.panels) walk(p.panels);
    }
  };
  walk(d.panels);
  for (const a of d.annotations?.list ?? [])
    if (a.expr) out.push({ where: `annotation "${a.name}"`, expr: a.expr });
  return out;
}

/** Grafana template variables replaced by concrete values so Prometheus can parse and run the query. */
export function substituteGrafanaVariables(expr: string, target = '.*'): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', '1h')
    .replaceAll('$target', target)
    .replaceAll('$instance', '.*')
    .replaceAll('$endpoint', '.*');
}
