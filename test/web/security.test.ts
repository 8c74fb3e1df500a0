import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { BasicAuth, parseBasicAuth } from '../../src/outputs/server/auth.js';
import { bcryptWorker } from '../../src/outputs/server/bcrypt-pool.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { loadWebConfig, WebConfigWatcher } from '../../src/outputs/server/web-config.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';
import { basic, replaceFile, selfSignedCert, servedFingerprint, tempDir } from './helpers.js';

const dir = tempDir('ww-web-');
const COST = 10;
const PASSWORD = 'correct horse battery';
let aliceHash = '';
let certA: ReturnType<typeof selfSignedCert>;
let certB: ReturnType<typeof selfSignedCert>;

beforeAll(async () => {
  aliceHash = await bcrypt.hash(PASSWORD, COST);
  certA = selfSignedCert(dir, 'a');
  certB = selfSignedCert(dir, 'b');
});

function writeConfig(name: string, lifecycle: boolean): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0", enableLifecycle: ${lifecycle} }
stateDir: ${dir}/state
targets:
  - name: a
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
`,
  );
  return file;
}

function writeWebConfig(name: string, opts: { tls: boolean; users: Record<string, string> }): string {
  const file = join(dir, `${name}.web.yaml`);
  const users = Object.entries(opts.users)
    .map(([u, h]) => `  ${u}: "${h}"`)
    .join('\n');
  writeFileSync(
    file,
    `${opts.tls ? `tls_server_config:\n  cert_file: live.crt\n  key_file: live.key\n` : ''}basic_auth_users:\n${users}\n`,
  );
  return file;
}

let daemons: Daemon[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
});

async function start(opts: { lifecycle: boolean; tls: boolean; users?: Record<string, string> }) {
  if (opts.tls) {
    replaceFile(join(dir, 'live.crt'), certA.cert);
    replaceFile(join(dir, 'live.key'), (await import('node:fs')).readFileSync(certA.keyFile));
  }
  const { logger, lines } = capturingLogger();
  const d = new Daemon({
    configPath: writeConfig(`c${daemons.length}`, opts.lifecycle),
    logger,
    plugins: routePlugins,
    webConfigFile: writeWebConfig(`w${daemons.length}`, {
      tls: opts.tls,
      users: opts.users ?? { alice: aliceHash },
    }),
    // Long poll: the tests trigger the re-read themselves.
    webConfigPollMs: 3_600_000,
  });
  daemons.push(d);
  await d.start();
  const port = Number(d.address().split(':').pop());
  const agent = new Agent({ connect: { ca: certA.cert + certB.cert } });
  agents.push(agent);
  const base = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const call = async (method: 'GET' | 'POST', path: string, auth?: string) => {
    // These tests are about each answer, not about the per-client back-off (test/web/auth-flood.test.ts).
    d.web!.auth.resetFailures();
    const res = await request(`${base}${path}`, {
      method,
      dispatcher: agent,
      headers: auth ? { authorization: auth } : {},
    });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  };
  return { d, port, call, lines };
}

const ENDPOINTS: Array<['GET' | 'POST', string]> = [
  ['GET', '/metrics'],
  ['GET', '/'],
  ['GET', '/-/healthy'],
  ['GET', '/-/ready'],
  ['POST', '/-/reload'],
  ['POST', '/api/targets/a/remediation/pause'],
  ['POST', '/api/targets/a/remediation/resume'],
  ['GET', '/probe?target=a&probe=chat'],
  ['GET', '/api/status'],
  ['GET', '/api/probes'],
  ['GET', '/no/such/page'],
];

describe('web config file', () => {
  it('rejects bad files with field paths', () => {
    const bad = join(dir, 'bad.web.yaml');
    writeFileSync(
      bad,
      'basic_auth_users:\n  bob: plaintext\ntls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n  extra: 1\nfoo: 1\n',
    );
    let err: unknown;
    try {
      loadWebConfig(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toContain('basic_auth_users.bob: expected a bcrypt hash');
    expect(problems).toContain('tls_server_config.extra: unknown key');
    expect(problems).toContain('foo: unknown key');
    writeFileSync(bad, 'tls_server_config:\n  cert_file: nope.crt\n  key_file: a.key\n');
    expect(() => loadWebConfig(bad)).toThrow(/tls_server_config.cert_file: cannot read nope.crt: ENOENT/);
    writeFileSync(bad, `tls_server_config:\n  cert_file: a.crt\n  key_file: b.key\n`);
    expect(() => loadWebConfig(bad)).toThrow(/do not form a usable context/);
  });

  it('stops a daemon start on a bad web config before anything runs', async () => {
    const bad = join(dir, 'bad-start.web.yaml');
    writeFileSync(bad, 'basic_auth_users:\n  bob: plaintext\n');
    const d = new Daemon({
      configPath: writeConfig('bad-start', false),
      logger: capturingLogger().logger,
      webConfigFile: bad,
    });
    await expect(d.start()).rejects.toThrow(ConfigError);
    expect(d.runtime).toBeUndefined();
    await d.stop();
  });

  it('parses Basic credentials (password may hold colons)', () => {
    expect(parseBasicAuth(basic('alice', 'a:b:c'))).toEqual({ user: 'alice', password: 'a:b:c' });
    expect(parseBasicAuth('Bearer x')).toBeUndefined();
    expect(parseBasicAuth(undefined)).toBeUndefined();
    expect(parseBasicAuth('Basic bm9jb2xvbg==')).toBeUndefined();
  });
});

describe('basic auth and TLS on every endpoint', () => {
  it('answers 401 with a challenge on every endpoint without valid credentials; write endpoints are 404 without lifecycle', async () => {
    const { call } = await start({ lifecycle: false, tls: true });
    for (const [method, path] of ENDPOINTS) {
      for (const auth of [undefined, basic('alice', 'wrong'), basic('mallory', PASSWORD), 'Basic !!!']) {
        const r = await call(method, path, auth);
        expect(r.status, `${method} ${path} with ${auth ?? 'no auth'}`).toBe(401);
        expect(r.headers['www-authenticate']).toMatch(/^Basic realm="wedgewatch"/);
        expect(r.body).toBe('Unauthorized\n');
      }
    }
    const ok = basic('alice', PASSWORD);
    expect((await call('GET', '/metrics', ok)).status).toBe(200);
    expect((await call('GET', '/-/healthy', ok)).body).toContain('Healthy');
    for (const path of [
      '/-/reload',
      '/api/targets/a/remediation/pause',
      '/api/targets/a/remediation/resume',
    ]) {
      expect((await call('POST', path, ok)).status, path).toBe(404);
    }
  });

  it('with lifecycle enabled, write endpoints exist but still require auth', async () => {
    const { call } = await start({ lifecycle: true, tls: false });
    expect((await call('POST', '/-/reload')).status).toBe(401);
    expect((await call('POST', '/-/reload', basic('alice', 'nope'))).status).toBe(401);
    expect((await call('POST', '/-/reload', basic('alice', PASSWORD))).status).toBe(200);
    expect((await call('POST', '/api/targets/a/remediation/pause')).status).toBe(401);
    expect((await call('POST', '/api/targets/zzz/remediation/pause', basic('alice', PASSWORD))).status).toBe(
      404,
    );
  });

  it('serves TLS with the configured certificate and picks up a replaced one without a restart', async () => {
    const { d, port, call } = await start({ lifecycle: false, tls: true });
    const fpA = new X509Certificate(certA.cert).fingerprint256;
    const fpB = new X509Certificate(certB.cert).fingerprint256;
    expect(await servedFingerprint(port, certA.cert)).toBe(fpA);
    replaceFile(join(dir, 'live.crt'), certB.cert);
    replaceFile(join(dir, 'live.key'), (await import('node:fs')).readFileSync(certB.keyFile));
    await d.web!.recheck();
    expect(await servedFingerprint(port, certB.cert)).toBe(fpB);
    expect((await call('GET', '/metrics', basic('alice', PASSWORD))).status).toBe(200);
  });

  it('keeps the running web config when a changed one is invalid, and applies new users when valid', async () => {
    const { d, call, lines } = await start({ lifecycle: false, tls: false });
    const file = join(dir, `w${daemons.length - 1}.web.yaml`);
    writeFileSync(file, 'basic_auth_users:\n  alice: not-a-hash\n');
    await d.web!.recheck();
    await waitFor(() => lines.some((l) => l.includes('keeping the running one')), {
      what: 'invalid web config logged',
    });
    expect((await call('GET', '/metrics', basic('alice', PASSWORD))).status).toBe(200);
    const bobHash = await bcrypt.hash('bobpass', 4);
    writeFileSync(file, `basic_auth_users:\n  bob: "${bobHash}"\n`);
    await d.web!.recheck();
    expect((await call('GET', '/metrics', basic('bob', 'bobpass'))).status).toBe(200);
    expect((await call('GET', '/metrics', basic('alice', PASSWORD))).status).toBe(401);
    // The hash never reaches the log.
    expect(lines.join('')).not.toContain(bobHash);
  });
});

describe('web config reload guards', () => {
  it('refuses an empty file caught mid-write and a change that drops every user: auth stays on', async () => {
    const { d, call, lines } = await start({ lifecycle: false, tls: false });
    const file = join(dir, `w${daemons.length - 1}.web.yaml`);
    // Truncated, not yet rewritten.
    writeFileSync(file, '');
    await d.web!.recheck();
    expect(lines.some((l) => l.includes('the file is empty'))).toBe(true);
    expect((await call('GET', '/metrics')).status).toBe(401);
    writeFileSync(file, '  \n');
    await d.web!.recheck();
    expect((await call('GET', '/metrics')).status).toBe(401);
    // A valid document that names no users.
    writeFileSync(file, '# rewritten\n');
    await d.web!.recheck();
    expect(lines.some((l) => l.includes('turning auth off needs a restart'))).toBe(true);
    expect((await call('GET', '/metrics')).status).toBe(401);
    expect((await call('GET', '/metrics', basic('alice', PASSWORD))).status).toBe(200);
  });

  it('logs (not an unhandled rejection) when applying a new config fails during a poll', async () => {
    const file = join(dir, 'poll.web.yaml');
    writeFileSync(file, `basic_auth_users:\n  alice: "${aliceHash}"\n`);
    const { logger, lines } = capturingLogger();
    const watcher = new WebConfigWatcher(loadWebConfig(file), {
      logger,
      pollMs: 20,
      onChange: () => Promise.reject(new Error('apply exploded')),
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      await watcher.start();
      writeFileSync(file, `basic_auth_users:\n  bob: "${aliceHash}"\n`);
      await waitFor(() => lines.some((l) => l.includes('apply exploded')), { what: 'poll failure logged' });
      expect(unhandled).toEqual([]);
    } finally {
      watcher.stop();
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('user enumeration', () => {
  it('runs exactly one bcrypt compare per attempt, against a same-cost dummy hash for unknown users', async () => {
    const calls: [string, string][] = [];
    const auth = new BasicAuth({
      compare: (password, hash) => {
        calls.push([password, hash]);
        return bcryptWorker.compare(password, hash);
      },
    });
    await auth.setUsers(new Map([['alice', aliceHash]]));
    expect(await auth.verify({ user: 'mallory', password: PASSWORD })).toBe(false);
    expect(calls).toHaveLength(1);
    const dummy = calls[0]![1];
    expect(dummy).not.toBe(aliceHash);
    expect(bcrypt.getRounds(dummy)).toBe(COST);
    expect(await auth.verify({ user: 'alice', password: 'wrong' })).toBe(false);
    expect(calls).toHaveLength(2);
    expect(calls[1]![1]).toBe(aliceHash);
    expect(await auth.verify({ user: 'alice', password: PASSWORD })).toBe(true);
    expect(calls).toHaveLength(3);
    // A success is cached (scrapers); a failure never is.
    expect(await auth.verify({ user: 'alice', password: PASSWORD })).toBe(true);
    expect(await auth.verify({ user: 'alice', password: 'wrong' })).toBe(false);
    expect(calls).toHaveLength(4);
  });

  it('takes as long for an unknown user as for a known user with a wrong password, both above the bcrypt floor', async () => {
    const { call } = await start({ lifecycle: false, tls: false });
    // The floor: the fastest of bcrypt compares at this cost run directly, interleaved with the requests so
    // that load from other processes hits both alike.
    const direct: number[] = [];
    const unknown: number[] = [];
    const known: number[] = [];
    for (let i = 0; i < 16; i++) {
      const t0 = performance.now();
      await bcrypt.compare('x', aliceHash);
      direct.push(performance.now() - t0);
      for (const [user, into] of [
        ['mallory', unknown],
        ['alice', known],
      ] as const) {
        const t = performance.now();
        const r = await call('GET', '/metrics', basic(user, `wrong-${i}`));
        into.push(performance.now() - t);
        expect(r.status).toBe(401);
      }
    }
    const floor = Math.min(...direct);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // Medians: one GC pause or a burst of load from another process must not decide the comparison.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const mu = median(unknown);
    const mk = median(known);
    const noAuth: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = performance.now();
      await call('GET', '/metrics');
      noAuth.push(performance.now() - t);
    }
    console.log(
      `bcrypt floor ${floor.toFixed(1)} ms; median unknown user ${mu.toFixed(1)} ms, known user wrong password ${mk.toFixed(1)} ms, no credentials ${mean(noAuth).toFixed(1)} ms`,
    );
    // The leak this catches is an unknown user answered without a bcrypt compare (about 1 ms against the floor's
    // tens): both medians sit above the floor, which load from other processes only raises.
    expect(mu).toBeGreaterThan(floor * 0.8);
    expect(mk).toBeGreaterThan(floor * 0.8);
    // And neither does twice the work of the other: compared pair by pair (the two requests of one round ran back
    // to back, under the same load), not as two medians that a burst of load during half the rounds can split.
    const ratio = median(unknown.map((u, i) => u / known[i]!));
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1 / 0.6);
  });
});
