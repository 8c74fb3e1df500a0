// deploy/kubernetes/readiness/sglang-engine.yaml (issue 43): the engine pod whose readiness is wedgewatch's verdict,
// as a sidecar. Every document validates against the Kubernetes schemas, the httpGet probe asks a route and a port
// the sidecar really serves, and the exec forms (python3 in the engine's container, node in the sidecar) are run
// as written against a real daemon with basic auth: 0 while the engine is ready, 1 once it is wedged, on a wrong
// password and with the daemon gone.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { quietLogger } from '../helpers/logger.js';
import { waitFor } from '../helpers/wait.js';
import { requireBinary, ROOT } from './tools.js';

const FILE = join(ROOT, 'deploy/kubernetes/readiness/sglang-engine.yaml');

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are checked field by field below */
const docs = YAML.parseAllDocuments(readFileSync(FILE, 'utf8')).map((d) => d.toJS() as any);
const find = (kind: string, name: string) => {
  const d = docs.find((x) => x.kind === kind && x.metadata.name === name);
  if (d === undefined) throw new Error(`${FILE}: no ${kind} ${name}`);
  return d;
};
const container = (deployment: string, name: string) =>
  find('Deployment', deployment).spec.template.spec.containers.find((c: any) => c.name === name);
const sidecarConfig = () => find('ConfigMap', 'sglang-engine-wedgewatch').data['wedgewatch.yaml'] as string;

describe('deploy/kubernetes/readiness: the readiness sidecar', () => {
  it('validates against the Kubernetes schemas, in the namespace of the other manifests', () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'ConfigMap/sglang-engine-wedgewatch',
      'Deployment/sglang-engine',
      'Deployment/sglang-engine-auth',
    ]);
    for (const d of docs) {
      const Model = d.kind === 'ConfigMap' ? ConfigMap : Deployment;
      expect(() => new Model(d).validate(), `${d.kind} ${d.metadata.name}`).not.toThrow();
      expect(d.metadata.namespace).toBe('llm');
    }
    // The schemas catch a probe that is not one.
    const broken = structuredClone(find('Deployment', 'sglang-engine'));
    broken.spec.template.spec.containers[0].readinessProbe.httpGet.port = { not: 'a port' };
    expect(() => new Deployment(broken).validate()).toThrow();
  });

  it('httpGet form: the engine is ready when GET /ready/<its target> on the sidecar port says so; its liveness stays its own', () => {
    const { config } = parseConfigText(sidecarConfig(), 'wedgewatch.yaml', {});
    const port = Number(/:(\d+)$/.exec(config.web.listenAddress)![1]);
    const engine = container('sglang-engine', 'sglang');
    const sidecar = container('sglang-engine', 'wedgewatch');
    const m = /^\/ready\/([^/]+)$/.exec(engine.readinessProbe.httpGet.path);
    expect(m, 'the readiness path is /ready/<target>').not.toBeNull();
    expect(config.targets.map((t) => t.name)).toContain(m![1]);
    // A numeric port: a named one would be looked up in the engine container's own ports.
    expect(engine.readinessProbe.httpGet.port).toBe(port);
    expect(sidecar.ports.map((p: any) => p.containerPort)).toContain(port);
    expect(config.targets[0]!.endpoints[0]!.url).toBe(
      `http://127.0.0.1:${engine.ports.find((p: any) => p.name === 'http').containerPort}`,
    );
    // A wedged engine leaves rotation; it is not killed (its bundle and stacks are the evidence).
    for (const d of ['sglang-engine', 'sglang-engine-auth'])
      expect(container(d, 'sglang').livenessProbe.httpGet.path).toBe('/health');
    for (const d of ['sglang-engine', 'sglang-engine-auth']) {
      const c = container(d, 'wedgewatch');
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const volumes = find('Deployment', d).spec.template.spec.volumes.map((v: any) => v.name);
      for (const c2 of find('Deployment', d).spec.template.spec.containers)
        for (const mount of c2.volumeMounts ?? []) expect(volumes).toContain(mount.name);
    }
  });
});

describe('docs/deploy.md shows the manifest as it is', () => {
  it('names the file, and quotes its probe path and exec command verbatim', () => {
    const text = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
    expect(text).toContain('deploy/kubernetes/readiness/sglang-engine.yaml');
    const httpGet = container('sglang-engine', 'sglang').readinessProbe.httpGet;
    expect(text).toContain(`httpGet: { path: ${httpGet.path}, port: ${httpGet.port} }`);
    const command = container('sglang-engine-auth', 'sglang').readinessProbe.exec.command as string[];
    expect(text).toContain(`- "${command[2]}"`);
  });
});

describe('deploy/kubernetes/readiness: the exec forms against a real daemon with basic auth', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ww-k8s-readiness-'));
  const secret = join(dir, 'probe');
  const wrongSecret = join(dir, 'wrong');
  let sim: Sim;
  let daemon: Daemon | undefined;
  let address = '';

  beforeAll(async () => {
    requireBinary('python3'); // SGLang's images ship it; the engine-side probe is a python3 one-liner
    sim = await startSim({ waitingTimeoutMs: 2_000, bootstrapTimeoutMs: 2_000 });
    const config = join(dir, 'wedgewatch.yaml');
    writeFileSync(
      config,
      sidecarConfig()
        .replace("listenAddress: ':9787'", "listenAddress: '127.0.0.1:0'")
        .replace('stateDir: /var/lib/wedgewatch', `stateDir: ${dir}/state`)
        .replace('http://127.0.0.1:30000', sim.urls.router)
        .replace('model: Qwen/Qwen3-8B', 'model: sim-model'),
    );
    const web = join(dir, 'web.yml');
    writeFileSync(web, `basic_auth_users:\n  kubelet: "${await bcrypt.hash('s3cret', 4)}"\n`);
    writeFileSync(secret, 'kubelet:s3cret\n');
    writeFileSync(wrongSecret, 'kubelet:guess\n');
    daemon = new Daemon({
      configPath: config,
      logger: quietLogger(),
      plugins: routePlugins,
      webConfigFile: web,
    });
    await daemon.start();
    address = daemon.address();
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    await sim?.stop();
  });

  /** Runs a probe's exec command as the manifest writes it, pointed at this daemon and this secret file. */
  function runProbe(deployment: string, name: string, probe: string, secretFile = secret): Promise<number> {
    const [bin, ...args] = container(deployment, name)[probe].exec.command as string[];
    const local = args.map((a) =>
      a
        .replaceAll('http://127.0.0.1:9787', `http://${address}`)
        .replaceAll('/etc/wedgewatch-probe/probe', secretFile)
        .replaceAll('/etc/wedgewatch-web/probe', secretFile),
    );
    expect(local.join(' '), 'the command names the port and the secret the test swaps').not.toBe(
      args.join(' '),
    );
    const path = bin === 'node' ? process.execPath : requireBinary(bin!);
    return new Promise((resolve) => {
      execFile(path, local, { timeout: 10_000 }, (err) => resolve(err ? Number(err.code ?? 1) : 0));
    });
  }
  const engineProbe = (secretFile?: string) =>
    runProbe('sglang-engine-auth', 'sglang', 'readinessProbe', secretFile);
  const stateOf = () => daemon!.runtime?.watchdog?.targets.get('engine')?.state.state;

  it('the sidecar’s own probes pass with the credentials', async () => {
    expect(await runProbe('sglang-engine-auth', 'wedgewatch', 'livenessProbe')).toBe(0);
    expect(await runProbe('sglang-engine-auth', 'wedgewatch', 'readinessProbe')).toBe(0);
    expect(await runProbe('sglang-engine-auth', 'wedgewatch', 'livenessProbe', wrongSecret)).toBe(1);
  });

  it('engine probe: 0 while ok, 1 with a wrong password, 1 once wedged, 1 with the daemon gone', async () => {
    await waitFor(() => stateOf() === 'ok', { timeoutMs: 30_000, what: 'the engine target ok' });
    expect(await engineProbe()).toBe(0);
    expect(await engineProbe(wrongSecret)).toBe(1);
    sim.enableFault('decode_stall');
    await waitFor(() => stateOf() === 'wedged', {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: () => `the engine target wedged (now ${stateOf()})`,
    });
    expect(await engineProbe()).toBe(1);
    sim.disableFault('decode_stall');
    await waitFor(() => stateOf() === 'ok', { timeoutMs: 60_000, what: 'the engine target ok again' });
    expect(await engineProbe()).toBe(0);
    await daemon!.stop();
    daemon = undefined;
    expect(await engineProbe()).toBe(1);
  }, 150_000);
});
