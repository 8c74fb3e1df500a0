// The real-engine lane (issue 38): upstream llama.cpp's llama-server (scripts/real-llama/fixture.mjs builds it)
// watched by the daemon with examples/llamacpp.yaml's probes at the example's cadence, then given real faults:
// a freeze (SIGSTOP), a death (kill -9). The bounds are the issue's bars where the bench met them with margin under a
// load of 14-19 (2026-12-07), looser where it did not (the machine is shared, real time at the example cadence; CI
// runs beside two busy loops, and a flaky lane is worse than a loose one); bench/real-llama.mjs measures the figures.
// Run: npm run test:real (after `npm run build`; a cold fixture cache fails here, naming the command that warms it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleConfig,
  requireFixture,
  startDaemon,
  startLlama,
  waitFor,
  type LlamaServer,
} from '../../scripts/real-llama/harness.mjs';

type Daemon = Awaited<ReturnType<typeof startDaemon>>;
interface Slot {
  probe: string;
  probeKind: string;
  endpoint: string;
  conn: string;
  result: string;
  start: number;
  error?: string;
}
interface Status {
  state: string;
  diagnosis: string | null;
  cause: string;
  probes: Slot[];
}

const SECOND = 1000;
let llama: LlamaServer;
let daemon: Daemon;

async function status(): Promise<Status> {
  return (await daemon.status()) as Status;
}

/** What the target says now, for failure messages. */
async function describeNow(): Promise<string> {
  const s = await status().catch((err: Error) => ({
    state: '?',
    diagnosis: null,
    cause: err.message,
    probes: [],
  }));
  const slots = s.probes
    .map((p) => `${p.probe}/${p.conn}=${p.result}${p.error ? ` (${p.error})` : ''}`)
    .join(', ');
  return `${s.state}/${s.diagnosis}: ${s.cause}; slots: ${slots}`;
}

describe.sequential('upstream llama-server under the example config', () => {
  beforeAll(async () => {
    requireFixture(); // throws, with the warm command, when the cache is cold
    llama = await startLlama();
    daemon = await startDaemon({
      configText: exampleConfig({
        url: llama.url,
        logFile: llama.logFile,
        stateDir: `${llama.dir}/state`,
      }),
    });
  });

  afterAll(async () => {
    await daemon?.stop();
    await llama?.cleanup();
  });

  it('a healthy server reaches ok and stays ok for a minute, the tool-call matrix passing', async () => {
    await waitFor(async () => (await status()).state === 'ok', 180 * SECOND, describeNow, 1000);
    // The tool-call matrix runs every 5 m: its first run, from the start, must have passed.
    const tools = await waitFor(
      async () => (await status()).probes.find((p) => p.probeKind === 'toolcall' && p.result !== undefined),
      180 * SECOND,
      () => 'a tool-call matrix result',
      1000,
    );
    expect(tools.result, `the tool-call matrix: ${tools.error}`).toBe('ok');
    const until = Date.now() + 60 * SECOND;
    while (Date.now() < until) {
      const s = await status();
      expect(s.state, await describeNow()).toBe('ok');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });

  it('SIGSTOP: not ok while frozen, ok again after SIGCONT', async () => {
    llama.signal('SIGSTOP');
    // The issue asks 30 s; the bench measured 27 s at load 17-18 (20-22 s at 11-13): 45 s.
    try {
      await waitFor(async () => (await status()).state !== 'ok', 45 * SECOND, describeNow, 500);
    } finally {
      llama.signal('SIGCONT');
    }
    const frozen = await status();
    expect(['wedged', 'degraded', 'down']).toContain(frozen.state);
    // The issue's 60 s: the bench measured 27 s after SIGCONT at load 17.
    await waitFor(async () => (await status()).state === 'ok', 60 * SECOND, describeNow, 1000);
  });

  it('kill -9: down, then ok after a restart on the same port', async () => {
    await llama.kill9();
    // A refused slot is rechecked 3 s later (schedule.ts REFUSED_RECHECK_MS): down within one /health round (10 s,
    // jitter 10 %) + 3 s; the bench measured 11.0 and 13.0 s. The issue asks 15 s; 20 s leaves room for a loaded host.
    await waitFor(async () => (await status()).state === 'down', 20 * SECOND, describeNow, 500);
    await llama.restart();
    // The issue's 60 s: the bench measured 14.6-18.1 s at load 4-10 (a slot in retry backoff reruns as soon as a
    // chat passes again; before that, 58 s when the tool-call matrix had failed inside the outage).
    await waitFor(async () => (await status()).state === 'ok', 60 * SECOND, describeNow, 1000);
  });
});
