// deploy/kubernetes/: every manifest validates offline against the Kubernetes and prometheus-operator
// schemas (kubernetes-models), the daemon's pod runs restricted, the embedded configs load, and the
// PrometheusRule holds exactly the rules of alerts/wedgewatch.rules.yml.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parseConfigText } from '../../src/config/load.js';
// A plain .mjs script: the generator the npm script runs.
import { prometheusRule, RULES_FILE, OUT_FILE } from '../../deploy/kubernetes/gen-prometheusrule.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

// Each kind the example uses, with its validating model.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/DaemonSet': DaemonSet,
  'apps/v1/Deployment': Deployment,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

function manifests(): { file: string; doc: Manifest }[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((file) =>
      YAML.parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => ({
        file,
        doc: d.toJS() as Manifest,
      })),
    );
}

const validate = (doc: Manifest) => {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`);
  new Model(doc as never).validate();
};

const find = (kind: string, name: string) =>
  manifests().find((m) => m.doc.kind === kind && m.doc.metadata.name === name)!.doc;

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are checked field by field below */
describe('deploy/kubernetes', () => {
  it('every manifest validates against its schema, all in one namespace', () => {
    const all = manifests();
    expect(all.map((m) => `${m.doc.kind}/${m.doc.metadata.name}`).sort()).toEqual([
      'ConfigMap/wedgewatch-config',
      'ConfigMap/wedgewatch-e2e-config',
      'DaemonSet/wedgewatch',
      'Deployment/wedgewatch-e2e',
      'PrometheusRule/wedgewatch',
      'Service/wedgewatch',
      'ServiceMonitor/wedgewatch',
    ]);
    for (const { file, doc } of all) {
      expect(() => validate(doc), `${file}: ${doc.kind}`).not.toThrow();
      expect(doc.metadata.namespace, `${file}: namespace-scoped`).toBe('llm');
    }
    // kustomization.yaml lists every file.
    const k = YAML.parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    expect([...k.resources].sort()).toEqual([...new Set(all.map((m) => m.file))].sort());
  });

  it('the schemas catch a broken manifest', () => {
    const ds = structuredClone(find('DaemonSet', 'wedgewatch')) as any;
    ds.spec.template.spec.containers[0].ports[0].containerPort = 'metrics';
    expect(() => validate(ds)).toThrow();
    const rule = structuredClone(find('PrometheusRule', 'wedgewatch')) as any;
    rule.spec.groups[0].rules[0].expr = { not: 'a string' };
    rule.spec.groups[0].rules[0].bogus = 1;
    expect(() => validate(rule)).toThrow();
  });

  it('the DaemonSet reads pod logs read-only, runs restricted and is probed on /-/healthy and /-/ready', () => {
    const spec = (find('DaemonSet', 'wedgewatch') as any).spec.template.spec;
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
    const c = spec.containers[0];
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.securityContext.capabilities.add).toBeUndefined();
    const logs = spec.volumes.find((v: any) => v.hostPath?.path === '/var/log/pods');
    expect(c.volumeMounts.find((m: any) => m.name === logs.name)).toMatchObject({
      readOnly: true,
      mountPath: '/var/log/pods',
    });
    expect(c.livenessProbe.httpGet.path).toBe('/-/healthy');
    expect(c.readinessProbe.httpGet.path).toBe('/-/ready');
    expect(c.args).toEqual(['run', '--config', '/etc/wedgewatch/wedgewatch.yaml']);
    // Every writable path is a volume: the read-only root filesystem holds nothing the daemon writes.
    expect(
      c.volumeMounts
        .filter((m: any) => !m.readOnly)
        .map((m: any) => m.mountPath)
        .sort(),
    ).toEqual(['/tmp', '/var/lib/wedgewatch']);
    for (const init of spec.initContainers ?? []) {
      expect(init.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(init.securityContext.capabilities.add ?? []).toEqual(['CHOWN']);
    }
  });

  it('the embedded configs load; node daemons read CRI pod logs and leave the shared router to the e2e prober', () => {
    const cm = find('ConfigMap', 'wedgewatch-config') as any;
    const node = parseConfigText(cm.data['wedgewatch.yaml'], 'wedgewatch.yaml', {
      WEDGEWATCH_PROBE_SHARED: 'false',
    }).config;
    const t = node.targets[0]!;
    expect(t.logs.map((l) => [l.format, l.path?.startsWith('/var/log/pods/')])).toEqual([
      ['cri', true],
      ['cri', true],
    ]);
    const probed = t.probes.flatMap((p) => p.endpoints ?? []);
    expect(probed).not.toContain('router');
    expect(node.stateDir).toBe('/var/lib/wedgewatch');
    const ds = (find('DaemonSet', 'wedgewatch') as any).spec.template.spec.containers[0];
    expect(ds.env).toContainEqual({ name: 'WEDGEWATCH_PROBE_SHARED', value: 'false' });

    const e2e = find('ConfigMap', 'wedgewatch-e2e-config') as any;
    const one = parseConfigText(e2e.data['e2e.yaml'], 'e2e.yaml', {}).config;
    expect(one.targets[0]!.endpoints.map((e) => [e.name, e.shared])).toEqual([['router', true]]);
    expect(one.targets[0]!.logs).toEqual([]);
    expect((find('Deployment', 'wedgewatch-e2e') as any).spec.replicas).toBe(1);
  });

  it('the DaemonSet declares the HAProxy agent-check port docs/deploy.md configures, beside the metrics port', () => {
    const docs = readFileSync(join(DIR, '..', '..', 'docs', 'deploy.md'), 'utf8');
    // The documented `agent:` block and the HAProxy server line that points at it.
    const agentPort = Number(/^agent:\n\s+listenAddress: "[^"]*:(\d+)"$/m.exec(docs)?.[1]);
    expect(agentPort).toBeGreaterThan(0);
    expect(docs).toContain(`agent-port ${agentPort} `);
    const c = (find('DaemonSet', 'wedgewatch') as any).spec.template.spec.containers[0];
    const port = (name: string) => c.ports.find((p: any) => p.name === name)?.containerPort;
    expect(port('haproxy-agent')).toBe(agentPort);
    expect(port('http-metrics')).toBe(9787);
    expect(agentPort).not.toBe(port('http-metrics'));
  });

  it('the PrometheusRule is generated from alerts/wedgewatch.rules.yml and holds the same rules', () => {
    const rulesText = readFileSync(RULES_FILE, 'utf8');
    expect(readFileSync(OUT_FILE, 'utf8'), 'run npm run gen:prometheusrule').toBe(prometheusRule(rulesText));
    const rule = find('PrometheusRule', 'wedgewatch') as any;
    expect(rule.spec.groups).toEqual(YAML.parse(rulesText).groups);
    // A drifted copy is caught.
    expect(prometheusRule(rulesText.replace(/expr: /, 'expr: 1 + '))).not.toBe(
      readFileSync(OUT_FILE, 'utf8'),
    );
  });
});
