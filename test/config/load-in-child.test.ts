// `run` validates its config in a child process and keeps the structured clone the child sends back over IPC
// (src/config/load-in-child.ts). These tests pin that the clone is the config: every loaded config is made only of
// what structuredClone copies exactly (plain objects, arrays, a Map, primitives), and the child's answer equals an
// in-process load, a bad file's ConfigError included. The child runs from tsc's output in dist/ (`npm test`
// builds it first): from TypeScript source there is no .js entry to fork.
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError as SrcConfigError, loadConfigFile, type LoadedConfig } from '../../src/config/load.js';
import { waitFor } from '../helpers/wait.js';

type InChildModule = typeof import('../../src/config/load-in-child.js');
type Errors = typeof import('../../src/config/errors.js');
const dist = (m: string) => new URL(`../../dist/config/${m}`, import.meta.url).href;
const loader = (await import(dist('load-in-child.js'))) as InChildModule;
const { ConfigError } = (await import(dist('errors.js'))) as Errors;

const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-load-in-child-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { LLM_KEY: 'sk-test-secret-1234', ROUTER: 'http://127.0.0.1:30001' };

// A config with what the examples lack: ${VAR} values, secret headers, a token file, user rules, capture
// commands, probeShared (the schema's last transform), remediation.
writeFileSync(join(dir, 'token'), 'file-token-5678\n');
const RICH = `
probeShared: false
targets:
  - name: pd
    model: m
    endpoints:
      - { name: router, url: "\${ROUTER}", bearerToken: "\${LLM_KEY}", headers: { X-Api-Key: "k-abcdef", X-Team: infra }, shared: true }
      - { name: decode, url: http://127.0.0.1:30002, bearerTokenFile: token }
    probes:
      - { name: chat, kind: chat, every: 15s, timeout: 30s, conn: [fresh, keepalive] }
      - { name: tools, kind: toolcall, every: 1m, timeout: 60s, endpoints: [router] }
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health, endpoints: [router, decode] }
    logs:
      - { service: decode, path: /var/log/decode.log, packs: [sglang, python] }
    remediate:
      command: [systemctl, restart, x.service]
rules:
  - { name: r1, severity: critical, match: "boom (\\\\d+)" }
incidents:
  commands:
    - { name: stacks, argv: [py-spy, dump, --pid, "\${PID}"], processMatch: "sglang.*decode" }
`;
writeFileSync(join(dir, 'rich.yaml'), RICH);

const FILES = [
  ...readdirSync('examples')
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join('examples', f)),
  join(dir, 'rich.yaml'),
];

/** Every value reached from `v` that structuredClone would not copy as the same kind of thing, by path. */
function unclonable(v: unknown, path = '$'): string[] {
  if (v === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof v)) return [];
  if (typeof v !== 'object') return [`${path}: ${typeof v}`];
  const proto = Object.getPrototypeOf(v) as unknown;
  const out: string[] = [];
  if (Object.getOwnPropertySymbols(v).length > 0) out.push(`${path}: symbol keys`);
  if (proto === Map.prototype) {
    for (const [k, x] of v as Map<unknown, unknown>)
      out.push(...unclonable(k, `${path}<key>`), ...unclonable(x, `${path}.get(${String(k)})`));
    return out;
  }
  if (proto !== Object.prototype && proto !== Array.prototype)
    return [`${path}: ${String((v as object).constructor?.name)}`];
  for (const d of Object.values(Object.getOwnPropertyDescriptors(v))) {
    if (d.get !== undefined || d.set !== undefined) out.push(`${path}: accessor property`);
  }
  for (const [k, x] of Object.entries(v)) out.push(...unclonable(x, `${path}.${k}`));
  return out;
}

describe('the config as a structured clone', () => {
  it.each(FILES)('%s loads into plain data that structuredClone copies exactly', (file) => {
    const loaded = loadConfigFile(file, ENV);
    expect(unclonable(loaded)).toEqual([]);
    // toStrictEqual also tells a key holding undefined from a missing one, and checks prototypes.
    expect(structuredClone(loaded)).toStrictEqual(loaded);
  });

  it('the check above sees what the clone would lose', () => {
    const lossy = {
      a: new RegExp('x'),
      b: () => 1,
      c: new (class Cfg {})(),
      d: new Date(0),
      [Symbol('s')]: 1,
    };
    expect(unclonable(lossy)).toEqual([
      '$: symbol keys',
      '$.a: RegExp',
      '$.b: function',
      '$.c: Cfg',
      '$.d: Date',
    ]);
  });
});

describe('loadConfigInChild (dist/)', () => {
  it('forks a child process there', () => {
    expect(loader.inChild).toBe(true);
  });

  it('no loader process can start (the node binary is missing): loaded in process, and said so', async () => {
    const why: string[] = [];
    const got = await loader.loadConfigInChild(FILES[0]!, ENV, {
      execPath: join(dir, 'no-such-node'),
      onFallback: (w) => why.push(w),
    });
    expect(got).toStrictEqual(loadConfigFile(FILES[0]!, ENV));
    expect(why).toHaveLength(1);
    expect(why[0]).toMatch(/cannot start the config loader/);
  });

  it('a loader that never answers is killed after the timeout and the load fails (nothing in process)', async () => {
    const mute = join(dir, 'mute.cjs');
    const pidFile = join(dir, 'mute.pid');
    writeFileSync(
      mute,
      `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.on("message", () => {}); setInterval(() => {}, 1000);\n`,
    );
    // The timeout is derived from this machine: a loaded one can take longer than 0.5 s to start a node child, and
    // the child must reach its first line (the pid file) before it is killed for the check below to mean anything.
    const t0 = Date.now();
    const probe = fork(mute, [], { execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    await waitFor(() => existsSync(pidFile), { timeoutMs: 30_000, what: 'a node child to start' });
    probe.kill('SIGKILL');
    rmSync(pidFile);
    const timeoutMs = Math.max(500, 4 * (Date.now() - t0));
    const why: string[] = [];
    const err = await loader
      .loadConfigInChild(FILES[0]!, ENV, { childPath: mute, timeoutMs, onFallback: (w) => why.push(w) })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(String(err)).toContain(`no answer in ${timeoutMs / 1000} s`);
    expect(why).toEqual([]);
    // Killed, not left running: the loader process is gone (signal 0 probes for it without sending one).
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch (e) {
          return (e as NodeJS.ErrnoException).code === 'ESRCH';
        }
      },
      { timeoutMs: 5000, what: `the mute loader (pid ${pid}) to be killed` },
    );
  });

  it.each(FILES)('%s: the same LoadedConfig as loading it in process', async (file) => {
    const expected: LoadedConfig = loadConfigFile(file, ENV);
    expect(await loader.loadConfigInChild(file, ENV)).toStrictEqual(expected);
  });

  it('a bad file: a ConfigError with the same path and problems, secrets masked', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      RICH.replace('every: 15s', 'every: "${LLM_KEY}"')
        .replace('timeout: 60s', 'timeout: fast')
        .replace('path: /health', 'path: /health, bogus: 1'),
    );
    let inProcess: unknown;
    try {
      loadConfigFile(bad, ENV);
    } catch (err) {
      inProcess = err;
    }
    expect(inProcess).toBeInstanceOf(SrcConfigError);
    const err = await loader.loadConfigInChild(bad, ENV).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const want = inProcess as SrcConfigError;
    const got = err as InstanceType<typeof ConfigError>;
    expect(got.name).toBe('ConfigError');
    expect(got.path).toBe(bad);
    expect(got.problems).toEqual(want.problems);
    expect(got.message).toBe(want.message);
    expect(got.problems.length).toBeGreaterThanOrEqual(3);
    expect(got.message).not.toContain(ENV.LLM_KEY);
  });

  it('an unreadable file and a missing ${VAR}: the same ConfigError as in process', async () => {
    const missing = join(dir, 'nope.yaml');
    await expect(loader.loadConfigInChild(missing, ENV)).rejects.toMatchObject({
      name: 'ConfigError',
      path: missing,
      problems: ['cannot read config file: ENOENT'],
    });
    const noEnv = join(dir, 'rich.yaml');
    const err = await loader.loadConfigInChild(noEnv, {}).then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof ConfigError>,
    );
    expect(err?.problems).toContain('targets[0].endpoints[0].url: environment variable ROUTER is not set');
  });

  it('reads the file each time (a reload sees the new text)', async () => {
    const f = join(dir, 'changing.yaml');
    writeFileSync(f, readFileSync('examples/wedgewatch.yaml', 'utf8'));
    const a = await loader.loadConfigInChild(f, ENV);
    writeFileSync(f, readFileSync('examples/wedgewatch.yaml', 'utf8').replace('dsv4-pd', 'other-pd'));
    const b = await loader.loadConfigInChild(f, ENV);
    expect(a.config.targets[0]!.name).toBe('dsv4-pd');
    expect(b.config.targets[0]!.name).toBe('other-pd');
  });
});
