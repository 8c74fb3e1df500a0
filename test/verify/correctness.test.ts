// verify's correctness step against the simulator: a healthy deployment answers every question right at C=1
// and C=32 and passes every tool-call matrix cell; kv_corruption fails the gate and quotes the wrong answer;
// its mix-up mode is named as such; a tool-call fault fails the cell it breaks.
import { afterEach, describe, expect, it } from 'vitest';
import { startSim, type Sim, type SimOptions } from '../../src/sim/index.js';
import { runVerify } from '../../src/verify/runner.js';
import { makeTarget } from '../../src/verify/target.js';
import { judgeBatch, type LevelCount } from '../../src/verify/correctness.js';
import type { ProbeResultSignal } from '../../src/core/signals.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const FAST: SimOptions['model'] = { stepBaseMs: 4, stepPerReqMs: 0.02, prefillMs: 1, maxRunning: 64 };

async function correctness(s: Sim, knobs: Record<string, unknown> = {}) {
  const progress: string[] = [];
  const report = await runVerify({
    target: makeTarget(s.urls.router, 'sim-model'),
    steps: ['correctness'],
    knobs: { correctness: { timeoutMs: 10_000, ...knobs } },
    progress: (l) => progress.push(l),
  });
  return { report, step: report.steps[0]!, progress };
}

type Data = { levels: LevelCount[]; cells: { cell: string; result: string; error?: string }[] };

describe('verify correctness against the simulator', () => {
  it('passes on a healthy deployment: 4 questions at C=1, 32 at once, 8 matrix cells', async () => {
    sim = await startSim({ model: FAST });
    const { report, step, progress } = await correctness(sim);
    expect(step.summary).toBe('wrong=0 of 36 questions, errors=0; tool matrix: 8/8 cells pass');
    expect(step.ok).toBe(true);
    expect(report.ok).toBe(true);
    const data = step.data as Data;
    expect(data.levels).toEqual([
      { level: 'C=1', asked: 4, right: 4, wrong: 0, mixups: 0, errors: 0 },
      { level: 'C=32', asked: 32, right: 32, wrong: 0, mixups: 0, errors: 0 },
    ]);
    expect(data.cells.map((c) => `${c.cell}:${c.result}`)).toEqual([
      'auto:ok',
      'auto/nonstream:ok',
      'required:ok',
      'named:ok',
      'none:ok',
      'parallel:ok',
      'second_turn:ok',
      'large_args:ok',
    ]);
    expect(progress.some((l) => /correctness: C=32: 32\/32 right/.test(l))).toBe(true);
  });

  it('kv_corruption fails the gate and quotes question, expected and actual answer', async () => {
    sim = await startSim({ model: FAST, faults: ['kv_corruption'] });
    const { report, step } = await correctness(sim, { n: 2, concurrency: 8 });
    expect(report.ok).toBe(false);
    expect(step.ok).toBe(false);
    expect(step.summary).toMatch(
      /^wrong=10 of 10 questions, errors=0 \(none right alone or at once: a model that cannot answer these \(random or very small weights\) fails here whatever the server does, as does a server that garbles every answer\); tool matrix: 8\/8 cells pass; C=1: wrong answer to /,
    );
    const quote = step.details.find((d) => d.startsWith('C=1: wrong answer to '))!;
    const m = /^C=1: wrong answer to "(.+)": expected "(.+)", got "(.+)"$/.exec(quote);
    expect(m).not.toBeNull();
    const [, question, expected, actual] = m!;
    expect(question).toMatch(/^(What is \d{4} \+ \d{4}\? Reply with the number only\.|Repeat exactly: \S+)$/);
    // One character off: plausible and wrong.
    expect(actual).not.toBe(expected);
    expect(actual!.length).toBe(expected!.length);
    expect(step.details).toContain('C=8: 0/8 right, wrong=8, errors=0');
  });

  it("kv_corruption mode=mixup at C=32: another request's answer is named a cross-request mix-up", async () => {
    sim = await startSim({ model: FAST, faults: [{ name: 'kv_corruption', params: { mode: 'mixup' } }] });
    const { step } = await correctness(sim, { n: 1 });
    expect(step.ok).toBe(false);
    const c32 = (step.data as Data).levels[1]!;
    expect(c32.wrong).toBeGreaterThan(0);
    expect(c32.mixups).toBeGreaterThan(0);
    expect(step.details.some((d) => /^C=32: wrong answer to .*cross-request mix-up\)$/.test(d))).toBe(true);
    // The summary quotes a mix-up before any other wrong answer: it names its cause.
    expect(step.summary).toMatch(/; C=32: wrong answer to .*cross-request mix-up\)$/);
  });

  it('toolcall_leak mode=required_ignored fails the required cell only, quoting why', async () => {
    sim = await startSim({
      model: FAST,
      faults: [{ name: 'toolcall_leak', params: { mode: 'required_ignored' } }],
    });
    const { step } = await correctness(sim, { n: 1, concurrency: 2 });
    expect(step.ok).toBe(false);
    const failed = (step.data as Data).cells.filter((c) => c.result !== 'ok');
    expect(failed.map((c) => c.cell)).toEqual(['required']);
    expect(step.summary).toMatch(
      /wrong=0 of 3 questions, errors=0; tool matrix: 7\/8 cells pass; tool matrix required: bad_response \(finish_reason "length" without a tool call\)/,
    );
  });
});

describe('judgeBatch', () => {
  const run = (
    answers: { expected: string; actual: string; ok: boolean }[],
    result = 'ok',
  ): ProbeResultSignal => ({
    kind: 'probe',
    target: 't',
    probe: 'p',
    probeKind: 'canary',
    endpoint: 'e',
    conn: 'fresh',
    result: result as ProbeResultSignal['result'],
    start: 0,
    durationMs: 1,
    detail: { answers: answers.map((a) => ({ question: `q ${a.expected}`, ...a })) },
  });

  it('names a wrong answer that is another question of the batch a mix-up, and counts errors apart', () => {
    const { count, quotes } = judgeBatch('C=4', [
      run([{ expected: '7748', actual: '7748', ok: true }]),
      run([{ expected: '9120', actual: 'The answer is 7,748.', ok: false }], 'wrong_output'),
      run([{ expected: 'QX7-19AF', actual: 'QX7-19AE', ok: false }], 'wrong_output'),
      { ...run([]), result: 'timeout', error: 'no first token within 100 ms' },
    ]);
    expect(count).toEqual({ level: 'C=4', asked: 4, right: 1, wrong: 2, mixups: 1, errors: 1 });
    expect(quotes).toEqual([
      'C=4: wrong answer to "q 9120": expected "9120", got "The answer is 7,748." (the answer of another request running at the same time: cross-request mix-up)',
      'C=4: wrong answer to "q QX7-19AF": expected "QX7-19AF", got "QX7-19AE"',
      'C=4: timeout: no first token within 100 ms',
    ]);
  });
});
