// `wedgewatch verify` against upstream llama-server (issue 38): every step a random-weight model can pass, passes.
// correctness and toolcall need a model that understands (docs/real-engines.md); throughput and abort-cascade pass
// too but take a minute between them, so the lane runs the steps the server's shape decides: a connection closed
// after each streamed response (liveness), the context the server reports (long-context, conversation), its slot
// count (conversation, batching) and its decode steps (batching).
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALIAS, CLI, startLlama, type LlamaServer } from '../../scripts/real-llama/harness.mjs';

interface StepReport {
  step: string;
  ok: boolean;
  summary: string;
  data?: Record<string, unknown>;
}

let llama: LlamaServer;

function verify(args: string[]): Promise<{ code: number; steps: StepReport[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, 'verify', '--url', llama.url, '--model', ALIAS, '--json', ...args],
      { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        try {
          const report = JSON.parse(stdout) as { steps: StepReport[] };
          resolve({ code, steps: report.steps, stderr });
        } catch {
          reject(new Error(`verify printed no JSON report (exit ${code}): ${stderr.slice(-2000)}`));
        }
      },
    );
  });
}

describe('wedgewatch verify against upstream llama-server', () => {
  beforeAll(async () => {
    llama = await startLlama();
  });
  afterAll(async () => {
    await llama?.cleanup();
  });

  it('passes liveness, long-context, conversation and batching, sized from what the server reports', async () => {
    // Twice: the second run meets the first's conversations in the server's prompt cache (round 1 was a cache
    // hit and the TTFT bound 3x a hit, before each run opened with its own text).
    for (let run = 1; run <= 2; run++) {
      const r = await verify([
        '--metrics-url',
        `${llama.url}/metrics`,
        '--steps',
        'liveness,long-context,conversation,batching',
        '--repeat',
        '2',
        // A floor of 1 s instead of 250 ms: under .ci/run with two busy loops and another llama-server beside it
        // (load ~10), round 6 of 2,579 tokens read 0.80 s against round 1's 0.11 s on this CPU server (bound 0.58 s).
        // The lane checks that the step runs and passes on the server's shape; its bound is measured in docs.
        '--conversation.ttft-floor',
        '1s',
      ]);
      const failed = r.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.summary}`);
      expect(failed, `run ${run}: ${r.stderr.slice(-1500)}`).toEqual([]);
      expect(r.code).toBe(0);
      const conv = r.steps.find((s) => s.step === 'conversation')!;
      // --parallel 2: two sessions, none waiting behind another for a slot.
      expect(conv.data?.sessions).toMatchObject({ n: 2 });
      const batching = r.steps.find((s) => s.step === 'batching')!;
      expect(batching.data).toMatchObject({ verdict: 'batched', n: 2 });
    }
  });
});
