// Issue 24 finding 3: SIGTERM cut the completion probes in flight, and with nixl_abort_unhandled (a NIXL build
// whose prefill does not handle ABORT) that cut killed prefill's bootstrap thread: one `kill -TERM` of the daemon
// left `bootstrapThreadAlive: false` and `Aborted by AbortReq` lines for wedgewatch-… ids. A stop now drains.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startSim, type Sim } from '../../src/sim/index.js';
import { startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A sim whose completions take seconds (slow ×40: ~0.4 s a decode step) with the unguarded ABORT armed. */
async function slowNixlSim(): Promise<Sim> {
  const sim = await startSim({ faults: ['nixl_abort_unhandled', { name: 'slow', params: { factor: 40 } }] });
  cleanup.push(() => sim.stop());
  return sim;
}

function daemonConfig(sim: Sim): string {
  const dir = mkdtempSync(join(tmpdir(), 'ww-stop-drain-'));
  const file = join(dir, 'wedgewatch.yaml');
  // One chat round at start (every 1h), streaming 8 tokens: in flight for seconds on the slow sim.
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: pd
    model: default
    endpoints: [{ name: router, url: "${sim.urls.router}" }]
    probes: [{ name: chat, kind: chat, every: 1h, jitter: 0, timeout: 30s, conn: [fresh] }]
`,
  );
  return file;
}

function abortLines(sim: Sim): string[] {
  return Object.values(sim.logFiles)
    .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
    .filter((l) => l.includes('Aborted by AbortReq') || (l.includes('wedgewatch-') && /abort/i.test(l)));
}

it('SIGTERM with a slow completion in flight: no abort reaches the engine, the daemon exits 0 after it finished', async () => {
  const sim = await slowNixlSim();
  const { child, out, exited } = startCli(['run', '--config', daemonConfig(sim)]);
  cleanup.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await waitFor(() => sim.state().running > 0, {
    timeoutMs: 20_000,
    what: () => `the chat probe to be running on the sim\n${out.stderr.slice(-2000)}`,
  });
  const finishedBefore = sim.state().finishedTotal;
  child.kill('SIGTERM');
  const code = await exited;

  // The engine saw no disconnect: the thread lives, no abort was logged, and the completion ran to its end (had
  // the daemon gone first, its socket's close would have been the abort).
  expect(sim.state().bootstrapThreadAlive).toBe(true);
  expect(sim.events().filter((e) => e.kind === 'abort' || e.kind === 'thread_death')).toEqual([]);
  expect(abortLines(sim)).toEqual([]);
  expect(sim.state().finishedTotal).toBe(finishedBefore + 1);
  expect(out.stderr).not.toContain('shutdown deadline passed');
  expect(out.stderr).toContain('letting probes in flight finish');
  expect(code).toBe(0);
}, 60_000);

it('a second SIGTERM while draining cuts the probe in flight and still exits cleanly (the documented force-stop)', async () => {
  const sim = await slowNixlSim();
  const { child, out, exited } = startCli(['run', '--config', daemonConfig(sim)]);
  cleanup.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await waitFor(() => sim.state().running > 0, {
    timeoutMs: 20_000,
    what: () => `the chat probe to be running on the sim\n${out.stderr.slice(-2000)}`,
  });
  const finishedBefore = sim.state().finishedTotal;
  child.kill('SIGTERM');
  await waitFor(() => out.stderr.includes('letting probes in flight finish'), { what: 'the drain to start' });
  child.kill('SIGTERM');
  const code = await exited;
  expect(out.stderr).toContain('second stop signal: cutting probes in flight');
  expect(code).toBe(0);
  // Cut, as asked: the completion did not finish (the abort it causes is the operator's choice here).
  expect(sim.state().finishedTotal).toBe(finishedBefore);
}, 60_000);
