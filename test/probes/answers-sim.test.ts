// The answer-checking probes (canary, structured, the tool-call matrix) against the simulator: all pass on a
// healthy deployment, and each answer fault fails the probe — and the matrix cell — that should catch it.
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeConfig } from '../../src/config/schema.js';
import { runProbe } from '../../src/sources/probes/runner.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';
import { hop, probe } from './fixtures.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

/** Runs one probe config `n` times in a row over one hop (the canary counts its runs per config). */
async function runs(url: string, p: ProbeConfig, n = 1): Promise<ProbeResultSignal[]> {
  const h = hop(url);
  try {
    const out: ProbeResultSignal[] = [];
    for (let i = 0; i < n; i++) {
      out.push(
        (await runProbe({ target: 't', model: 'm', probe: p, hop: h, conn: 'fresh', headers: {} })).signal,
      );
    }
    return out;
  } finally {
    await h.close();
  }
}

const cells = (r: ProbeResultSignal) =>
  Object.fromEntries((r.detail?.cells ?? []).map((c) => [c.cell, c.result]));

describe('healthy simulator', () => {
  it('canary: sums and echoes come back right, pairs included, each run under 64 engine tokens', async () => {
    sim = await startSim();
    const rs = await runs(sim.urls.router, probe('canary', { timeout: '5s', pairEvery: 2 }), 4);
    expect(rs.map((r) => r.result)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const asked = rs.map((r) => r.detail!.answers!);
    // Runs alternate question shapes; every 2nd run asks two at once.
    expect(asked.map((a) => a.length)).toEqual([1, 2, 1, 2]);
    expect(asked[0]![0]!.question).toMatch(/^What is \d{4} \+ \d{4}\? Reply with the number only\.$/);
    expect(asked[1]![0]!.question).toMatch(/^Repeat exactly: \S+$/);
    for (const run of asked) {
      for (const a of run) expect(a).toMatchObject({ ok: true, actual: a.expected });
      expect(run.reduce((n, a) => n + a.tokens!, 0)).toBeLessThan(64);
    }
  });

  it('structured: the JSON validates', async () => {
    sim = await startSim();
    const [r] = await runs(sim.urls.router, probe('structured', { timeout: '5s' }));
    expect(r).toMatchObject({ result: 'ok' });
    expect(r!.tokens!).toBeLessThanOrEqual(32);
  });

  it('toolcall: every cell of the default matrix passes', async () => {
    sim = await startSim();
    const [r] = await runs(sim.urls.router, probe('toolcall', { timeout: '10s' }));
    expect(r!.error).toBeUndefined();
    expect(cells(r!)).toEqual({
      auto: 'ok',
      'auto/nonstream': 'ok',
      required: 'ok',
      named: 'ok',
      none: 'ok',
      parallel: 'ok',
      second_turn: 'ok',
      large_args: 'ok',
    });
  });
});

describe('answer faults', () => {
  it('kv_corruption: a plausible wrong answer is wrong_output with question, expected and actual', async () => {
    sim = await startSim({ faults: ['kv_corruption'] });
    const [r] = await runs(sim.urls.router, probe('canary', { timeout: '5s' }));
    expect(r!.result).toBe('wrong_output');
    const a = r!.detail!.answers![0]!;
    expect(a.ok).toBe(false);
    expect(a.actual).not.toBe(a.expected);
    // One character off: plausible, and still wrong.
    expect(a.actual).toHaveLength(a.expected.length);
    expect(r!.error).toContain(`expected ${JSON.stringify(a.expected)}, got ${JSON.stringify(a.actual)}`);
  });

  it("kv_corruption mode=mixup: another request's answer in a concurrent pair is named a mix-up", async () => {
    sim = await startSim({ faults: [{ name: 'kv_corruption', params: { mode: 'mixup' } }] });
    const rs = await runs(sim.urls.router, probe('canary', { timeout: '5s', pairEvery: 1 }), 3);
    expect(rs.every((r) => r.result === 'wrong_output')).toBe(true);
    const mixed = rs.flatMap((r) => r.detail!.answers!).filter((a) => a.mixup !== undefined);
    expect(mixed.length).toBeGreaterThan(0);
    // The error quotes the mix-up when a run has one.
    for (const r of rs.filter((x) => x.detail!.answers!.some((a) => a.mixup !== undefined))) {
      expect(r.error).toMatch(/cross-request mix-up/);
    }
  });

  it('toolcall_leak family=qwen: the calling cells fail as Hermes/Qwen markup leaks; none and second_turn pass', async () => {
    sim = await startSim({ faults: [{ name: 'toolcall_leak', params: { family: 'qwen' } }] });
    const [r] = await runs(sim.urls.router, probe('toolcall', { timeout: '10s' }));
    expect(r!.result).toBe('toolcall_leak');
    expect(cells(r!)).toEqual({
      auto: 'toolcall_leak',
      'auto/nonstream': 'toolcall_leak',
      required: 'toolcall_leak',
      named: 'toolcall_leak',
      none: 'ok',
      parallel: 'toolcall_leak',
      second_turn: 'ok',
      large_args: 'toolcall_leak',
    });
    expect(r!.detail!.cells![0]!.error).toMatch(/^hermes tool-call markup "<tool_call>/);
  });

  it.each(['llama', 'mistral', 'kimi', 'glm', 'gpt-oss', 'gemma4', 'json', 'deepseek_v3'])(
    'toolcall_leak family=%s is caught as a leak',
    async (family) => {
      sim = await startSim({ faults: [{ name: 'toolcall_leak', params: { family } }] });
      const [r] = await runs(sim.urls.router, probe('toolcall', { timeout: '10s', cells: ['auto'] }));
      expect(r).toMatchObject({ result: 'toolcall_leak' });
    },
  );

  it('toolcall_leak mode=required_ignored: only the required cell fails, on finish_reason length', async () => {
    sim = await startSim({ faults: [{ name: 'toolcall_leak', params: { mode: 'required_ignored' } }] });
    const [r] = await runs(
      sim.urls.router,
      probe('toolcall', { timeout: '10s', cells: ['auto', 'required', 'required/nonstream', 'named'] }),
    );
    expect(cells(r!)).toEqual({
      auto: 'ok',
      required: 'bad_response',
      'required/nonstream': 'bad_response',
      named: 'ok',
    });
    expect(r!.result).toBe('bad_response');
    expect(r!.error).toContain('required: bad_response (finish_reason "length" without a tool call)');
  });

  it('grammar_stall: structured output hangs before its first token while chat passes; disabling releases it', async () => {
    sim = await startSim({ faults: ['grammar_stall'] });
    const [chat] = await runs(sim.urls.router, probe('chat', { timeout: '5s' }));
    expect(chat!.result).toBe('ok');
    const [json] = await runs(sim.urls.router, probe('structured', { timeout: '1s' }));
    expect(json).toMatchObject({ result: 'timeout', phase: 'headers' });
    sim.disableFault('grammar_stall');
    const [again] = await runs(sim.urls.router, probe('structured', { timeout: '5s' }));
    expect(again!.result).toBe('ok');
  });
});
