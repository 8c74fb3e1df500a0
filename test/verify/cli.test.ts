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
        '--repeat',
        '2',
        '--log',
        sim.logFiles.decode,
        '--save',
        save,
      ],
      { timeoutMs: 30_000 },
    );
    expect(r.stderr).toMatch(/\]\s+throughput: C=4 {2}n=4 {2}max_tokens=16 \| agg=/);
    expect(r.stdout).toMatch(/^liveness\s+PASS\s+[\d.]+s\s+2\/2 completed/m);
    expect(r.stdout).toMatch(/^throughput\s+PASS\s+[\d.]+s\s+C=1:/m);
    expect(r.stdout).toMatch(/^PASS: 2\/2 passed in [\d.]+s \(2 trials per load level after a warm-up\)$/m);
    expect(r.stderr).toMatch(/\] throughput: PASS in [\d.]+s — /);
    expect(r.code).toBe(0);
    const saved = JSON.parse(readFileSync(save, 'utf8')) as { kind: string; steps: unknown[] };
    expect(saved.kind).toBe('wedgewatch-verify-results');
    expect(saved.steps).toHaveLength(2);

    // One trial against the baseline's two: no interval exists, so the gate cannot tell: INCONCLUSIVE, exit 3.
    const report = join(mkdtempSync(join(tmpdir(), 'ww-verify-cli-')), 'r.html');
    const again = await runCli(
      [
        'verify',
        '--url',
        sim.urls.router,
        '--model',
        'sim-model',
        '--steps',
        'throughput',
        '--throughput.levels',
        '1x2,4x4',
        '--throughput.max-tokens',
        '16',
        '--repeat',
        '1',
        '--baseline',
        save,
        '--report',
        report,
      ],
      { timeoutMs: 30_000 },
    );
    expect(again.stdout).toMatch(/^baseline\s+INCONCLUSIVE\s+INCONCLUSIVE: /m);
    expect(again.stdout).toMatch(/too few trials for a 95% interval \(2 before, 1 after\)/);
    expect(again.stdout).toMatch(/^INCONCLUSIVE: 1\/2 passed/m);
    expect(again.code).toBe(3);
    expect(readFileSync(report, 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('verify compare: the same comparison offline, exit 0 PASS, 1 REGRESSION, 3 INCONCLUSIVE, 2 bad usage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-verify-compare-'));
    const file = (name: string, trials: number[]) => {
      const p = join(dir, name);
      writeFileSync(
        p,
        JSON.stringify({
          kind: 'wedgewatch-verify-results',
          version: 2,
          savedAt: '2026-12-01T00:00:00Z',
          url: 'http://127.0.0.1:1',
          model: 'm',
          steps: [
            {
              step: 'throughput',
              ok: true,
              summary: '',
              figures: { 'c32.agg_tok_s': { value: trials[2], unit: 'tok/s', better: 'higher', trials } },
            },
          ],
        }),
      );
      return p;
    };
    const before = file('before.json', [1000, 1010, 990, 1005, 995]);
    const same = file('same.json', [1002, 1008, 992, 1003, 997]);
    const slower = file('slower.json', [800, 808, 792, 804, 796]);
    const noisy = file('noisy.json', [950, 850, 900, 880, 920]);
    const html = join(dir, 'cmp.html');
    const [pass, reg, inc, bad] = await Promise.all([
      runCli(['verify', 'compare', before, same], { timeoutMs: 20_000 }),
      runCli(['verify', 'compare', before, slower, '--report', html], { timeoutMs: 20_000 }),
      runCli(['verify', 'compare', before, noisy, '--json'], { timeoutMs: 20_000 }),
      runCli(['verify', 'compare', before, join(dir, 'missing.json')], { timeoutMs: 20_000 }),
    ]);
    expect(pass.stdout).toMatch(/^PASS: 1 gating figures within 10% of the baseline with 95% confidence/m);
    expect(pass.code).toBe(0);
    expect(reg.stdout).toMatch(
      /^ {2}REGRESSION {3}throughput\.c32\.agg_tok_s .* -20\.0% \[-\d+\.\d%, -1\d\.\d%\] {2}detects >/m,
    );
    expect(reg.code).toBe(1);
    expect(readFileSync(html, 'utf8')).toContain('data-chart');
    const json = JSON.parse(inc.stdout) as { verdict: string; figures: { mde: number }[] };
    expect(json.verdict).toBe('INCONCLUSIVE');
    expect(json.figures[0]!.mde).toBeGreaterThan(0.1);
    expect(inc.code).toBe(3);
    expect(bad.stderr).toMatch(/^wedgewatch verify compare: usage: after .*missing\.json: ENOENT/);
    expect(bad.code).toBe(2);
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
      ['verify', '--url', 'http://127.0.0.1:9', '--model', 'm', '--slo', 'ttft=fast'],
      ['verify', '--url', 'http://127.0.0.1:9', '--model', 'm', '--repeat', '0'],
    ];
    const results = await Promise.all(bad.map((args) => runCli(args, { timeoutMs: 20_000 })));
    expect(results[0]!.stderr).toMatch(/unknown step "nope"/);
    expect(results[1]!.stderr).toMatch(/--abort\.sessions: expected a positive integer/);
    expect(results[2]!.stderr).toMatch(/--model/);
    expect(results[3]!.stderr).toMatch(/--slo: expected e\.g\. "ttft=2s,tpot=50ms"/);
    expect(results[4]!.stderr).toMatch(/--repeat: expected an integer ≥ 1/);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
  });
});
