#!/usr/bin/env node
// Writes deploy/kubernetes/prometheusrule.yaml from alerts/wedgewatch.rules.yml: the same groups, wrapped
// in a prometheus-operator PrometheusRule. `--check` exits 1 when the committed file has drifted
// (test/ops/kubernetes.test.ts runs the same comparison).
//   node deploy/kubernetes/gen-prometheusrule.mjs [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const RULES_FILE = join(root, 'alerts', 'wedgewatch.rules.yml');
export const OUT_FILE = join(root, 'deploy', 'kubernetes', 'prometheusrule.yaml');

/** The PrometheusRule text for the given rules file text. */
export function prometheusRule(rulesText) {
  const rules = YAML.parse(rulesText);
  const doc = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'wedgewatch',
      namespace: 'llm',
      // Match your Prometheus's ruleSelector (kube-prometheus-stack selects release: <its release name>).
      labels: { 'app.kubernetes.io/name': 'wedgewatch', release: 'kube-prometheus-stack' },
    },
    spec: { groups: rules.groups },
  };
  return (
    '# GENERATED from alerts/wedgewatch.rules.yml by deploy/kubernetes/gen-prometheusrule.mjs: do not edit.\n' +
    '# Regenerate with `npm run gen:prometheusrule`; a test fails when the two drift apart.\n' +
    YAML.stringify(doc, { lineWidth: 0 })
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const want = prometheusRule(readFileSync(RULES_FILE, 'utf8'));
  if (process.argv.includes('--check')) {
    let have = '';
    try {
      have = readFileSync(OUT_FILE, 'utf8');
    } catch {
      // Missing counts as drift.
    }
    if (have !== want) {
      process.stderr.write(`${OUT_FILE} is out of date: run npm run gen:prometheusrule\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(OUT_FILE, want);
  }
}
