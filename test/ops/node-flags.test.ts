// The daemon's node flags: the systemd unit, the container image, bench:steady and the CLI itself (src/node-flags.ts)
// use one list, so the figures in README's performance table are those of what ships, however it is started.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { applyNodeFlags, NODE_FLAGS, RUNTIME_FORM } from '../../src/node-flags.js';
import { CLI } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../web/helpers.js';
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

/** The words between the node binary and dist/cli.js. */
function flagsBefore(argv: string[]): string[] {
  const node = argv.findIndex((a) => /(^|\/)node$/.test(a));
  const script = argv.findIndex((a) => /(^|\/)dist\/cli\.js$/.test(a));
  expect(node).toBeGreaterThanOrEqual(0);
  expect(script).toBeGreaterThan(node);
  return argv.slice(node + 1, script);
}

describe('node flags of the daemon', () => {
  const unit = /^ExecStart=(.*)$/m.exec(read('systemd/wedgewatch.service'))![1]!.split(/\s+/);
  const entry = JSON.parse(/^ENTRYPOINT\s+(\[.*\])$/m.exec(read('Dockerfile'))![1]!) as string[];
  const bench = /^const SHIPPED_NODE_ARGS =\s+'([^']*)';$/m.exec(read('bench/steady.mjs'))![1]!.split(' ');

  it('keep the heap close to what is live (1 MB semi-spaces, old space grown by 30%), wasm unoptimized and bytecode kept', () => {
    expect(flagsBefore(unit)).toEqual([
      '--max-semi-space-size=1',
      '--heap-growing-percent=30',
      '--liftoff-only',
      '--no-flush-bytecode',
    ]);
  });

  it('are flags this node accepts (an unknown V8 flag is a start-up error)', () => {
    const r = spawnSync(process.execPath, [...flagsBefore(unit), '-e', '0'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('are the same in the systemd unit, the container image, bench:steady and the CLI (src/node-flags.ts)', () => {
    expect(flagsBefore(unit)).toEqual([...NODE_FLAGS]);
    expect(flagsBefore(entry)).toEqual([...NODE_FLAGS]);
    expect(bench).toEqual([...NODE_FLAGS]);
  });

  it('have runtime forms this node accepts in a running process', () => {
    const forms = NODE_FLAGS.map((f) => RUNTIME_FORM[f]);
    const r = spawnSync(
      process.execPath,
      ['-e', `const v8=require('node:v8');for(const f of ${JSON.stringify(forms)})v8.setFlagsFromString(f)`],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('leave alone a flag the operator gave on the command line or in NODE_OPTIONS', () => {
    const set: string[] = [];
    const out = applyNodeFlags(
      ['--max-semi-space-size=16', '--flush_bytecode'],
      '--heap-growing-percent=50 --inspect',
      (f) => set.push(f),
    );
    expect(out.given).toEqual([
      '--max-semi-space-size=1',
      '--heap-growing-percent=30',
      '--no-flush-bytecode',
    ]);
    expect(set).toEqual(['--liftoff-only']);
    expect(out.set).toEqual(set);
  });
});

// undici's HTTP parser is WebAssembly; --liftoff-only keeps it off TurboFan (its tier-up cost ~30 MB RSS).
describe('--liftoff-only set at run time', () => {
  // (func (export "f") (param i32) (result i32) (local i32) sums 1..n in a loop): hot enough to tier up.
  const WASM = [
    0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 27, 1,
    25, 1, 1, 127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0, 65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11,
  ];
  const script = (apply: boolean) => `
    import { applyNodeFlags } from ${JSON.stringify(join(ROOT, 'dist/node-flags.js'))};
    if (${apply}) applyNodeFlags([], '');
    const inst = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify(WASM)})));
    let s = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 2000; i++) s += inst.exports.f(1000);
      await new Promise((r) => setImmediate(r));
    }
    console.log(JSON.stringify({ liftoff: %IsLiftoffFunction(inst.exports.f), s }));`;
  const run = (apply: boolean) => {
    const r = spawnSync(
      process.execPath,
      ['--allow-natives-syntax', '--input-type=module', '-e', script(apply)],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { liftoff: boolean };
  };

  it('keeps a hot wasm function on Liftoff, where without it V8 tiers it up', () => {
    expect(run(false).liftoff).toBe(false);
    expect(run(true).liftoff).toBe(true);
  });
});

describe('`node dist/cli.js run` without flags', () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    child = undefined;
  });

  /** Starts the daemon on a config whose one probe fails fast on a closed loopback port; returns /metrics' new space. */
  async function newSpace(nodeArgs: string[]): Promise<{ bytes: number; log: string }> {
    const dir = tempDir('ww-flags-');
    const cfg = join(dir, 'cfg.yaml');
    writeFileSync(
      cfg,
      `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    probes:
      - { name: health, kind: health, every: 1s, timeout: 1s, path: /health }
`,
    );
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    child = spawn(process.execPath, [...nodeArgs, CLI, 'run', '--config', cfg], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const address = await waitFor(() => /"address":"([^"]+)","msg":"wedgewatch listening"/.exec(log)?.[1], {
      timeoutMs: 20_000,
      what: () => `the daemon to listen; its output: ${log.slice(-2000)}`,
    });
    const metrics = await (await request(`http://${address}/metrics`)).body.text();
    const bytes = Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(metrics)?.[1]);
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await gone;
    return { bytes, log };
  }

  it('sets the shipped flags itself: its young generation stays as small as under the unit', async () => {
    const bare = await newSpace([]);
    const unit = await newSpace([...NODE_FLAGS]);
    expect(unit.bytes).toBeGreaterThan(0);
    // Without the flags V8's start-up growth left it at 8 MB (4 × the unit's).
    expect(bare.bytes).toBeLessThanOrEqual(unit.bytes);
    const line = (log: string) =>
      JSON.parse(log.split('\n').find((l) => l.includes('"msg":"shipped V8 flags"')) ?? '{}') as {
        set?: string[];
        given?: string[];
      };
    expect(line(bare.log)).toMatchObject({ set: NODE_FLAGS.map((f) => RUNTIME_FORM[f]), given: [] });
    expect(line(unit.log)).toMatchObject({ set: [], given: [...NODE_FLAGS] });
  });
});
