import { describe, expect, it } from 'vitest';
import { makeLineSource } from '../helpers/ingest-gen.mjs';
import { LOG_PACKS } from '../../src/config/schema.js';
import {
  parseSglangAt,
  parseSglangBatch,
  parseSglangLine,
  parseVllmLine,
  parseVllmStats,
} from '../../src/sources/logs/engine-lines.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

const ALL = [...LOG_PACKS];

function scan(text: string, chunk = 1 << 20): RuleMatch[] {
  return scanWith(ALL, text, chunk);
}

function scanWith(packs: typeof ALL, text: string, chunk = 1 << 20, everyEngineLine = false): RuleMatch[] {
  const out: RuleMatch[] = [];
  const scanner = new ChunkScanner(
    compileRuleSet(packs, []),
    65_536,
    {
      match: (m) => out.push(m),
      // Start-up markers end incidents and raise no event: they are seen as matches counted, not events.
      member: (m) => {
        if (m.rule.startup) out.push(m);
      },
      engine: () => {},
      truncated: () => {},
    },
    0,
    everyEngineLine,
    {},
    // Lines are read as what they are (`format: auto`): Ollama's are slog records, whose message the rules read.
    { format: 'auto' },
  );
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += chunk) {
    const part = Buffer.from(buf.subarray(i, Math.min(buf.length, i + chunk)));
    scanner.feed(part, part.length);
  }
  scanner.flush();
  return out;
}

describe('built-in packs', () => {
  const ruleNames = LOG_PACKS.flatMap((p) => PACKS[p].rules.map((r) => r.name));

  it('every rule has a fixture and every fixture names a rule', () => {
    expect(ruleNames.filter((n) => !RULE_FIXTURES[n])).toEqual([]);
    expect(Object.keys(RULE_FIXTURES).filter((n) => !ruleNames.includes(n))).toEqual([]);
  });

  it('every built-in rule gives the chunk prefilter a literal (one without makes the scanner read every line)', () => {
    const set = compileRuleSet(ALL, []);
    expect(set.rules.filter((r) => r.literals === null).map((r) => r.name)).toEqual([]);
    expect(set.everyLine).toBe(false);
  });

  it('rule names are unique across packs', () => {
    expect(new Set(ruleNames).size).toBe(ruleNames.length);
  });

  for (const [rule, lines] of Object.entries(RULE_FIXTURES)) {
    it(`${rule} fires on its fixture(s), through the chunk prefilter and byte by byte`, () => {
      for (const text of lines) {
        const padded = `[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1, #queue-req: 0, \n${text}\nplain trailing line\n`;
        const fired = scan(padded).filter((m) => m.rule.name === rule);
        expect(fired, text).toHaveLength(1);
        expect(
          scan(padded, 7).filter((m) => m.rule.name === rule),
          text,
        ).toHaveLength(1);
        // Replay's walk (scanWithEngineLines: engine lines read on the same pass), which has its own prefilter test.
        expect(
          scanWith(ALL, padded, 1 << 20, true).filter((m) => m.rule.name === rule),
          text,
        ).toHaveLength(1);
      }
    });
  }

  it('the line prefilter finds every literal of every pack, as the whole line and inside one', () => {
    const set = compileRuleSet(ALL, []);
    const pre = set.linePrefilter!;
    const literals = set.rules.flatMap((r) => (r.literals ?? []).map((l) => [r.name, l] as const));
    expect(literals.length).toBeGreaterThan(100);
    for (const [rule, l] of literals) {
      // The scanner tests latin1 text: a literal is looked for as its UTF-8 bytes.
      const lit = Buffer.from(l, 'utf8').toString('latin1');
      expect(pre.test(lit), `${rule}: ${l}`).toBe(true);
      expect(pre.test(`[2026-01-01 00:00:00 TP0] x ${lit} y`), `${rule}: ${l}`).toBe(true);
    }
  });

  it('tells the PD failure reasons apart: exactly one prefill rule per line', () => {
    for (const r of [
      'sglang_prefill_bootstrap_aborted',
      'sglang_prefill_bootstrap_timeout',
      'sglang_prefill_bootstrap_failed',
    ]) {
      const names = scan(`${RULE_FIXTURES[r]![0]}\n`).map((m) => m.rule.name);
      expect(names).toEqual([r]);
    }
  });

  it('one bootstrap-thread death is one event naming the thread, the exception and the message', () => {
    const m = scan(`${RULE_FIXTURES.nixl_bootstrap_thread_dead![0]}\n`);
    expect(m.map((x) => x.rule.name)).toEqual(['nixl_bootstrap_thread_dead']);
    expect(m[0]!.fields).toEqual({
      thread: 'Thread-1',
      target: 'bootstrap_thread',
      exception: 'AssertionError',
      message: "First message should be b'NixlMsgGuard'. Foreign traffic?",
    });
    expect(m[0]!.rule.class).toBe('kv_bootstrap_dead');
    expect(m[0]!.offset).toBe(0);
    expect(m[0]!.lineNo).toBe(1);
    // Without the nixl pack the generic record names the same thread; the assertion is still absorbed.
    const py = scanWith(['python', 'sglang'], `${RULE_FIXTURES.nixl_bootstrap_thread_dead![0]}\n`);
    expect(py.map((x) => x.rule.name)).toEqual(['python_thread_exception']);
    expect(py[0]!.fields).toMatchObject({ target: 'bootstrap_thread', exception: 'AssertionError' });
    // A second thread death right after is a second incident (another rank, or the restarted process).
    const twice = scan(
      `${RULE_FIXTURES.nixl_bootstrap_thread_dead![0]}\n${RULE_FIXTURES.nixl_bootstrap_thread_dead![0]}\n`,
    );
    expect(twice.map((x) => x.rule.name)).toEqual([
      'nixl_bootstrap_thread_dead',
      'nixl_bootstrap_thread_dead',
    ]);
    // The header on another stream: the assertion alone still fires, once.
    const alone = scan(`${RULE_FIXTURES.nixl_guard_assertion![0]}\n`);
    expect(alone.map((x) => x.rule.name)).toEqual(['nixl_guard_assertion']);
    const crlf = scan(`${RULE_FIXTURES.python_thread_exception![3]}\r\n`).find(
      (x) => x.rule.name === 'python_thread_exception',
    )!;
    expect(crlf.fields).toMatchObject({ thread: 'DetokenizerThread', exception: 'RuntimeError' });
  });

  it("per-rank copies of one request's abort count once; another request counts again", () => {
    const line = (tp: number, rid: string) =>
      `[2026-08-10 14:07:24 DP${tp} TP${tp} EP${tp}] Decode transfer failed for request rank=${tp} decode_req.req.rid='${rid}' decode_req.req.bootstrap_room=1 with exception KVTransferError(bootstrap_room=1): Aborted by AbortReq.`;
    const text = [0, 1, 2, 3, 4, 5, 6, 7].map((tp) => line(tp, 'r1')).concat([line(0, 'r2'), line(1, 'r2')]);
    const m = scan(`${text.join('\n')}\n`);
    expect(m.map((x) => `${x.rule.name} ${x.fields.rid}`)).toEqual([
      'sglang_decode_transfer_aborted r1',
      'sglang_decode_transfer_aborted r2',
    ]);
    expect(m[0]!.rule.class).toBe('abort');
  });

  it('a vLLM engine-core record is one event with the cause, even when the traceback never ends', () => {
    const full = scan(`${RULE_FIXTURES.vllm_engine_core_fatal![0]}\n`);
    expect(full.map((x) => x.rule.name)).toEqual(['vllm_engine_core_fatal']);
    expect(full[0]!.fields).toMatchObject({ exception: 'RuntimeError' });
    expect(full[0]!.fields.message).toContain('Worker failed with error');
    const cut = scan(
      '(EngineCore_DP0 pid=4) ERROR 08-10 12:30:57 [core.py:710] EngineCore encountered a fatal error.\n',
    );
    expect(cut.map((x) => x.rule.name)).toEqual(['vllm_engine_core_fatal']);
    // The API server's EngineDeadError right after is the same incident.
    const chain = scan(
      // The API server prints it within the second (the fixture's own stamp is from another report).
      `${RULE_FIXTURES.vllm_engine_core_fatal![0]}\n${RULE_FIXTURES.vllm_engine_core_died![0]!.replace('08-10 01:15:59', '08-10 12:30:58')}\n${RULE_FIXTURES.vllm_engine_dead![0]}\n`,
    );
    expect(chain.map((x) => x.rule.name)).toEqual(['vllm_engine_core_fatal']);
  });

  it('a thread header with no exception line within the window produces no event', () => {
    const filler = Array.from({ length: 120 }, (_, i) => `  frame ${i}`).join('\n');
    expect(scan(`Exception in thread Thread-9 (worker):\n${filler}\nValueError: late\n`)).toEqual([]);
  });

  it('extracts bytes_per_full_token as a value', () => {
    const [m] = scan(`${RULE_FIXTURES.sglang_bytes_per_full_token![1]}\n`);
    expect(m!.values).toEqual({ bytesPerFullToken: 987 });
  });

  it('no rule fires on a clean 100,000-line healthy log', () => {
    const next = makeLineSource({ seed: 7, faults: false });
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++) lines.push(next(i));
    const text = `${lines.join('\n')}\n`;
    const fired = scan(text, 64 * 1024).filter((m) => !m.rule.startup);
    expect(fired.map((m) => `${m.rule.name}: ${m.line}`)).toEqual([]);
    // The healthy log really exercised the shapes: batch lines of every variant, access and vLLM lines.
    expect(text).toContain('#bootstrap-req:');
    expect(text).toContain('Prefill batch. #new-seq');
    expect(text).toContain('Engine 000:');
  });
});

describe('engine lines', () => {
  it('parses the PD decode line', () => {
    expect(
      parseSglangBatch(
        '[2026-07-10 12:00:05 DP0 TP0] Decode batch, #running-req: 12, #token: 53120, token usage: 0.41, pre-allocated usage: 0.05, #prealloc-req: 2, #transfer-req: 1, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 612.34, #queue-req: 0, ',
      ),
    ).toEqual({
      running: 12,
      tokenUsage: 0.41,
      preallocQueue: 2,
      transferQueue: 1,
      genThroughput: 612.34,
      queued: 0,
    });
  });
  it('parses the prefill line, 2026 variant with #bootstrap-req and no trailing comma', () => {
    expect(
      parseSglangBatch(
        '[2026-07-10 12:00:01 TP0] Prefill batch, #new-seq: 2, #new-token: 8192, #cached-token: 0, token usage: 0.12, #running-req: 0, #queue-req: 5, #pending-token: 0, #bootstrap-req: 3, #inflight-req: 1, cuda graph: False, input throughput (token/s): 4096.00',
      ),
    ).toEqual({ tokenUsage: 0.12, running: 0, queued: 5, preallocQueue: 3, transferQueue: 1 });
  });
  it('parses hybrid SWA usage, the early `batch.` form and the iteration counter', () => {
    expect(
      parseSglangBatch(
        '[2026-07-10 12:00:12 TP1] Decode batch [1234], #running-req: 3, #full token: 12000, full token usage: 0.10, #swa token: 4000, swa token usage: 0.20, pre-allocated usage: 0.73, #prealloc-req: 21, #transfer-req: 12, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 0.00, #queue-req: 0, ',
      ),
      // The fullest pool, as SGLang's own token_usage (pool_stats_observer.py get_max_pool_usage): not `full` alone.
    ).toMatchObject({ running: 3, tokenUsage: 0.2, preallocQueue: 21, transferQueue: 12, genThroughput: 0 });
    expect(
      parseSglangBatch(
        'Prefill batch. #new-seq: 1, #new-token: 1, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0',
      ),
    ).toEqual({ tokenUsage: 0, running: 0, queued: 0 });
  });
  it('reads each value exactly as Number() does, and no value that is not a plain number', () => {
    // The parser sums digits in place for speed: it must agree with Number() to the last bit.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const digits = (n: number) => Array.from({ length: n }, () => String(rnd(10))).join('');
    const texts = [
      '0',
      '0.00',
      '0.1',
      '0.67',
      '499.85',
      '29334.17',
      '007.50',
      '123456789012345',
      '0.000000000000001',
    ];
    for (let i = 0; i < 2000; i++) {
      texts.push(rnd(2) === 0 ? digits(1 + rnd(18)) : `${digits(1 + rnd(9))}.${digits(1 + rnd(12))}`);
    }
    const line = (v: string) =>
      `[2026-07-10 12:00:05 TP0] Decode batch, #running-req: ${v}, token usage: ${v}\r`;
    for (const t of texts) {
      expect(parseSglangBatch(line(t)), t).toEqual({ running: Number(t), tokenUsage: Number(t) });
    }
    for (const bad of ['', '12.', '.5', '1e3', '-1', '0x10', '1.2.3', '4 reqs', 'NaN']) {
      expect(parseSglangBatch(line(bad)), bad).toBeUndefined();
    }
    // Trailing whitespace NUMBER allows (a tab, a no-break space in latin1 text) still reads the number.
    expect(parseSglangBatch('Decode batch, #running-req: 12\t, #queue-req: 3\u00a0')).toEqual({
      running: 12,
      queued: 3,
    });
  });
  it('reads a line in place in its chunk exactly as it reads the line alone, never past its newline', () => {
    // The scanner parses batch lines inside the chunk text; what follows a line must not change what it says.
    const lines = [
      '[2026-08-10 14:00:00 TP0 EP3] Decode batch, #running-req: 4, token usage: 0.5, gen throughput (token/s): 12.00, #queue-req: 2, ',
      '[2026-08-10 14:00:00 DP12 TP1] Prefill batch. #new-seq: 1, #new-token: 0, #running-req: 3, #queue-req: 7',
      '[2026-08-10 14:00:00 TP1] Decode batch [3], #running-req: 9, #queue-req: 1',
      '[2026-08-10 14:00:01] Decode batch text without fields',
      '[2026-08-10 14:00:01 TP0] Decode batch, #running-req: 5, token usage: 0.1, #queue-req',
      '[2026-08-1 Decode batch, #running-req: 1',
      'Decode batch, #running-req: 8',
      '[short] Decode batch. #queue-req: 1',
      'no header here #running-req: 99, ',
    ];
    // Each line followed by text that would change the answer if read: digits that would spoil a line's last value,
    // fields, a ` DP` rank, a header, a `]`.
    const after =
      '5, #queue-req: 77, gen throughput (token/s): 0.00, #running-req: 66 DP9] Decode batch, token usage: 0.9';
    for (const line of lines) {
      const s = `${line}\n${after}\n`;
      expect(parseSglangAt(s, 0, line.length), line).toEqual(parseSglangLine(line));
      const pre = `${after}\n`;
      const t = `${pre}${line}\n${after}`;
      expect(parseSglangAt(t, pre.length, pre.length + line.length), line).toEqual(parseSglangLine(line));
    }
  });

  it('parses vLLM V1 and V0 stats lines', () => {
    expect(
      parseVllmStats(
        '(APIServer pid=851) INFO 04-28 22:54:32 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.5%, Prefix cache hit rate: 0.0%',
      ),
    ).toEqual({ genThroughput: 0, running: 1, queued: 0, tokenUsage: 0.015 });
    expect(
      parseVllmStats(
        'INFO 05-11 18:07:24 metrics.py:341] Avg prompt throughput: 5.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache usage: 50.0%, CPU KV cache usage: 0.0%.',
      ),
    ).toEqual({ genThroughput: 20, running: 4, queued: 2, tokenUsage: 0.5 });
  });
});

describe('engine lines: progress means tokens (issue 13 item 5)', () => {
  it('SGLang: a decode batch with 0 token/s or a prefill batch with no new tokens is no progress', () => {
    const decode = (tp: string) =>
      `[2026-08-10 14:00:00 TP0] Decode batch [40]. #running-req: 1, #token: 900, token usage: 0.01, cuda graph: True, gen throughput (token/s): ${tp}, #queue-req: 0, `;
    expect(parseSglangLine(decode('499.85'))!.progress).toBe(true);
    expect(parseSglangLine(decode('0.00'))!.progress).toBe(false);
    const prefill = (n: number) =>
      `[2026-08-10 14:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: ${n}, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0`;
    expect(parseSglangLine(prefill(512))!.progress).toBe(true);
    expect(parseSglangLine(prefill(0))!.progress).toBe(false);
    // Batch lines are not per-rank evidence: a rank that stops printing may just be idle.
    expect(parseSglangLine(decode('1.0'))!.periodic).toBeUndefined();
  });

  it('vLLM: Running: 1 reqs at 0.0 tokens/s is no progress, and the line is per-rank evidence', () => {
    const l = parseVllmLine(
      'INFO 08-10 14:00:00 [loggers.py:123] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%',
    )!;
    expect(l).toMatchObject({ rank: '1', progress: false, periodic: true, values: { running: 1 } });
  });
});
