// The alert rules and their promtool tests may only use label values the daemon really exports: rule,
// class and severity from the packs, probe kinds from the registry, results and reasons from the code. A
// test that feeds a rule name no pack emits would pass while the alert can never fire in production.
// Every join keeps `instance`, and every alert with a join is tested with two instances.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  LOG_READ_ERROR_REASONS,
  LOG_ROTATION_KINDS,
  PROBE_RESULTS,
  REMEDIATION_RESULTS,
} from '../../src/outputs/metrics/known-series.js';
import { COMPLETION_KINDS, PROBE_KIND_NAMES } from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { TARGET_STATES } from '../../src/core/vocabulary.js';
import { PROBES } from '../../src/sources/probes/registry.js';
import { RULE_TESTS, loadRules } from './tools.js';

interface RuleTestGroup {
  name?: string;
  input_series: { series: string }[];
  alert_rule_test?: { alertname: string; exp_alerts: { exp_labels: Record<string, string> }[] }[];
}

const packRules = new Map(Object.values(PACKS).flatMap((p) => p.rules.map((r) => [r.name, r] as const)));
const classes = new Set<string>([...packRules.values()].map((r) => r.class));
const kinds = new Set(Object.keys(PROBES));

function labelsOf(series: string): { name: string; labels: Record<string, string> } {
  const m = /^([A-Za-z_:][\w:]*)\{(.*)\}$/.exec(series.trim());
  if (!m) return { name: series.trim(), labels: {} };
  const labels: Record<string, string> = {};
  for (const l of m[2]!.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)) labels[l[1]!] = l[2]!;
  return { name: m[1]!, labels };
}

const groups = (parseYaml(readFileSync(RULE_TESTS, 'utf8')) as { tests: RuleTestGroup[] }).tests;

/** Label values a series of this metric may carry, by label; undefined: not checked here. */
const allowed: Record<string, Record<string, ReadonlySet<string>>> = {
  wedgewatch_probes_total: { result: new Set(PROBE_RESULTS) },
  wedgewatch_remediations_total: { result: new Set(REMEDIATION_RESULTS) },
  wedgewatch_log_read_errors_total: { reason: new Set(LOG_READ_ERROR_REASONS) },
  wedgewatch_log_rotations_total: { kind: new Set(LOG_ROTATION_KINDS) },
  wedgewatch_target_state: { state: new Set(TARGET_STATES) },
};

describe('promtool test input uses exported label values', () => {
  const series = groups.flatMap((g) => g.input_series.map((s) => labelsOf(s.series)));

  it('has series to check (the parser reads the test file)', () => {
    expect(series.length).toBeGreaterThan(50);
    expect(series.some((s) => s.labels.class === 'kv_bootstrap_dead')).toBe(true);
  });

  it('every rule is a pack rule with its own class and severity; every class exists', () => {
    const bad: string[] = [];
    for (const { name, labels } of series) {
      if (labels.rule !== undefined) {
        const r = packRules.get(labels.rule);
        if (!r) bad.push(`${name}: rule ${labels.rule} is in no pack`);
        else {
          if (labels.class !== r.class)
            bad.push(`${name}: rule ${r.name} has class ${r.class}, not ${labels.class}`);
          if (labels.severity !== undefined && labels.severity !== r.severity)
            bad.push(`${name}: rule ${r.name} has severity ${r.severity}, not ${labels.severity}`);
        }
      }
      if (labels.class !== undefined && !classes.has(labels.class))
        bad.push(`${name}: no pack has class ${labels.class}`);
    }
    expect(bad).toEqual([]);
  });

  it('every probe kind is a registered kind; results, reasons and states are the code’s', () => {
    const bad: string[] = [];
    for (const { name, labels } of series) {
      if (name.startsWith('wedgewatch_probe') && labels.kind !== undefined && !kinds.has(labels.kind))
        bad.push(`${name}: no probe kind ${labels.kind}`);
      for (const [label, values] of Object.entries(allowed[name] ?? {})) {
        if (labels[label] !== undefined && !values.has(labels[label]))
          bad.push(`${name}: ${label}="${labels[label]}" is never exported`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('a made-up rule name is caught (the check above can fail)', () => {
    expect(packRules.has('nixl_bootstrap_thread_death')).toBe(false);
    expect(packRules.get('nixl_bootstrap_thread_dead')?.class).toBe('kv_bootstrap_dead');
  });
});

describe('alert expressions select on labels and keep instance', () => {
  const rules = loadRules();

  it('select log events by class and probes by kind, never by rule or probe name', () => {
    for (const r of rules) {
      expect(r.expr, r.alert ?? r.record).not.toMatch(/\b(rule|probe)\s*(=~|!~|=|!=)\s*"/);
      for (const m of r.expr.matchAll(/\bclass\s*(?:=|=~)\s*"([^"]+)"/g))
        for (const c of m[1]!.split('|')) expect(classes, `${r.alert}: class ${c}`).toContain(c);
      for (const m of r.expr.matchAll(/\bkind\s*(?:=|=~|!~|!=)\s*"([^"]+)"/g))
        for (const k of m[1]!.split('|')) expect(kinds, `${r.alert}: kind ${k}`).toContain(k);
    }
  });

  it('"completion probe" means every kind but the ones the rules exclude, and those are the non-completion kinds', () => {
    const excluded = new Set<string>();
    for (const r of rules)
      for (const m of r.expr.matchAll(/\bkind\s*!~\s*"([^"]+)"/g))
        m[1]!.split('|').forEach((k) => excluded.add(k));
    expect([...excluded].sort()).toEqual(
      PROBE_KIND_NAMES.filter((k) => !(COMPLETION_KINDS as readonly string[]).includes(k)).sort(),
    );
  });

  it('every on(…) and by(…) clause keeps instance', () => {
    const bad: string[] = [];
    for (const r of rules) {
      for (const m of r.expr.matchAll(/\b(on|by)\s*\(([^)]*)\)/g)) {
        const labels = m[2]!.split(',').map((s) => s.trim());
        if (!labels.includes('instance')) bad.push(`${r.alert ?? r.record}: ${m[0]}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('every alert with a join is tested with two instances', () => {
    const joined = rules.filter((r) => r.alert && /\b(on|ignoring)\s*\(|\b(and|or|unless)\b/.test(r.expr));
    expect(joined.map((r) => r.alert)).toContain('WedgewatchKVBootstrapThreadDead');
    const missing: string[] = [];
    for (const r of joined) {
      const ok = groups.some((g) => {
        const tested = g.alert_rule_test?.some((t) => t.alertname === r.alert && t.exp_alerts.length > 0);
        const instances = new Set(
          g.input_series.map((s) => labelsOf(s.series).labels.instance).filter(Boolean),
        );
        return tested && instances.size >= 2;
      });
      if (!ok) missing.push(r.alert!);
    }
    expect(missing).toEqual([]);
  });
});
