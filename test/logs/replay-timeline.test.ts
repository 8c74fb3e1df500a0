// replay as a forensics tool (issue 12, items 4 and 6): file:line, --json, per-rank gauges with totals that
// mean something, and the verdict timeline the detector's pure core produces over the log's own timestamps.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { replayCommand } from '../../src/commands/replay.js';
import { formatMetrics, replayFiles } from '../../src/commands/replay-files.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-timeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hms = (t0: number, s: number) => new Date(t0 + s * 1000).toISOString().slice(0, 19).replace('T', ' ');
const T0 = Date.UTC(2026, 7, 10, 14, 0, 0);
const YEAR = new Date().getUTCFullYear();

/** A DP-attention decode log: two DP ranks, each printing its own batch line every 2 s. */
function dpDecodeLog(): string {
  const lines: string[] = [];
  for (let s = 0; s < 40; s += 2) {
    lines.push(
      `[${hms(T0, s)} DP0 TP0 EP0] Decode batch, #running-req: 3, #token: 4000, token usage: 0.30, #unbootstrapped-req: 1, #transferring-req: 2, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 1, `,
      `[${hms(T0, s)} DP1 TP1 EP1] Decode batch, #running-req: 5, #token: 9000, gpu token usage: 0.70, #pending-token: 120, #optimistic-req: 0, accept len: 2.10, cuda graph: True, gen throughput (token/s): 250.00, #queue-req: 0, `,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A stuck vLLM engine: one request running, 0 tokens/s, for minutes (the stats line every 10 s). */
function stuckVllmLog(): string {
  const lines: string[] = [];
  const at = (s: number) => hms(T0, s).slice(5);
  for (let s = 0; s < 60; s += 10)
    lines.push(
      `(APIServer pid=851) INFO ${at(s)} [loggers.py:257] Engine 000: Avg prompt throughput: 120.0 tokens/s, Avg generation throughput: 41.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%`,
    );
  for (let s = 60; s <= 420; s += 10)
    lines.push(
      `(APIServer pid=851) INFO ${at(s)} [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%`,
    );
  return `${lines.join('\n')}\n`;
}

/** One server printing both kinds each second (not PD): prefill makes progress, decode reports 0 tokens/s. */
function mixedLog(): string {
  const lines: string[] = [];
  for (let s = 0; s < 240; s++) {
    lines.push(
      `[${hms(T0, s)} TP0] Prefill batch, #new-seq: 1, #new-token: 128, #cached-token: 0, token usage: 0.10, #running-req: 1, #queue-req: 0, `,
      `[${hms(T0, s)} TP0] Decode batch, #running-req: 1, #token: 500, token usage: 0.10, cuda graph: True, gen throughput (token/s): 0.00, #queue-req: 0, `,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('replay forensics', () => {
  it('Prefill and Decode lines of one rank in one second both reach the timeline, with or without user rules', () => {
    const file = join(dir, 'mixed.log');
    writeFileSync(file, mixedLog());
    const plain = replayFiles({ files: [file], packs: ['sglang'], timeline: true });
    // A user rule without a literal makes the scanner read every batch line (the other code path).
    const ruled = replayFiles({
      files: [file],
      packs: ['sglang'],
      userRules: [{ name: 'digits', severity: 'info', class: 'custom', match: '\\d{14}' }],
      timeline: true,
    });
    // Prefill lines with new tokens are progress every second: no stall either way.
    expect(plain.timeline!.entries.filter((e) => e.kind === 'engine_stalled')).toEqual([]);
    expect(ruled.timeline).toEqual(plain.timeline);
  });

  it('a DP-attention decode log gives per-rank gauges and engine totals (sums; usage the max over ranks)', async () => {
    const file = join(dir, 'decode.log');
    writeFileSync(file, dpDecodeLog());
    const r = replayFiles({ files: [file], packs: ['sglang'], timeline: true });
    const m = await formatMetrics(r.registry);
    expect(m).toContain(
      'wedgewatch_engine_rank_running_requests{target="replay",service="decode",rank="0"} 3',
    );
    expect(m).toContain(
      'wedgewatch_engine_rank_running_requests{target="replay",service="decode",rank="1"} 5',
    );
    expect(m).toContain(
      'wedgewatch_engine_rank_token_usage_ratio{target="replay",service="decode",rank="1"} 0.7',
    );
    expect(m).toContain('wedgewatch_engine_running_requests{target="replay",service="decode"} 8');
    expect(m).toContain('wedgewatch_engine_queued_requests{target="replay",service="decode"} 1');
    expect(m).toContain('wedgewatch_engine_token_usage_ratio{target="replay",service="decode"} 0.7');
    expect(m).toContain(
      'wedgewatch_engine_gen_throughput_tokens_per_second{target="replay",service="decode"} 350',
    );
    expect(m).toContain('wedgewatch_engine_transfer_queue_requests{target="replay",service="decode"} 2');
    expect(m).toContain('wedgewatch_engine_prealloc_queue_requests{target="replay",service="decode"} 1');
    // Both ranks print every round: the engine is making progress, no verdict.
    expect(r.timeline!.entries).toEqual([]);
    expect(r.timeline!.caught).toBe(false);
  });

  it('the same gauges without the timeline (the chunk pass keeps the last line of every rank)', async () => {
    const file = join(dir, 'decode2.log');
    writeFileSync(file, dpDecodeLog());
    const m = await formatMetrics(replayFiles({ files: [file], packs: ['sglang'] }).registry);
    expect(m).toContain('wedgewatch_engine_running_requests{target="replay",service="decode2"} 8');
    expect(m).toContain('wedgewatch_engine_token_usage_ratio{target="replay",service="decode2"} 0.7');
  });

  it('a stuck vLLM log (Running: 1 reqs, 0.0 tokens/s for minutes) gives an engine-stall verdict', () => {
    const file = join(dir, 'vllm.log');
    writeFileSync(file, stuckVllmLog());
    const r = replayFiles({ files: [file], packs: ['vllm'], timeline: true });
    const stalls = r.timeline!.entries.filter((e) => e.kind === 'engine_stalled');
    expect(stalls).toHaveLength(1);
    // Last progress at 00:50 (the last line with tokens), stallAfter 60 s: judged at 01:50 (ticks every 5 s).
    // vLLM stamps carry no year: the file's (this year) stands in.
    expect(new Date(stalls[0]!.at).toISOString()).toBe(`${YEAR}-08-10T14:01:50.000Z`);
    expect(stalls[0]!.text).toBe('engine_stalled: 1 running, 0 tokens/s for 60 s on vllm');
    expect(r.timeline!.caught).toBe(true);
  });

  it('--json prints one object per event with file, 1-based line and fields, then a summary with the verdicts', async () => {
    const file = join(dir, 'prefill.log');
    writeFileSync(
      file,
      [
        '[2026-08-10 14:01:29 TP0] Prefill batch. #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.00, #unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 0, input throughput (token/s): 10.00, ',
        '[2026-08-10 14:01:30 TP0] Load weight end.',
        RULE_FIXTURES.nixl_bootstrap_thread_dead![0],
        RULE_FIXTURES.sglang_prefill_bootstrap_aborted![0],
      ].join('\n') + '\n',
    );
    const out: string[] = [];
    const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await replayCommand().parseAsync(['node', 'replay', '--json', file]);
    } finally {
      w.mockRestore();
      e.mockRestore();
    }
    const objs = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objs.map((o) => o.type)).toEqual(['event', 'event', 'summary']);
    expect(objs[0]).toMatchObject({
      file,
      line: 3,
      service: 'prefill',
      rule: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      severity: 'critical',
      fields: { thread: 'Thread-1', target: 'bootstrap_thread', exception: 'AssertionError' },
      time: '2026-08-10T14:01:30.000Z',
    });
    expect(objs[1]).toMatchObject({ line: 12, rule: 'sglang_prefill_bootstrap_aborted', class: 'abort' });
    expect(objs[2]).toMatchObject({ type: 'summary', lines: 12, events: 2, caught: true });
    expect((objs[2]!.timeline as { text: string; time: string }[])[0]).toMatchObject({
      time: '2026-08-10T14:01:30.000Z',
      diagnosis: 'kv_bootstrap_thread_dead',
    });
  });

  it.each([
    [2_000, '2026-08-10 14:01:30'],
    [10_000, '2026-08-10 14:01:30'],
    [70_000, ''],
  ])(
    'a matched line without a stamp takes the last stamp within 64 KiB before it (%i bytes between)',
    (gap, stamp) => {
      // Unstamped lines (multi-byte text, so a window may start inside a character) between the stamped line and
      // the traceback: 4 KiB are searched first, then the whole 64 KiB window.
      const filler = '    frame «données» ' + 'x'.repeat(80);
      const fillerLines = Math.ceil(gap / (Buffer.byteLength(filler) + 1));
      const file = join(dir, `gap-${gap}.log`);
      writeFileSync(
        file,
        [
          '[2026-08-10 14:01:29 TP0] Load weight begin.',
          '[2026-08-10 14:01:30 TP0] Load weight end.',
          ...Array.from({ length: fillerLines }, () => filler),
          RULE_FIXTURES.nixl_bootstrap_thread_dead![0],
        ].join('\n') + '\n',
      );
      const r = replayFiles({ files: [file], packs: ['nixl'], timeline: true });
      expect(r.events.map((e) => [e.rule, e.stamp])).toEqual([['nixl_bootstrap_thread_dead', stamp]]);
    },
  );

  it('the text output cites file:line and prints the timeline with its yes/no', async () => {
    const file = join(dir, 'vllm2.log');
    writeFileSync(file, stuckVllmLog());
    const out: string[] = [];
    const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await replayCommand().parseAsync(['node', 'replay', '--engine', 'vllm', file]);
    } finally {
      w.mockRestore();
      e.mockRestore();
    }
    const text = out.join('');
    expect(text).toContain(`${YEAR}-08-10 14:01:50  engine_stalled: 1 running, 0 tokens/s for 60 s on vllm2`);
    expect(text).toContain(
      `would a watching daemon have caught it: yes, first at ${YEAR}-08-10 14:01:50 (engine_stalled)`,
    );
  });
});
