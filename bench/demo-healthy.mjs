// @ts-check
// The demo's healthy phase for a long stretch (default 10 minutes): the simulator as `wedgewatch demo` starts it
// (proxy hop, 15 s PD timeouts) and the demo's own watchdog config, with no incident replayed. Prints the
// transitions and diagnosis changes after the first `ok` (the acceptance is zero of each: no intermittent, no
// queue_leak, no slow). Usage: npm run bench:demo-healthy [-- --minutes 10]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';

const dist = process.env.WEDGEWATCH_DIST ?? new URL('../dist/', import.meta.url).pathname;
const { parseConfigText } = await import(join(dist, 'config/load.js'));
const { createMetrics } = await import(join(dist, 'metrics.js'));
const { createRuntime } = await import(join(dist, 'runtime.js'));
const { startSim } = await import(join(dist, 'sim/index.js'));
const { demoConfig } = await import(join(dist, 'sim/demo-config.js'));

const { values: args } = parseArgs({ options: { minutes: { type: 'string', default: '10' } } });
const MINUTES = Number(args.minutes);

const sim = await startSim({ proxy: true, waitingTimeoutMs: 15_000, bootstrapTimeoutMs: 15_000 });
const dir = mkdtempSync(join(tmpdir(), 'ww-bench-demo-healthy-'));
const text = demoConfig(sim, {
  stateDir: join(dir, 'state'),
  listenAddress: '127.0.0.1:0',
  nodePath: process.execPath,
});
const runtime = await createRuntime(parseConfigText(text, join(dir, 'c.yaml'), {}), {
  metrics: createMetrics({ defaults: false }),
  logger: pino({ level: 'silent' }),
});
const wd = [...runtime.watchdog.targets.values()][0];
const journal = runtime.watchdog.journal;
try {
  const deadline = Date.now() + 120_000;
  while (wd.state.state !== 'ok') {
    if (Date.now() > deadline) throw new Error(`never ok (now ${wd.state.state}: ${wd.state.cause})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const okAt = Date.now();
  const seq = journal.query({ target: wd.name }).at(-1)?.seq ?? 0;
  await new Promise((r) => setTimeout(r, MINUTES * 60_000));
  const after = journal.query({ target: wd.name, afterSeq: seq, limit: 100_000 });
  /** @typedef {{ type: string, summary: string, data?: unknown }} JournalEntry */
  const of = (/** @type {string} */ type) => after.filter((/** @type {JournalEntry} */ e) => e.type === type);
  const finished = sim.state().finishedTotal;
  console.log(`demo healthy phase: ${MINUTES} min after the first ok (${new Date(okAt).toISOString()})`);
  console.log(`state now: ${wd.state.state}; completions the simulator finished: ${finished}`);
  for (const type of ['transition', 'diagnosis', 'probe_failing', 'critical_log', 'engine_stalled']) {
    const evs = of(type);
    console.log(
      `${type.padEnd(16)} ${evs.length}${evs.length ? `: ${evs.map((/** @type {JournalEntry} */ e) => e.summary).join(' | ')}` : ''}`,
    );
  }
  const named = (/** @type {string} */ d) =>
    after.filter((/** @type {JournalEntry} */ e) => JSON.stringify(e.data ?? {}).includes(d)).length;
  console.log(
    `intermittent ${named('intermittent')}, queue_leak ${named('queue_leak')}, slow ${named('"slow"')}`,
  );
} finally {
  await runtime.stop();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
