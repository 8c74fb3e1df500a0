// Acceptance against the simulator, scaled down: a healthy deployment passes every step, and each fault makes
// the step built to catch it fail with the figures that show why.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { runVerify, type VerifyOptions } from '../../src/verify/runner.js';
import { makeTarget } from '../../src/verify/target.js';
import { FAST, KNOBS } from '../helpers/verify-sim.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

function opts(s: Sim, extra: Partial<VerifyOptions> = {}): VerifyOptions {
  return {
    target: makeTarget(s.urls.router, 'sim-model'),
    metricsUrl: `${s.urls.decode}/metrics`,
    logs: [s.logFiles.prefill, s.logFiles.decode],
    knobs: KNOBS,
    // 4 trials a level: the fewest with a 95 % interval, keeping the runs short.
    repeat: 4,
    ...extra,
  };
}

describe('verify against the simulator', () => {
  it('passes every step on a healthy deployment, saves a baseline, and fails the baseline check at slow x4', async () => {
    sim = await startSim({ model: FAST });
    const dir = mkdtempSync(join(tmpdir(), 'ww-verify-'));
    const save = join(dir, 'baseline.json');
    const progress: string[] = [];
    const report = await runVerify(opts(sim, { savePath: save, progress: (l) => progress.push(l) }));
    const bad = report.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.summary}`);
    expect(bad).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.verdict).toBe('PASS');
    expect(report.steps.map((s) => s.step)).toEqual([
      'liveness',
      'throughput',
      'long-context',
      'conversation',
      'batching',
      'correctness',
      'abort-cascade',
      'toolcall',
    ]);
    const tp = report.steps.find((s) => s.step === 'throughput')!;
    expect(tp.details[1]).toMatch(
      /^C=8 {2}n=16 {2}max_tokens=24 \| agg=[\d.]+ tok\/s \| per-req=[\d.]+ tok\/s \| p50 lat=[\d.]+s \| p99 lat=[\d.]+s \| ttft p50=[\d.]+s p99=[\d.]+s \| tpot p50=[\d.]+ms p99=[\d.]+ms \| itl p50=[\d.]+ms p99=[\d.]+ms \| toks=1536 errs=0 wall=[\d.]+s \(median of 4 trials\)$/,
    );
    expect(tp.details[2]).toMatch(/^no knee/);
    const levels = (tp.data as { levels: { trials: unknown[]; warmup: { tokens: number } }[] }).levels;
    expect(levels.map((l) => l.trials.length)).toEqual([4, 4]);
    expect(levels[1]!.warmup.tokens).toBe(16 * 24);
    // long-context took its length from the simulator's max_model_len (32768): 90 %, less max_tokens.
    const lc = report.steps.find((s) => s.step === 'long-context')!;
    expect((lc.data as { tokens: number }).tokens).toBe(Math.floor(32_768 * 0.9) - 8);
    const conv = report.steps.find((s) => s.step === 'conversation')!;
    const rounds = (conv.data as { rounds: { contextTokens: number; completed: number }[] }).rounds;
    expect(rounds.map((r) => r.completed)).toEqual([3, 3, 3, 3]);
    // The context grows round by round (the server's usage.prompt_tokens).
    expect(rounds[3]!.contextTokens).toBeGreaterThan(rounds[0]!.contextTokens * 3);
    const batching = report.steps.find((s) => s.step === 'batching')!;
    expect((batching.data as { verdict: string }).verdict).toBe('batched');
    expect((batching.data as { peak: { batchPeak: number } }).peak.batchPeak).toBeGreaterThanOrEqual(12);
    expect(batching.summary).toContain("judged on the engine's running batch, not wall time");
    // Progress: a line per completed sub-phase, with elapsed time; every step's result line has its duration.
    expect(progress.some((l) => /^\[\s*[\d.]+s\] throughput: C=1 {2}n=3/.test(l))).toBe(true);
    expect(progress.some((l) => /^\[\s*[\d.]+s\] throughput: C=8 warm-up: agg=/.test(l))).toBe(true);
    for (const s of report.steps)
      expect(progress.some((l) => new RegExp(`\\] ${s.step}: PASS in [\\d.]+s — `).test(l))).toBe(true);
    const saved = JSON.parse(readFileSync(save, 'utf8')) as {
      version: number;
      steps: { step: string; figures: Record<string, { trials?: number[] }> }[];
    };
    expect(saved.version).toBe(2);
    const figs = saved.steps.find((s) => s.step === 'throughput')!.figures;
    expect(Object.keys(figs)).toContain('c8.agg_tok_s');
    expect(figs['c8.agg_tok_s']!.trials).toHaveLength(4);

    // Same deployment, steps four times as slow: throughput still completes, the comparison says REGRESSION. At
    // twice as slow a loaded host (4 busy loops) read INCONCLUSIVE once, rightly: the sim's late timers dilute the
    // slowdown of a wall-clock figure and widen its trials' spread until the interval straddles the bound.
    sim.enableFault('slow', { factor: 4 });
    const slow = await runVerify(opts(sim, { steps: ['throughput'], baselinePath: save }));
    expect(slow.steps[0]!.ok).toBe(true);
    // The figures with the verdict, should it ever straddle the bound again.
    expect(slow.baseline?.verdict, JSON.stringify(slow.baseline?.figures)).toBe('REGRESSION');
    expect(slow.verdict).toBe('FAIL');
    expect(slow.ok).toBe(false);
    const agg = slow.baseline!.figures.find((d) => d.key === 'throughput.c8.agg_tok_s')!;
    expect(agg.verdict).toBe('REGRESSION');
    expect(agg.ratio).toBeLessThan(0.75);
    expect(agg.hi).toBeLessThan(0.9);
  });

  it('context_ttft_growth: conversation fails naming the round; the other load steps pass', async () => {
    sim = await startSim({
      model: FAST,
      faults: [{ name: 'context_ttft_growth', params: { ms_per_ktok: 300 } }],
    });
    const report = await runVerify(
      opts(sim, { steps: ['liveness', 'throughput', 'long-context', 'conversation'] }),
    );
    const byName = Object.fromEntries(report.steps.map((s) => [s.step, s]));
    expect(byName.liveness!.ok).toBe(true);
    expect(byName.throughput!.ok).toBe(true);
    // long-context's requests are slower on their reused connection, but it judges errors, not growth.
    expect(byName['long-context']!.ok).toBe(true);
    const conv = byName.conversation!;
    expect(conv.ok).toBe(false);
    // Each round adds ~500 tokens, +150 ms of TTFT at 300 ms per 1k: by round 3 or 4 past 3x round 1 + 250 ms
    // (which round depends on round 1's own TTFT on a loaded host; the one named is the first past the bound).
    const m =
      /^TTFT grows with the context: round (\d) median [\d.]+s > bound [\d.]+s \(3x round 1 \+ 0\.25s\) at ~\d+ tokens$/.exec(
        conv.summary,
      );
    expect(m, conv.summary).not.toBeNull();
    const { rounds, growth } = conv.data as {
      rounds: { round: number; ttftP50Ms: number }[];
      growth: { round: { round: number }; boundMs: number };
    };
    const named = Number(m![1]);
    expect(growth.round.round).toBe(named);
    expect(named).toBeGreaterThan(1);
    expect(rounds.filter((r) => r.round < named).every((r) => r.ttftP50Ms <= growth.boundMs)).toBe(true);
    expect(rounds[named - 1]!.ttftP50Ms).toBeGreaterThan(growth.boundMs);
    expect(report.verdict).toBe('FAIL');
  });

  it('a conversation round that hangs fails the step with the round named', async () => {
    sim = await startSim({
      model: FAST,
      faults: [{ name: 'context_ttft_growth', params: { ms_per_ktok: 0, hang_ktok: 1.8 } }],
    });
    const report = await runVerify(
      opts(sim, {
        steps: ['conversation'],
        knobs: { conversation: { ...KNOBS.conversation, sessions: 2, timeoutMs: 1_500 } },
      }),
    );
    const conv = report.steps[0]!;
    expect(conv.ok).toBe(false);
    // Each round adds ~500 of the simulator's tokens (chars/4): round 4, ~2k, is the first past 1.8k on a reused connection.
    expect(conv.summary).toMatch(
      /^round 4 failed \(session [12]: no \[DONE\] within 1\.5s \(0 token chunks, no headers\)\); 2 sessions failed$/,
    );
    expect(conv.details).toContain(conv.details.find((d) => /^session 1 round 4: no \[DONE\]/.test(d)));
  });

  it('abort-cascade fails when an abort kills the NIXL bootstrap thread, naming the traceback', async () => {
    sim = await startSim({ model: FAST, faults: ['nixl_abort_unhandled'], waitingTimeoutMs: 1_500 });
    const report = await runVerify(opts(sim, { steps: ['abort-cascade'] }));
    const step = report.steps[0]!;
    expect(report.ok).toBe(false);
    expect(step.ok).toBe(false);
    expect(step.summary).toMatch(/liveness probes failed after the cut/);
    expect(step.summary).toContain('Exception in thread Thread-1 (bootstrap_thread):');
    expect(step.summary).toContain(
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    );
    expect(step.details).toContain('traceback found:');
    expect(step.details.some((d) => d.includes('nixl/conn.py') && d.includes('in bootstrap_thread'))).toBe(
      true,
    );
  });

  it('toolcall fails with the leak count when tool calls come back as DSML markup', async () => {
    sim = await startSim({ model: FAST, faults: ['toolcall_leak'] });
    const report = await runVerify(opts(sim, { steps: ['toolcall'] }));
    const step = report.steps[0]!;
    expect(step.ok).toBe(false);
    expect(step.data).toMatchObject({
      turns: 12,
      leaks: 12,
      markup: 12,
      missingToolCalls: 12,
      invalidJson: 0,
      errors: 0,
    });
    expect(step.summary).toMatch(/^leaks=12 of 12 turns/);
    expect(step.details.join('\n')).toContain('｜DSML｜');
  });

  it('batching says serialized when the engine runs one request at a time', async () => {
    sim = await startSim({ model: { ...FAST, maxRunning: 1 } });
    const report = await runVerify(
      opts(sim, {
        steps: ['batching'],
        knobs: { batching: { n: 8, maxTokens: 16, timeoutMs: 10_000, sampleIntervalMs: 20 } },
      }),
    );
    const step = report.steps[0]!;
    expect(step.ok).toBe(false);
    expect(step.summary).toMatch(/^serialized: peak running [01]\/8/);
    // Judged on the engine's running batch (sglang:num_running_reqs, Decode batch lines), not on wall time.
    expect(
      step.details.some((d) => /^serialized because peak running in the engine's batch [01] < 6 /.test(d)),
    ).toBe(true);
    expect(step.summary).toContain("judged on the engine's running batch, not wall time");
  });

  it('batching fails instead of judging on wall time when no running count can be sampled', async () => {
    sim = await startSim({ model: FAST });
    const knobs = { batching: { n: 4, maxTokens: 8, timeoutMs: 10_000, sampleIntervalMs: 20 } };
    const none = await runVerify(opts(sim, { steps: ['batching'], knobs, metricsUrl: undefined, logs: [] }));
    expect(none.steps[0]!.ok).toBe(false);
    expect(none.steps[0]!.summary).toBe('no running-count source (give --metrics-url or --log)');

    const missing = await runVerify(
      opts(sim, { steps: ['batching'], knobs, metricsUrl: `${sim.urls.decode}/no-metrics-here`, logs: [] }),
    );
    const step = missing.steps[0]!;
    expect(step.ok).toBe(false);
    expect((step.data as { verdict: string }).verdict).toBe('not sampled');
    expect(step.summary).toContain('/no-metrics-here: HTTP 404');
  });

  it('liveness with n=1 still tests a reused connection (keepalive_stall fails the reused round)', async () => {
    sim = await startSim({ model: FAST, faults: ['keepalive_stall'] });
    const report = await runVerify(
      opts(sim, {
        target: makeTarget(sim.urls.proxy!, 'sim-model'),
        steps: ['liveness'],
        knobs: { liveness: { n: 1, timeoutMs: 1_000, maxTokens: 4 } },
      }),
    );
    const step = report.steps[0]!;
    expect(step.ok).toBe(false);
    expect(step.summary).toMatch(/fresh 1\/1, reused 0\/1/);
    expect(step.details[1]).toMatch(/^reused: 0\/1 completed; first failure: no \[DONE\] within 1\.0s/);
  });

  it('checks --save before any traffic, and keeps the report with a warning when the write still fails', async () => {
    sim = await startSim({ model: FAST });
    const liveness = { liveness: { n: 1, timeoutMs: 5_000, maxTokens: 4 } };
    const progress: string[] = [];
    await expect(
      runVerify(
        opts(sim, {
          steps: ['liveness'],
          savePath: join(tmpdir(), 'ww-no-such-dir', 'x', 'r.json'),
          progress: (l) => progress.push(l),
        }),
      ),
    ).rejects.toThrow(/^--save: cannot write .*r\.json: .*ENOENT/);
    expect(progress).toEqual([]);

    // The directory disappears while the steps run: the report survives, the save failure fails the run.
    const dir = mkdtempSync(join(tmpdir(), 'ww-verify-save-'));
    const report = await runVerify(
      opts(sim, {
        steps: ['liveness'],
        knobs: liveness,
        savePath: join(dir, 'r.json'),
        progress: (l) => {
          if (l.includes('liveness: started')) rmSync(dir, { recursive: true });
        },
      }),
    );
    expect(report.steps[0]!.ok).toBe(true);
    expect(report.ok).toBe(false);
    expect(report.savedTo).toBeUndefined();
    expect(report.warnings.join('\n')).toMatch(/^could not save results to .*r\.json: ENOENT/);
  });

  it('abort-cascade counts sessions still waiting for a first token at the cut as never-streamed', async () => {
    sim = await startSim({ model: { ...FAST, maxRunning: 1 } });
    const report = await runVerify(
      opts(sim, {
        steps: ['abort-cascade'],
        knobs: {
          'abort-cascade': { ...KNOBS['abort-cascade'], sessions: 3, afterMs: 300, settleMs: 50 },
        },
      }),
    );
    const data = report.steps[0]!.data as { midStream: number; finishedEarly: number; neverStreamed: number };
    expect(data).toMatchObject({ midStream: 1, finishedEarly: 0, neverStreamed: 2 });
    expect(report.steps[0]!.details[0]).toMatch(/mid-stream=1 finished-early=0 never-streamed=2$/);
  });
});
