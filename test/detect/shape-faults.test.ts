// The daemon against the simulator with the probes shaped like the traffic that breaks (issue 28): each new
// simulator fault is found by the probe built for it and named with its diagnosis, while the other probes pass.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startHarness, type Harness } from './sim-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const probe = (name: string, kind: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind,
  every: '2s',
  timeout: '1s',
  jitter: 0,
  endpoints: ['router'],
  conn: ['fresh'],
  ...extra,
});
const PROBES = {
  probes: [
    probe('chat', 'chat', { maxTokens: 2, conn: ['fresh', 'keepalive'] }),
    probe('canary', 'canary'),
    probe('long', 'longinput', { promptTokens: 6000 }),
    probe('talk', 'conversation', { rounds: 3, roundTokens: 64, conn: ['keepalive'] }),
    // Eight requests a run, the large note among them: the timeout bounds the whole matrix.
    probe('tools', 'toolcall', { every: '3s', timeout: '2500ms' }),
  ],
};

/** The last error of a slot (the probe's own words, which the cause quotes). */
const lastError = (slot: string) => h!.wd.state.slots[slot]?.last?.error ?? '';

describe('probe-shape faults against the simulator', () => {
  it('long_prompt_hang → degraded/long_context_failing naming the length, while chat passes; off → ok', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    const from = h.transitions.length;
    h.sim.enableFault('long_prompt_hang', { above: 4096 });
    await h.waitState('degraded', { diagnosis: 'long_context_failing', timeoutMs: 15_000 });
    expect(h.wd.state.cause).toMatch(
      /^long on router\/fresh: timeout .*6000-token prompts fail while .* passes$/,
    );
    expect(lastError('long|router|fresh')).toContain('a 6000-token prompt');
    // From the fault on: a start on a loaded machine can show a wedge of its own before the first healthy round.
    expect(h.transitions.slice(from).some((t) => t.to === 'wedged')).toBe(false);
    h.sim.disableFault('long_prompt_hang');
    await h.waitState('ok', { timeoutMs: 15_000 });
  });

  it('toolcall_args_corrupt → degraded/wrong_output from the large_args cell; the short calls pass', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    h.sim.enableFault('toolcall_args_corrupt');
    await h.waitState('degraded', { diagnosis: 'wrong_output', timeoutMs: 15_000 });
    expect(h.wd.state.cause).toMatch(/^tools on router\/fresh: tool-call matrix: large_args: wrong_output/);
    // Only the streamed large call is hit: no other cell failed.
    expect(h.wd.state.cause).not.toMatch(/(?:auto|required|named|none|parallel|second_turn): /);
    h.sim.disableFault('toolcall_args_corrupt');
    // Wrong answers hold until 40 clean ones in a row (issue 26 item 3): one clean matrix does not end it.
    const wd = h.wd;
    const runs = wd.state.slots['tools|router|fresh']!.okStreak;
    await waitFor(() => wd.state.slots['tools|router|fresh']!.okStreak > runs, {
      timeoutMs: 15_000,
      what: 'a clean matrix',
    });
    expect(h.wd.state.diagnosis).toBe('wrong_output');
  });

  it('a Gemma-4 leak (toolcall_leak family gemma4) → degraded/toolcall_leak, the family named', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    h.sim.enableFault('toolcall_leak', { family: 'gemma4' });
    await h.waitState('degraded', { diagnosis: 'toolcall_leak', timeoutMs: 15_000 });
    expect(lastError('tools|router|fresh')).toMatch(
      /auto: toolcall_leak \(gemma4 tool-call markup "<\|tool_call>" in content/,
    );
    h.sim.disableFault('toolcall_leak');
    await h.waitState('ok', { timeoutMs: 15_000 });
  });

  it('tool_choice none ignored (toolcall_leak mode none_ignored) → degraded/toolcall_leak from the none cell', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    h.sim.enableFault('toolcall_leak', { mode: 'none_ignored' });
    await h.waitState('degraded', { diagnosis: 'toolcall_leak', timeoutMs: 15_000 });
    expect(lastError('tools|router|fresh')).toBe(
      'tool-call matrix: none: toolcall_leak (tool_choice "none" answered with 1 tool call(s) (get_current_time))',
    );
    h.sim.disableFault('toolcall_leak');
    await h.waitState('ok', { timeoutMs: 15_000 });
  });

  it('garbage in reasoning with empty content → degraded/wrong_output quoting it, not "raise maxTokens"', async () => {
    h = await startHarness({}, PROBES);
    await h.waitHealthy();
    h.sim.enableFault('reasoning_garbage');
    await h.waitState('degraded', { diagnosis: 'wrong_output', timeoutMs: 15_000 });
    expect(h.wd.state.cause).toMatch(/in reasoning_content with empty content/);
    expect(h.wd.state.cause).not.toContain('raise maxTokens');
    h.sim.disableFault('reasoning_garbage');
    // Held until 40 clean answers in a row (issue 26 item 3), not ended by the first clean one.
    const wd = h.wd;
    const canary = Object.keys(wd.state.slots).find((k) => k.startsWith('canary|'))!;
    const runs = wd.state.slots[canary]!.okStreak;
    await waitFor(() => wd.state.slots[canary]!.okStreak > runs, {
      timeoutMs: 15_000,
      what: 'a clean canary',
    });
    expect(h.wd.state.diagnosis).toBe('wrong_output');
  });

  it('context_ttft_growth → degraded/conversation_stalls naming the round, while chat passes; off → ok', async () => {
    // The matrix would slow on its reused connection too (its cells share one): this target runs no matrix.
    h = await startHarness(
      {},
      {
        probes: [
          probe('chat', 'chat', { maxTokens: 2, conn: ['fresh', 'keepalive'] }),
          probe('canary', 'canary'),
          probe('talk', 'conversation', {
            every: '4s',
            timeout: '3500ms',
            rounds: 4,
            roundTokens: 256,
            ttftGrowth: 2,
            ttftGrowthFloor: '200ms',
            conn: ['keepalive'],
          }),
        ],
      },
    );
    await h.waitHealthy();
    h.sim.enableFault('context_ttft_growth', { ms_per_ktok: 1000 });
    await h.waitState('degraded', { diagnosis: 'conversation_stalls', timeoutMs: 20_000 });
    expect(h.wd.state.cause).toMatch(
      /^talk on router\/keepalive: bad_response \(round ([23]) of 4: time to first token \d+ ms, [\d.]+× round 1's \d+ ms .*\), \d+ in a row; the conversation stalls at round \1 of 4 on a keepalive connection while (?:chat|canary) on router\/fresh passes$/,
    );
    // The rounds' TTFT is exported: it grows round by round in the last run.
    const rounds = (
      await h.metrics.registry.getSingleMetric('wedgewatch_probe_round_ttft_seconds')!.get()
    ).values
      .filter((v) => v.labels.probe === 'talk')
      .sort((a, b) => Number(a.labels.round) - Number(b.labels.round))
      .map((v) => v.value);
    expect(rounds.length).toBeGreaterThanOrEqual(3);
    expect(rounds[2]!).toBeGreaterThan(rounds[0]! * 2);
    h.sim.disableFault('context_ttft_growth');
    await h.waitState('ok', { timeoutMs: 20_000 });
  });
});
