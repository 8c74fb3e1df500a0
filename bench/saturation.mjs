// @ts-check
// Busy is not wedged (issue 41 item 9, issue 38): the vLLM simulator with its batch capped at `--slots` (the
// `saturation` fault: --max-num-seqs) under `--streams` long streamed generations, each started again when it ends,
// `--unread` of them from clients that never read their stream, for `--minutes`, watched with examples/vllm.yaml's
// probes, cadence and thresholds and a dry-run remediation that may act 30 s into a wedge. Tokens flow and the
// queue stays full the whole time: the acceptance is 0 transitions to wedged and 0 remediations.
// Usage: npm run bench:saturation [-- --minutes 10 --streams 32 --slots 8 --unread 2 --tokens 3000]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { Buffer } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setInterval, clearInterval } from 'node:timers';
import pino from 'pino';
import { parse, stringify } from 'yaml';

const dist = process.env.WEDGEWATCH_DIST ?? new URL('../dist/', import.meta.url).pathname;
const { parseConfigText } = await import(join(dist, 'config/load.js'));
const { createMetrics } = await import(join(dist, 'metrics.js'));
const { createRuntime } = await import(join(dist, 'runtime.js'));
const { startVllmSim } = await import(join(dist, 'sim/vllm/index.js'));

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    streams: { type: 'string', default: '32' },
    slots: { type: 'string', default: '8' },
    unread: { type: 'string', default: '2' },
    tokens: { type: 'string', default: '3000' },
  },
});
const MINUTES = Number(args.minutes);
const STREAMS = Number(args.streams);
const UNREAD = Number(args.unread);
const TOKENS = Number(args.tokens);

const sim = await startVllmSim({});
const dir = mkdtempSync(join(tmpdir(), 'ww-bench-saturation-'));
const EXAMPLE = new URL('../examples/vllm.yaml', import.meta.url).pathname;
const doc = parse(readFileSync(EXAMPLE, 'utf8'));
const t = doc.targets[0];
t.endpoints = t.endpoints.map((/** @type {{ name: string }} */ e) => ({
  name: e.name,
  url: sim.urls.server,
}));
t.model = 'sim-model';
t.logs = t.logs.map((/** @type {Record<string, unknown>} */ l) => {
  const { format: _f, ...rest } = l;
  return { ...rest, path: sim.logFiles.server, from: 'end' };
});
t.engines = t.engines.map((/** @type {Record<string, unknown>} */ e) => ({
  ...e,
  metrics: `${sim.urls.server}/metrics`,
}));
delete t.watch;
// A dry run that may act 30 s into a wedge, up to once a minute: any wedge would show as a remediation.
t.remediate = { command: ['true'], dryRun: true, after: '30s', cooldown: '1m', maxPerHour: 60 };
const text = stringify({ stateDir: join(dir, 'state'), targets: [t], rules: doc.rules });

const runtime = await createRuntime(parseConfigText(text, join(dir, 'c.yaml'), {}), {
  metrics: createMetrics({ defaults: false }),
  logger: pino({ level: 'silent' }),
});
const wd = [...runtime.watchdog.targets.values()][0];
const journal = runtime.watchdog.journal;

/** One long streamed generation, started again when it ends, until `stop`; `read: false` never reads it. */
/**
 * @param {boolean} read
 * @param {{ done: boolean }} stop
 */
function generation(read, stop) {
  /** @type {import('node:http').ClientRequest | undefined} */
  let req;
  let n = 0;
  const one = () => {
    if (stop.done || n++ > 10_000) return;
    const body = JSON.stringify({
      model: 'sim-model',
      messages: [{ role: 'user', content: 'write a long story' }],
      max_tokens: TOKENS,
      stream: true,
    });
    req = request(`${sim.urls.server}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      if (read) {
        res.resume();
        res.on('end', one);
      } else res.pause(); // never read: the server's writes pile up in the socket and its buffers
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.end(body);
  };
  one();
  return () => req?.destroy();
}

const stop = { done: false };
/** @type {(() => void)[]} */
let ends = [];
try {
  const deadline = Date.now() + 180_000;
  while (wd.state.state !== 'ok') {
    if (Date.now() > deadline) throw new Error(`never ok (now ${wd.state.state}: ${wd.state.cause})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const seq = journal.query({ target: wd.name }).at(-1)?.seq ?? 0;
  sim.enableFault('saturation', { slots: Number(args.slots) });
  const startedAt = Date.now();
  const tokensBefore = sim.state().counters.generationTokens;
  ends = Array.from({ length: STREAMS }, (_, i) => generation(i >= UNREAD, stop));
  const states = new Map();
  let last;
  const sample = setInterval(() => {
    const l = `${wd.state.state}/${wd.state.diagnosis ?? '-'}`;
    states.set(l, (states.get(l) ?? 0) + 1);
    last = l;
  }, 1000);
  await new Promise((r) => setTimeout(r, MINUTES * 60_000));
  clearInterval(sample);
  /** @typedef {{ seq: number, type: string, summary: string, data?: { to?: string } }} JournalEvent */
  /** @type {JournalEvent[]} */
  const after = journal.query({ target: wd.name, afterSeq: seq, limit: 100_000 });
  const transitions = after.filter((e) => e.type === 'transition');
  const wedged = transitions.filter((e) => e.data?.to === 'wedged');
  const remediations = after.filter((e) => e.type === 'remediation');
  const st = sim.state();
  console.log(
    `saturation: ${STREAMS} long generations (${TOKENS} tokens each, ${UNREAD} never read), ${args.slots} slots, ${MINUTES} min at examples/vllm.yaml's cadence`,
  );
  console.log(
    `engine at the end: ${st.running} running, ${st.waiting} waiting, ${st.inflight} in flight; ${st.counters.generationTokens - tokensBefore} tokens generated during the run`,
  );
  console.log(
    `state now: ${last}; seconds in each state/diagnosis: ${JSON.stringify(Object.fromEntries(states))}`,
  );
  console.log(`transitions ${transitions.length}: ${transitions.map((e) => e.summary).join(' | ') || '-'}`);
  console.log(`transitions to wedged: ${wedged.length}`);
  console.log(
    `remediations: ${remediations.length}${remediations.length ? `: ${remediations.map((e) => e.summary).join(' | ')}` : ''}`,
  );
  console.log(`elapsed ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);
  process.exitCode = wedged.length === 0 && remediations.length === 0 ? 0 : 1;
} finally {
  stop.done = true;
  for (const end of ends) end();
  await runtime.stop();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
