// Acceptance (issue 27, items 6 and 9): replay answers as a default daemon would. The default packs are a log
// source's (by engine), `--config` replays with a config's packs and rules, every verdict the daemon reaches from
// logs comes out (rank_stalled too), a stall is dated while the engine is quiet among other stamped lines, and the
// stall text quotes the stall's own values.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { replayCommand } from '../../src/commands/replay.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import { logSourceSchema } from '../../src/config/schema.js';
import { DEFAULT_PACKS, defaultPacks } from '../../src/config/log-engines.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-replay-daemon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 7, 10, 14, 0, 0);
const iso = (s: number) => new Date(T0 + s * 1000).toISOString().slice(0, 19).replace('T', ' ');
const short = (s: number) => iso(s).slice(5);

async function replayCliAll(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  try {
    await replayCommand().parseAsync(['node', 'replay', ...args]);
  } finally {
    w.mockRestore();
    e.mockRestore();
  }
  return { stdout: out.join(''), stderr: err.join('') };
}

async function replayCli(args: string[]): Promise<string> {
  const out: string[] = [];
  const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await replayCommand().parseAsync(['node', 'replay', ...args]);
  } finally {
    w.mockRestore();
    e.mockRestore();
  }
  return out.join('');
}

const VLLM_DEATH =
  '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:03 [core.py:710] EngineCore encountered a fatal error.\n' +
  '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:03 [core.py:710] RuntimeError: CUDA error: an illegal memory access\n';

describe('default packs are the daemon’s', () => {
  it('a log source, replay and verify take their defaults from one table', () => {
    expect(logSourceSchema.parse({ service: 'x', path: '/x' }).packs).toEqual(DEFAULT_PACKS.sglang);
    expect(logSourceSchema.parse({ service: 'x', path: '/x', engine: 'vllm' }).packs).toEqual(
      DEFAULT_PACKS.vllm,
    );
    expect(logSourceSchema.parse({ service: 'x', path: '/x', packs: ['python'] }).packs).toEqual(['python']);
    expect(defaultPacks()).toEqual(expect.arrayContaining([...DEFAULT_PACKS.sglang, ...DEFAULT_PACKS.vllm]));
  });

  it('replay of a vLLM log with --engine sglang says what a daemon reading it as SGLang says: nothing, and warns; with no flag it tells the engine and catches it (issue 40)', async () => {
    const file = join(dir, 'server.log');
    writeFileSync(file, VLLM_DEATH);
    const asSglang = await replayCliAll(['--json', '--engine', 'sglang', file]);
    expect(asSglang.stdout).not.toContain('vllm_engine_core_fatal');
    expect(asSglang.stderr).toContain(`${file} reads like vllm`);
    expect(asSglang.stderr).toContain('Replay it with --engine vllm.');
    const told = await replayCliAll(['--json', file]);
    expect(told.stderr).toContain(`${file}: vllm, told from its lines; packs vllm,`);
    expect(told.stderr).not.toContain('warning');
    const caught = await replayCli(['--json', file]);
    const first = JSON.parse(caught.split('\n')[0]!) as { rule: string; incident: { rootCause: unknown } };
    expect(first.rule).toBe('vllm_engine_core_fatal');
    expect(first.incident.rootCause).toEqual({
      exception: 'RuntimeError',
      message: 'CUDA error: an illegal memory access',
      rule: 'vllm_engine_core_fatal',
    });
  });

  it('--config replays with the config’s packs, format and rules for each file’s service', async () => {
    const log = join(dir, 'engine.log');
    writeFileSync(
      log,
      `${JSON.stringify({ time: '2026-08-10T14:00:03Z', message: 'EngineCore encountered a fatal error.' })}\n` +
        `${JSON.stringify({ time: '2026-08-10T14:00:04Z', message: 'queue depth qd=99' })}\n`,
    );
    const cfg = join(dir, 'wedgewatch.yaml');
    writeFileSync(
      cfg,
      [
        'targets:',
        '  - name: t',
        '    endpoints: [{ name: engine, url: "http://127.0.0.1:1" }]',
        '    logs:',
        `      - { service: engine, path: "${log}", engine: vllm, format: json }`,
        'rules:',
        '  - { name: qdepth, match: "queue depth qd=(?<qd>\\\\d+)", severity: warning }',
      ].join('\n'),
    );
    const out = await replayCli(['--json', '--config', cfg, log]);
    const rules = out
      .split('\n')
      .filter((l) => l.startsWith('{"type":"event"'))
      .map((l) => (JSON.parse(l) as { rule: string }).rule);
    // The fatal record waits for its traceback until the input ends: raised after the later line.
    expect(rules.sort()).toEqual(['qdepth', 'vllm_engine_core_fatal']);
  });
});

describe('replay = daemon on stalls', () => {
  it('rank_stalled: one vLLM engine rank holds work with no tokens while its sibling progresses', () => {
    const lines: string[] = [];
    for (let s = 0; s <= 240; s += 10) {
      lines.push(
        `(APIServer pid=1) INFO ${short(s)} [loggers.py:257] Engine 000: Avg prompt throughput: 50.0 tokens/s, Avg generation throughput: 40.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%`,
        `(APIServer pid=1) INFO ${short(s)} [loggers.py:257] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 2.0%`,
      );
    }
    const file = join(dir, 'dp.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = replayFiles({ files: [file], packs: ['vllm'], timeline: true });
    const ranks = r.timeline!.entries.filter((e) => e.kind === 'rank_stalled');
    expect(ranks.map((e) => e.text)).toEqual([
      expect.stringMatching(/^rank_stalled: rank 1 holds 2 running with no progress for 6\d s on dp/),
    ]);
    expect(r.timeline!.caught).toBe(true);
  });

  it('a stall is dated while the engine is quiet among other stamped lines, with the stall’s own values', () => {
    const lines: string[] = [];
    // Progress for 30 s, then the scheduler prints nothing while the HTTP server goes on logging every 5 s.
    for (let s = 0; s <= 30; s += 2)
      lines.push(
        `[${iso(s)} TP0] Decode batch, #running-req: 4, #token: 900, token usage: 0.20, cuda graph: True, gen throughput (token/s): 180.00, #queue-req: 2, `,
      );
    for (let s = 35; s <= 300; s += 5)
      lines.push(`[${iso(s)}] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK`);
    const file = join(dir, 'quiet.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = replayFiles({ files: [file], packs: ['sglang'], timeline: true });
    const stall = r.timeline!.entries.find((e) => e.kind === 'engine_stalled')!;
    expect(stall).toBeDefined();
    // Dated a stallAfter (60 s) after the last progress, not at the end of the log.
    expect(stall.at).toBeGreaterThanOrEqual(T0 + 90_000);
    expect(stall.at).toBeLessThanOrEqual(T0 + 100_000);
    // The stall's own values: its load, and no throughput from before it.
    expect(stall.text).toBe('engine_stalled: 4 running, 2 queued for 6' + stall.text.split(' for 6')[1]);
    expect(stall.text).not.toContain('180');
  });
});
