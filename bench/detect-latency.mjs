// Detection latency per fault against the simulator: time from the fault taking effect to the verdict,
// median (and min/max) over N trials. Same test config as the integration tests: 1 s probe timeout, 2 s
// interval. Usage: npm run bench:detect [-- --trials 10 --faults nixl_abort_unhandled,crash]
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';

const dist = process.env.WEDGEWATCH_DIST ?? new URL('../dist/', import.meta.url).pathname;
const { parseConfigText } = await import(join(dist, 'config/load.js'));
const { createMetrics } = await import(join(dist, 'metrics.js'));
const { createRuntime } = await import(join(dist, 'runtime.js'));
const { startSim } = await import(join(dist, 'sim/index.js'));
const { abortCascade } = await import(join(dist, 'sim/abort-cascade.js'));
const { simDetectionConfig } = await import(join(dist, 'sim/detection-config.js'));

const { values: args } = parseArgs({
  options: { trials: { type: 'string', default: '10' }, faults: { type: 'string' } },
});
const TRIALS = Number(args.trials);

/** Resolves with the Unix ms at which `file` first contains `text` past `from` bytes. */
async function whenWritten(file, text, from) {
  for (;;) {
    if (statSync(file).size > from && readFileSync(file, 'utf8').slice(from).includes(text))
      return Date.now();
    await new Promise((r) => setTimeout(r, 2));
  }
}

const PLANS = {
  nixl_abort_unhandled: {
    expect: ['wedged', 'kv_bootstrap_thread_dead'],
    async inject(sim) {
      const from = statSync(sim.logFiles.prefill).size;
      sim.enableFault('nixl_abort_unhandled');
      const at = whenWritten(sim.logFiles.prefill, '(bootstrap_thread):', from);
      void abortCascade(sim.urls.router, { requests: 1, cutAfterMs: 500 });
      return at; // measured from the traceback line, as the acceptance bound is
    },
    async restore(sim) {
      sim.disableFault('nixl_abort_unhandled');
      await sim.restart('prefill');
    },
  },
  decode_stall: {
    expect: ['wedged', 'engine_stalled'],
    inject: (sim) => (sim.enableFault('decode_stall'), Date.now()),
    restore: (sim) => sim.restart('decode'),
  },
  keepalive_stall: {
    proxy: true,
    expect: ['degraded', 'keepalive_only'],
    inject: (sim) => (sim.enableFault('keepalive_stall'), Date.now()),
    restore: (sim) => sim.disableFault('keepalive_stall'),
  },
  proxy_hop_down: {
    proxy: true,
    expect: ['degraded', 'hop:proxy'],
    inject: (sim) => (sim.enableFault('crash', { service: 'proxy' }), Date.now()),
    restore: (sim) => sim.restart('proxy'),
  },
  crash: {
    expect: ['down', 'health_failing'],
    inject: (sim) => (sim.enableFault('crash', { service: 'prefill' }), Date.now()),
    restore: (sim) => sim.restart('prefill'),
  },
  slow: {
    expect: ['degraded', 'slow'],
    inject: (sim) => (sim.enableFault('slow', { factor: 12 }), Date.now()),
    restore: (sim) => sim.disableFault('slow'),
  },
  toolcall_leak: {
    expect: ['degraded', 'toolcall_leak'],
    inject: (sim) => (sim.enableFault('toolcall_leak'), Date.now()),
    restore: (sim) => sim.disableFault('toolcall_leak'),
  },
};

function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const v = check();
      if (v) return resolve(v);
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

async function bench(name, plan) {
  const sim = await startSim({ proxy: plan.proxy === true });
  const dir = mkdtempSync(join(tmpdir(), 'ww-bench-detect-'));
  const loaded = parseConfigText(simDetectionConfig(sim, join(dir, 'state')), join(dir, 'c.yaml'), {});
  const runtime = await createRuntime(loaded, {
    metrics: createMetrics({ defaults: false }),
    logger: pino({ level: 'silent' }),
  });
  const wd = runtime.watchdog.targets.get('sim');
  const [state, diagnosis] = plan.expect;
  let verdictAt;
  const off = runtime.watchdog.journal.subscribe((e) => {
    if (
      (e.type === 'transition' || e.type === 'diagnosis') &&
      wd.state.state === state &&
      wd.state.diagnosis === diagnosis
    ) {
      verdictAt ??= e.time;
    }
  });
  const latencies = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      await waitFor(() => wd.state.state === 'ok', 60_000, `${name}: ok before trial ${i + 1}`);
      verdictAt = undefined;
      const t0 = await plan.inject(sim);
      await waitFor(
        () => verdictAt !== undefined,
        60_000,
        `${name}: ${state}/${diagnosis} (now ${wd.state.state}/${wd.state.diagnosis})`,
      );
      latencies.push(verdictAt - t0);
      await plan.restore(sim);
    }
  } finally {
    off();
    await runtime.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return latencies;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const selected = args.faults ? args.faults.split(',') : Object.keys(PLANS);
console.log(`detection latency, ${TRIALS} trials per fault (probe every 2 s, timeout 1 s)`);
console.log(
  `${'fault'.padEnd(22)} ${'verdict'.padEnd(34)} ${'median'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}`,
);
for (const name of selected) {
  const plan = PLANS[name];
  if (!plan) throw new Error(`unknown fault ${name} (have ${Object.keys(PLANS).join(', ')})`);
  const l = await bench(name, plan);
  const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`.padStart(8);
  console.log(
    `${name.padEnd(22)} ${plan.expect.join('/').padEnd(34)} ${fmt(median(l))} ${fmt(Math.min(...l))} ${fmt(Math.max(...l))}`,
  );
}
