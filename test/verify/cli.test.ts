// CLI smoke: the built `wedgewatch verify` prints the table, saves results and maps outcomes to exit codes.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { CLI, runCli } from '../helpers/cli.js';

let sim: Sim | undefined;
let server: Server | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build with 'npm run build' first`);
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('wedgewatch verify (CLI)', () => {
  it('runs the selected steps, prints the table and progress, saves results, exits 0', async () => {
    sim = await startSim({ model: { stepBaseMs: 4, stepPerReqMs: 0.02, prefillMs: 1 } });
    const save = join(mkdtempSync(join(tmpdir(), 'ww-verify-cli-')), 'results.json');
    const r = await runCli(
      [
        'verify',
        '--url',
        sim.urls.router,
        '--model',
        'sim-model',
        '--steps',
        'liveness,throughput',
        '--liveness.n',
        '1',
        '--throughput.levels',
        '1x2,4x4',
        '--throughput.max-tokens',
        '16',
        '--log',
        sim.logFiles.decode,
        '--save',
        save,
      ],
      { timeoutMs: 30_000 },
    );
    expect(r.stderr).toMatch(/\]\s+throughput: C=4 {2}n=4 {2}max_tokens=16 \| agg=/);
    expect(r.stdout).toMatch(/^liveness\s+PASS\s+2\/2 completed/m);
    expect(r.stdout).toMatch(/^throughput\s+PASS\s+C=1:/m);
    expect(r.stdout).toMatch(/^PASS: 2\/2 passed/m);
    expect(r.code).toBe(0);
    const saved = JSON.parse(readFileSync(save, 'utf8')) as { kind: string; steps: unknown[] };
    expect(saved.kind).toBe('wedgewatch-verify-results');
    expect(saved.steps).toHaveLength(2);
  });

  it('exits 2 when the target refuses connections at start', async () => {
    const url = await listen(() => {});
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const r = await runCli(['verify', '--url', url, '--model', 'm', '--steps', 'liveness'], {
      timeoutMs: 20_000,
    });
    expect(r.stderr).toMatch(/target unreachable: .*ECONNREFUSED/);
    expect(r.code).toBe(2);
  });

  it('exits 2 on a rejected API key without printing the key', async () => {
    const url = await listen((req, res) => {
      res.writeHead(req.headers.authorization === 'Bearer right-key-123' ? 200 : 401, {
        'content-type': 'application/json',
      });
      res.end('{"data":[]}');
    });
    const keyFile = join(mkdtempSync(join(tmpdir(), 'ww-verify-key-')), 'key');
    writeFileSync(keyFile, 'wrong-key-456\n');
    const r = await runCli(['verify', '--url', url, '--model', 'm', '--api-key-file', keyFile], {
      timeoutMs: 20_000,
    });
    expect(r.stderr).toMatch(/HTTP 401/);
    expect(r.stderr + r.stdout).not.toContain('wrong-key-456');
    expect(r.code).toBe(2);
  });

  it('exits 2 on bad usage: unknown step, bad knob value, missing --model', async () => {
    const bad = [
      ['verify', '--url', 'http://127.0.0.1:9', '--model', 'm', '--steps', 'liveness,nope'],
      ['verify', '--url', 'http://127.0.0.1:9', '--model', 'm', '--abort.sessions', 'zero'],
      ['verify', '--url', 'http://127.0.0.1:9'],
    ];
    const results = await Promise.all(bad.map((args) => runCli(args, { timeoutMs: 20_000 })));
    expect(results[0]!.stderr).toMatch(/unknown step "nope"/);
    expect(results[1]!.stderr).toMatch(/--abort\.sessions: expected a positive integer/);
    expect(results[2]!.stderr).toMatch(/--model/);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2]);
  });
});
