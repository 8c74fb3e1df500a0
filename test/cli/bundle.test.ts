// dist/cli.js is the esbuild bundle (scripts/bundle.mjs), and it is what `run` executes: its chunks carry the
// dependencies, so loading the daemon resolves no file under node_modules and none of the chunks of the commands
// run does not need (sim, verify, replay, demo). Module resolution is watched with a module.register hook.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A module.register hook that prints `RESOLVED <url> <parent url or ->` for each module the loader resolves. */
function hookFile(): string {
  const hook = join(dir, 'hook.mjs');
  const resolver = `export async function resolve(s, c, next) {
    const r = await next(s, c);
    console.log('RESOLVED ' + r.url + ' ' + (c.parentURL ?? '-'));
    return r;
  }`;
  writeFileSync(
    hook,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)});\n`,
  );
  return hook;
}

/** How long a child may take to start and answer: a deadline for a hang, not a speed bound. */
const START_MS = 90_000;

/** The file: and node: URLs the ESM loader resolves while `wedgewatch ...args` runs. */
function resolved(args: string[]): string[] {
  const hook = hookFile();
  const r = spawnSync(process.execPath, ['--import', hook, CLI, ...args], {
    encoding: 'utf8',
    // Generous: a deadline for a hung child, never a bound on speed (a loaded machine starts node slowly).
    timeout: START_MS,
  });
  expect(r.status, r.stderr).toBe(0);
  return [...r.stdout.matchAll(/^RESOLVED (\S+) /gm)].map((m) => m[1]!);
}

/**
 * The files `run -c <config>` resolves until its daemon listens. The config loader process it forks
 * (dist/load-child.js) runs without the hook: its modules are not the daemon's.
 */
async function daemonFiles(config: string): Promise<string[]> {
  const child = spawn(
    process.execPath,
    ['--import', hookFile(), CLI, 'run', '-c', config, '--web.listen-address', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await waitFor(() => out.includes('wedgewatch listening'), {
      timeoutMs: START_MS,
      what: () => out.slice(-2000),
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return [...out.matchAll(/^RESOLVED (\S+) /gm)].map((m) => m[1]!);
}

/** The npm packages bundled into a dist file (dist/bundle-packages.json, written by scripts/bundle.mjs). */
function packagesOf(url: string): string[] {
  const table = JSON.parse(
    readFileSync(new URL('bundle-packages.json', pathToFileURL(CLI)), 'utf8'),
  ) as Record<string, string[]>;
  return table[`dist/${url.slice(url.lastIndexOf('/') + 1)}`] ?? [];
}

// Each case starts node children (twice for `run`): the case's own deadline covers two START_MS.
describe('the shipped CLI bundle', { timeout: 3 * START_MS }, () => {
  it('dist/cli.js is the bundle, not tsc output', () => {
    const text = readFileSync(CLI, 'utf8');
    expect(text).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(text).toContain('createRequire');
    expect(text).not.toMatch(/from ['"]commander['"]/);
  });

  it('`run` loads only dist chunks and node built-ins: no node_modules file, no other command', () => {
    const urls = resolved(['run', '--help']);
    const files = urls.filter((u) => u.startsWith('file:'));
    // The walk saw the run command's chunk, so the check below has something to check.
    expect(files.some((u) => /\/dist\/run-[A-Z0-9]{8}\.js$/.test(u))).toBe(true);
    expect(files.filter((u) => u.includes('/node_modules/'))).toEqual([]);
    expect(files.filter((u) => !/\/dist\/[\w-]+\.js$/.test(u))).toEqual([]);
    expect(
      files.filter((u) => /\/dist\/(sim|verify|replay|demo|incidents)-[A-Z0-9]{8}\.js$/.test(u)),
    ).toEqual([]);
    expect(urls.filter((u) => !u.startsWith('file:') && !u.startsWith('node:'))).toEqual([]);
  });

  it('`run` with the example config loads no zod or yaml: a child process validates the config', async () => {
    // The example config with its state directory moved to the test's own.
    const config = join(dir, 'wedgewatch.yaml');
    writeFileSync(
      config,
      readFileSync('examples/wedgewatch.yaml', 'utf8').replace(
        'stateDir: /var/lib/wedgewatch',
        `stateDir: ${dir}/state`,
      ),
    );
    const carrying = (urls: string[], pkg: string) =>
      urls.filter((u) => u.startsWith('file:') && packagesOf(u).includes(pkg));
    // `check` loads the config in process: the same lookup finds zod and yaml there.
    const checked = resolved(['check', '--config', config]);
    expect(carrying(checked, 'zod').length).toBeGreaterThan(0);
    expect(carrying(checked, 'yaml').length).toBeGreaterThan(0);
    const daemon = await daemonFiles(config);
    // The walk reached the daemon's chunks.
    expect(daemon.some((u) => /\/dist\/run-[A-Z0-9]{8}\.js$/.test(u))).toBe(true);
    expect(carrying(daemon, 'zod')).toEqual([]);
    expect(carrying(daemon, 'yaml')).toEqual([]);
  });

  it("`replay` loads none of prom-client's unused parts: no https, tls, zlib or cluster (issue 18 item 2)", () => {
    // scripts/bundle.mjs makes prom-client's Pushgateway, cluster aggregator, default metrics and Summary load on
    // first use. Bundled CommonJS requires built-ins through createRequire, which no ESM hook sees: the process's
    // own list of loaded built-ins is read at exit instead.
    const list = join(dir, 'builtins.txt');
    const preload = join(dir, 'builtins.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`,
    );
    const log = join(dir, 'one.log');
    writeFileSync(
      log,
      '[2026-08-10 14:00:00 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 9.00, \n',
    );
    const r = spawnSync(process.execPath, ['-r', preload, CLI, 'replay', log], {
      encoding: 'utf8',
      timeout: START_MS,
    });
    expect(r.status, r.stderr).toBe(0);
    // It ran and set the engine gauges through prom-client.
    expect(r.stdout).toContain('wedgewatch_engine_running');
    const builtins = readFileSync(list, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('NativeModule '))
      .map((l) => l.slice('NativeModule '.length));
    expect(builtins).toContain('fs');
    expect(builtins.filter((b) => ['https', 'tls', 'zlib', 'cluster'].includes(b))).toEqual([]);
  });
});
