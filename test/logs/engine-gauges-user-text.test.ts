// Issue 37 item 4: engine gauges come only from the engine's own records. A batch or stats line quoted in a
// `--log-requests` echo, printed inside a record that carries the model's output (carriers.ts), or written anywhere
// but right after the engine's logger prefix is user text: it sets no gauge, adds no rank, moves no progress clock.
// Rank labels are bounded, and a rank silent for a while leaves the totals and the exported series.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatMetrics, replayFiles } from '../../src/commands/replay-files.js';
import type { LogPack } from '../../src/config/schema.js';
import { createEngineMetrics } from '../../src/metrics.js';
import type { EngineSignal } from '../../src/core/signals.js';
import {
  applyEngineLine,
  EngineRanks,
  MAX_ENGINE_RANKS,
  RANK_TTL_MS,
} from '../../src/sources/logs/engine-ranks.js';
import type { EngineLine } from '../../src/sources/logs/engine-lines.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';

const T = '2026-08-10 14:00:';
const ss = (s: number) => String(s).padStart(2, '0');

/** SGLang's own decode batch line (scheduler_metrics_mixin.py log_decode_stats), DP attention prefix. */
const batch = (s: number, dp: number, running: number, usage: string, tput: string) =>
  `[${T}${ss(s)} DP${dp} TP${dp}] Decode batch, #running-req: ${running}, #token: 900, token usage: ${usage}, cuda graph: True, gen throughput (token/s): ${tput}, #queue-req: 0, `;

/** What a hostile prompt writes: a batch line of a rank of its choosing, 64 running, usage 0.95, 500 tok/s. */
const fake = (dp: number, s = 5) => batch(s, dp, 64, '0.95', '500.00');

/** Every way user text reaches an SGLang log with a batch line in it. */
const SHAPES: Record<string, (dp: number) => string> = {
  // tokenizer_manager.py `--log-requests`: the prompt as a Python repr, one line.
  receive_echo: (dp) =>
    `[${T}05] Receive: obj=GenerateReqInput(text='${fake(dp)}', sampling_params={'max_new_tokens': 8}, rid='r${dp}')`,
  finish_echo: (dp) =>
    `[${T}05] Finish: obj=GenerateReqInput(rid='r${dp}'), out={'text': '${fake(dp)}', 'meta_info': {}}`,
  // The model's output inside the tool parser's warning (carriers.ts sglang_failed_json_part): raw lines, one of
  // them the fake batch line at the line's start, with the engine's own prefix shape.
  tool_parser_carrier: (dp) =>
    `[${T}05 TP0] Failed to parse JSON part: {"name": "get_weather", "arguments": {"q": "\n${fake(dp)}\n"}}, JSON parse error: Invalid control character at: line 1 column 45 (char 44)`,
  // Quoted in some other record of the engine (a warning quoting the request): not where the logger puts it.
  quoted_in_record: (dp) => `[${T}05 TP0] Warning: request r${dp} text ${fake(dp)}`,
};

function scanner(packs: LogPack[], onLine: (l: EngineLine) => void, everyEngineLine = false) {
  return new ChunkScanner(
    compileRuleSet(packs, []),
    65_536,
    { match: () => {}, engine: onLine, truncated: () => {} },
    0,
    everyEngineLine,
  );
}

/** The watcher's engine sink (watcher.ts) over a fresh registry: what /metrics shows. */
function gauges() {
  const registry = new client.Registry();
  const metrics = createEngineMetrics(registry);
  const labels = { target: 't', service: 'decode' };
  const ranks = new EngineRanks();
  const signals: EngineSignal[] = [];
  let now = Date.UTC(2026, 7, 10, 14);
  const sink = (l: EngineLine) => {
    const sig = applyEngineLine(metrics, labels, ranks, l, now);
    if (sig !== undefined) signals.push(sig);
  };
  const value = async (name: keyof typeof metrics, rank?: string) => {
    const m = await metrics[name].get();
    return m.values
      .filter((v) => rank === undefined || (v.labels as Record<string, unknown>).rank === rank)
      .map((v) => v.value);
  };
  const text = () => registry.metrics();
  return { metrics, ranks, signals, sink, value, text, advance: (ms: number) => (now += ms) };
}

function feed(s: ChunkScanner, text: string, chunk = 0) {
  const buf = Buffer.from(text);
  if (chunk <= 0) s.feed(buf, buf.length);
  else
    for (let i = 0; i < buf.length; i += chunk)
      s.feed(buf.subarray(i, i + chunk), Math.min(chunk, buf.length - i));
  s.flush();
}

describe('engine gauges: only the engine own lines (issue 37 item 4)', () => {
  for (const [shape, make] of Object.entries(SHAPES)) {
    for (const chunk of [0, 7]) {
      it(`${shape}: a prompt setting running=64, token usage 0.95 sets no gauge (chunks of ${chunk || 'all'})`, async () => {
        const g = gauges();
        const s = scanner(['sglang'], g.sink);
        // The engine's own line first, then the prompt's, then nothing (an idle engine prints no batch lines).
        feed(s, `${batch(4, 0, 1, '0.10', '20.00')}\n${make(0)}\n${make(7)}\n`, chunk);
        expect(await g.value('engineRunning')).toEqual([1]);
        expect(await g.value('engineTokenUsage')).toEqual([0.1]);
        expect(await g.value('engineGenThroughput')).toEqual([20]);
        // No rank but the engine's own: the fake DP7 never became a label.
        expect((await g.value('engineRankRunning')).length).toBe(1);
        expect(await g.value('engineRankRunning', '7')).toEqual([]);
        expect(g.signals.map((x) => x.running)).toEqual([1]);
      });
    }
  }

  it('the same lines as the engine prints them still set the gauges (the guard is the position, not the text)', async () => {
    const g = gauges();
    feed(scanner(['sglang'], g.sink), `${fake(0)}\n${fake(7)}\n`);
    expect(await g.value('engineRunning')).toEqual([128]);
    expect(await g.value('engineTokenUsage')).toEqual([0.95]);
    expect((await g.value('engineRankRunning', '7')).length).toBe(1);
  });

  it('a request echo after the rank real line in one chunk does not hide the real line', async () => {
    const g = gauges();
    feed(scanner(['sglang'], g.sink), `${batch(4, 0, 3, '0.20', '30.00')}\n${SHAPES.receive_echo!(0)}\n`);
    expect(await g.value('engineRunning')).toEqual([3]);
  });

  it('during a real decode stall, a fake rank printed once sets no throughput and no progress', async () => {
    for (const [shape, make] of Object.entries(SHAPES)) {
      const g = gauges();
      const s = scanner(['sglang'], g.sink);
      // The engine holds 4 requests and makes no tokens (decode_stall): 0.00 tok/s every line.
      const stall = (t: number) => batch(t, 0, 4, '0.40', '0.00');
      feed(s, `${stall(1)}\n${stall(2)}\n${make(9)}\n${stall(3)}\n`);
      expect(await g.value('engineGenThroughput'), shape).toEqual([0]);
      expect(await g.value('engineRankGenThroughput', '9'), shape).toEqual([]);
      expect(g.signals.length, shape).toBeGreaterThan(0);
      expect(
        g.signals.every((x) => x.progress === false && x.genThroughput === 0),
        shape,
      ).toBe(true);
    }
  });

  it('vLLM: a stats line quoted in a request echo is no stats line', async () => {
    const g = gauges();
    const s = scanner(['vllm'], g.sink);
    const stats = (engine: string, running: number, gen: string, kv: string) =>
      `Engine ${engine}: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: ${gen} tokens/s, Running: ${running} reqs, Waiting: 0 reqs, GPU KV cache usage: ${kv}%, Prefix cache hit rate: 0.0%`;
    feed(
      s,
      [
        `INFO 08-10 14:00:04 [loggers.py:257] ${stats('000', 1, '20.0', '10.0')}`,
        `INFO 08-10 14:00:05 [logger.py:43] Received request chatcmpl-1: prompt: '${stats('007', 64, '500.0', '95.0')}', params: SamplingParams(n=1), prompt_token_ids: None`,
        `INFO 08-10 14:00:05 [logger.py:71] Generated response chatcmpl-1: output: '${stats('008', 64, '500.0', '95.0')}', output_token_ids: None`,
        '',
      ].join('\n'),
    );
    expect(await g.value('engineRunning')).toEqual([1]);
    expect(await g.value('engineTokenUsage')).toEqual([0.1]);
    expect((await g.value('engineRankRunning')).length).toBe(1);
  });

  it('2,856 fake ranks from five requests do not grow /metrics', async () => {
    const g = gauges();
    const s = scanner(['sglang'], g.sink);
    feed(s, `${batch(4, 0, 1, '0.10', '20.00')}\n`);
    const before = await g.text();
    // Five requests: echoes of each (one fake rank apiece) and tool-call outputs of hundreds of fake rank lines each.
    const shapes = Object.values(SHAPES);
    const lines: string[] = [];
    let dp = 1;
    for (let r = 0; r < 5; r++) {
      const tool = Array.from({ length: 568 }, () => fake(dp++)).join('\n');
      lines.push(
        `[${T}05 TP0] Failed to parse JSON part: {"name": "f", "arguments": "\n${tool}\n"}, JSON parse error: Invalid control character at: line 1 column 29 (char 28)`,
      );
      for (const shape of shapes) lines.push(shape(dp++));
    }
    expect(dp - 1).toBeGreaterThanOrEqual(2856);
    feed(s, `${lines.join('\n')}\n`);
    const after = await g.text();
    expect(after).toBe(before);
    expect(g.ranks.size).toBe(1);
  });
});

describe('engine ranks: bounded, and silent ones leave (issue 37 item 4)', () => {
  const line = (rank: number, running = 1): EngineLine => ({
    values: { running, genThroughput: 10 },
    rank: String(rank),
    progress: true,
  });

  it(`at most ${MAX_ENGINE_RANKS} ranks are kept; lines of more are refused, counted, and make no signal`, async () => {
    const g = gauges();
    for (let r = 0; r < 2856; r++) g.sink(line(r));
    expect(g.ranks.size).toBe(MAX_ENGINE_RANKS);
    expect(g.signals).toHaveLength(MAX_ENGINE_RANKS);
    expect(await g.value('engineRanksRefused')).toEqual([2856 - MAX_ENGINE_RANKS]);
    expect((await g.value('engineRankRunning')).length).toBe(MAX_ENGINE_RANKS);
    expect(await g.value('engineRunning')).toEqual([MAX_ENGINE_RANKS]);
    // A kept rank still updates.
    g.sink(line(3, 5));
    expect(await g.value('engineRankRunning', '3')).toEqual([5]);
  });

  it('a rank silent for RANK_TTL_MS while another prints leaves the totals and its series', async () => {
    const g = gauges();
    g.sink(line(0, 2));
    g.sink(line(7, 64));
    expect(await g.value('engineRunning')).toEqual([66]);
    // Rank 0 goes on printing; rank 7 never again.
    for (let t = 0; t < RANK_TTL_MS; t += 1000) {
      g.advance(1000);
      g.sink(line(0, 2));
    }
    expect(await g.value('engineRunning')).toEqual([2]);
    expect(await g.value('engineRankRunning', '7')).toEqual([]);
    expect(g.signals.at(-1)!.running).toBe(2);
    // Back when it prints again.
    g.sink(line(7, 1));
    expect(await g.value('engineRunning')).toEqual([3]);
  });

  it('nothing leaves while the whole engine is silent (a stalled engine prints nothing)', async () => {
    const g = gauges();
    g.sink(line(0, 2));
    g.sink(line(1, 3));
    g.advance(10 * RANK_TTL_MS);
    expect(await g.value('engineRunning')).toEqual([5]);
    expect((await g.value('engineRankRunning')).length).toBe(2);
  });
});

describe('replay of a request echo holding a fake batch line (issue 37 item 4)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ww-echo-batch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A healthy engine: a request decoded for 5 s, the health check's one-token prefill with nothing running, then idle
   * (HTTP lines only) for three minutes; a prompt echoed and printed by the tool parser in between.
   */
  function healthyLog(): string {
    const lines: string[] = [];
    for (let s = 0; s < 5; s++) lines.push(batch(s, 0, 1, '0.10', '40.00'));
    lines.push(
      `[${T}05 DP0 TP0] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.10, #running-req: 0, #queue-req: 0, `,
    );
    // The prompt: a stalled-looking batch line of its own rank (64 running, no tokens), echoed and printed by the
    // tool parser.
    const stalled = (dp: number) => batch(5, dp, 64, '0.95', '0.00');
    lines.push(
      `[${T}05] Receive: obj=GenerateReqInput(text='${stalled(0)}\\n${stalled(3)}', rid='r1')`,
      `[${T}06 TP0] Failed to parse JSON part: {"a": "\n${stalled(5)}\n"}, JSON parse error: Invalid control character at: line 1 column 8 (char 7)`,
    );
    for (let s = 10; s < 190; s += 10) {
      const m = Math.floor(s / 60);
      lines.push(
        `[2026-08-10 14:0${m}:${ss(s % 60)}] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK`,
      );
    }
    return `${lines.join('\n')}\n`;
  }

  for (const timeline of [true, false]) {
    it(`gives no engine_stalled and no fake gauge (timeline ${timeline})`, async () => {
      const file = join(dir, 'decode.log');
      writeFileSync(file, healthyLog());
      const r = replayFiles({ files: [file], packs: ['sglang'], timeline, service: 'decode' });
      if (timeline) {
        expect(r.timeline!.entries.filter((e) => e.kind === 'engine_stalled')).toEqual([]);
        expect(r.timeline!.caught).toBe(false);
      }
      const m = await formatMetrics(r.registry);
      expect(m).toContain('wedgewatch_engine_running_requests{target="replay",service="decode"} 0');
      expect(m).toContain('wedgewatch_engine_token_usage_ratio{target="replay",service="decode"} 0.1');
      expect(m).not.toMatch(/rank="[35]"/);
    });
  }
});
