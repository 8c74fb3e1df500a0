// Runs one fault plan (test/helpers/fault-matrix/plans.mjs) against a fresh simulator and the real daemon runtime: a healthy
// period (a full clean intermittence window on every completion slot), the fault at a random phase against the
// probe schedule, held `holdMs` after the expected diagnosis, then ended. Per trial: time to the expected
// diagnosis, every diagnosis change while the fault held (and whether each was an escalation), time back to ok.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parse, stringify } from 'yaml';

const EXAMPLES = new URL('../../../examples/', import.meta.url).pathname;

export async function loadDist(
  dist = process.env.WEDGEWATCH_DIST ?? new URL('../../../dist/', import.meta.url).pathname,
) {
  const imp = (p) => import(join(dist, p));
  return {
    ...(await imp('config/load.js')),
    ...(await imp('metrics.js')),
    ...(await imp('runtime.js')),
    ...(await imp('sim/index.js')),
    ...(await imp('sim/vllm/index.js')),
    ...(await imp('sim/abort-cascade.js')),
    ...(await imp('sim/detection-config.js')),
    ...(await imp('core/vocabulary.js')),
  };
}

/** The example config's first target pointed at `sim` (no remediation, no watched files). */
function exampleConfig(plan, sim, stateDir) {
  const vllm = plan.engine === 'vllm';
  const doc = parse(readFileSync(join(EXAMPLES, vllm ? 'vllm.yaml' : 'wedgewatch.yaml'), 'utf8'));
  const t = doc.targets[0];
  const url = vllm ? { [t.endpoints[0].name]: sim.urls.server } : { ...sim.urls };
  t.endpoints = t.endpoints.map((e) => ({ name: e.name, url: url[e.name] }));
  if (plan.proxy) {
    t.endpoints.unshift({ name: 'proxy', url: sim.urls.proxy });
    for (const p of t.probes)
      // As a user uncommenting the example's proxy would: the chat probe goes through it (fresh and reused).
      if (p.kind === 'chat' && p.endpoints?.includes('router')) p.endpoints.unshift('proxy');
  }
  t.model = 'sim-model';
  const files = vllm ? { [t.logs[0].service]: sim.logFiles.server } : sim.logFiles;
  t.logs =
    plan.logs === false
      ? []
      : t.logs.map((l) => {
          const { format: _f, ...rest } = l;
          return { ...rest, path: files[l.service], from: 'end' };
        });
  t.engines = t.engines.map((e) => ({ ...e, metrics: `${url[e.service]}/metrics` }));
  if (plan.routerMetrics && !vllm && !t.engines.some((e) => e.service === 'router'))
    t.engines.push({ service: 'router', metrics: `${sim.urls.router}/metrics` });
  for (const p of plan.probes ?? []) if (!t.probes.some((q) => q.name === p.name)) t.probes.push({ ...p });
  if (vllm) for (const p of t.probes) delete p.endpoints;
  delete t.remediate;
  delete t.watch;
  if (plan.node) t.node = nodeBlock(sim, '5s');
  return stringify({ stateDir, targets: [t], rules: doc.rules });
}

/** The node source on the PD legs' worker processes (issue 42), read every `every`. */
function nodeBlock(sim, every) {
  return {
    every,
    processes: ['prefill', 'decode'].map((service) => ({ service, pidFile: sim.pidFiles[service] })),
  };
}

/** The simulator detection tests' settings (probes every 2 s): the fast variant. */
function fastConfig(d, plan, sim, stateDir) {
  const extra = {};
  if (plan.logs === false) extra.logs = [];
  if (plan.engine === 'vllm') return d.vllmDetectionConfig(sim, stateDir, extra);
  if (plan.node) extra.node = nodeBlock(sim, '1s');
  const text = d.simDetectionConfig(sim, stateDir, extra);
  if (!plan.probes && !plan.routerMetrics) return text;
  const doc = parse(text);
  const t = doc.targets[0];
  for (const p of plan.probes ?? [])
    if (!t.probes.some((q) => q.name === p.name))
      t.probes.push({ ...p, every: '2s', timeout: '1s', jitter: 0 });
  if (plan.routerMetrics)
    t.engines.push({ service: 'router', metrics: `${sim.urls.router}/metrics`, every: '1s' });
  return stringify(doc);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * @param plan one entry of plans()
 * @param opts { d: loadDist(), trials, holdMs, fast, onTrial(trial) }
 */
export async function runPlan(plan, opts) {
  const { d } = opts;
  const fault = plan.fault ?? plan.name;
  const sim =
    plan.engine === 'vllm'
      ? await d.startVllmSim(plan.simEngine !== undefined ? { engine: plan.simEngine } : {})
      : await d.startSim({ ...(plan.proxy ? { proxy: true } : {}), ...(plan.node ? { workers: true } : {}) });
  // A fault present from start-up (a crawl the engine never had a healthy past for): on before the daemon starts.
  if (plan.atStart !== undefined) await plan.atStart(sim);
  const dir = mkdtempSync(join(tmpdir(), 'ww-bench-matrix-'));
  const text = opts.fast
    ? fastConfig(d, plan, sim, join(dir, 'state'))
    : exampleConfig(plan, sim, join(dir, 'state'));
  let runtime;
  const trials = [];
  try {
    const loaded = d.parseConfigText(text, join(dir, 'c.yaml'), {});
    const startedAt = Date.now();
    runtime = await d.createRuntime(loaded, {
      metrics: d.createMetrics({ defaults: false }),
      logger: pino({ level: 'silent' }),
    });
    const tc = loaded.config.targets[0];
    const wd = runtime.watchdog.targets.get(tc.name);
    const window = tc.detect.intermittentWindow;
    const chatEvery = tc.probes.find((p) => p.kind === 'chat').every;
    const evidence = (dg) => d.diagnosisEntry(dg)?.evidence;
    // The incident hold's comparison (state/incident.ts): the evidence kind, then the rank within it (the engine's
    // own health check above a stall read from gauges; a more specific critical line above another).
    const strength = (dg) =>
      d.EVIDENCE_KINDS.indexOf(evidence(dg) ?? 'failing') * 100 - (d.diagnosisEntry(dg)?.rank ?? 0);
    const detectMs = (plan.detectMinutes ?? (plan.slow ? 20 : 6)) * 60_000 * (opts.fast ? 0.25 : 1);
    /** Every non-ok label the target showed, in order, from the moment the fault went on. */
    let labels = null;
    /** Every label the target showed from the fault on, ok included, with its cause (the bench's --timeline). */
    let timeline = null;
    const off = runtime.watchdog.journal.subscribe(() => {
      if (timeline !== null) {
        const t = {
          at: Date.now(),
          state: wd.state.state,
          diagnosis: wd.state.diagnosis,
          cause: wd.state.cause,
          // What the verdict read at the change, for a label nobody expected (the bench's --timeline prints it).
          slots: slotsText(wd.state),
          engines: enginesText(wd.state),
        };
        const last = timeline.at(-1);
        if (last === undefined || last.diagnosis !== t.diagnosis || last.state !== t.state) timeline.push(t);
      }
      if (labels === null || wd.state.state === 'ok' || wd.state.state === 'unknown') return;
      const l = { at: Date.now(), state: wd.state.state, diagnosis: wd.state.diagnosis };
      const last = labels.at(-1);
      if (last === undefined || last.diagnosis !== l.diagnosis || last.state !== l.state) labels.push(l);
    });
    try {
      for (let i = 0; i < opts.trials; i++) {
        // A healthy period: the chat slots' whole intermittence window (10 runs, 150 s at the example's 15 s)
        // passed, and every other completion slot passed its last two runs (a tool-call matrix every minute would
        // need 10 minutes to flush a window).
        // The long-input probe (every 10 m in the examples) is left out unless the plan is about it: two of its
        // runs would make every healthy period 20 minutes, and its passes do not hold recovery (vocabulary.ts).
        const aboutLong = plan.expect.diagnoses?.includes('long_context_failing') === true;
        const healthy = () =>
          wd.state.state === 'ok' &&
          Object.values(wd.state.slots).every((m) => {
            if (!d.isCompletion(m.probeKind)) return true;
            if (m.probeKind === 'longinput' && !aboutLong) return true;
            const r = m.recent ?? [];
            if (m.probeKind === 'chat') return r.length >= window && !r.includes(1);
            return m.failStreak === 0 && m.okStreak >= 2;
          });
        let t0;
        if (plan.atStart !== undefined && i === 0) {
          // No healthy period to wait for: the fault was there before the daemon, its clock starts with it.
          labels = [];
          timeline = [];
          t0 = startedAt;
        } else {
          await waitFor(
            healthy,
            (opts.fast ? 2 : 12) * 60_000,
            `${plan.name}: a healthy period before trial ${i + 1}`,
          );
          await sleep(Math.random() * chatEvery);
          labels = [];
          timeline = [];
          t0 = await plan.inject(sim);
        }
        const expected = () => {
          const hit = labels.find(
            (l) =>
              plan.expect.states.includes(l.state) &&
              (plan.expect.diagnoses === null || plan.expect.diagnoses.includes(l.diagnosis)),
          );
          return hit;
        };
        let reached;
        try {
          reached = await waitFor(
            expected,
            detectMs,
            `${plan.name}: ${plan.expect.states.join('|')}/${plan.expect.diagnoses?.join('|') ?? '*'}`,
          );
        } catch (err) {
          reached = undefined;
          trials.push({
            ok: false,
            error: `${err.message} (now ${wd.state.state}/${wd.state.diagnosis}: ${wd.state.cause}; seen ${labels.map((l) => `${l.state}/${l.diagnosis}`).join(' → ')}; completion slots: ${slotsText(wd.state)}; engines: ${enginesText(wd.state)})`,
            seen: labels.map((l) => `${l.state}/${l.diagnosis}`),
          });
        }
        if (reached !== undefined) await sleep(opts.holdMs);
        const held = labels.slice();
        const tEnd = Date.now();
        await plan.restore(sim);
        let backMs;
        try {
          await waitFor(
            () => wd.state.state === 'ok',
            opts.fast ? 2 * 60_000 : (plan.recoverMs ?? 6 * 60_000),
            `${plan.name}: ok after the fault`,
          );
          backMs = Date.now() - tEnd;
        } catch {
          backMs = undefined;
        }
        labels = null;
        const steps = timeline.map((l) => ({
          ms: l.at - t0,
          state: l.state,
          diagnosis: l.diagnosis,
          cause: l.cause,
          slots: l.slots,
          engines: l.engines,
        }));
        timeline = null;
        if (reached === undefined) {
          trials.at(-1).backMs = backMs;
          trials.at(-1).timeline = steps;
          opts.onTrial?.(plan, trials.at(-1));
          continue;
        }
        // Diagnosis changes while the fault held: each is an escalation when its evidence is stronger or the
        // target went down after weaker evidence (incident.ts).
        const changes = [];
        for (let k = 1; k < held.length; k++) {
          const a = held[k - 1];
          const b = held[k];
          if (a.diagnosis === b.diagnosis) continue;
          const escalation =
            strength(b.diagnosis) < strength(a.diagnosis) || (b.state === 'down' && a.state !== 'down');
          changes.push({ from: a.diagnosis, to: b.diagnosis, escalation });
        }
        // State changes after the diagnosis was reached (the alerts select on the state): reported, not judged —
        // the bar is the diagnosis's; a state that moves between wedged and degraded pages and resolves.
        const from = held.indexOf(reached);
        const stateChanges = held.slice(from + 1).filter((l, k) => l.state !== held[from + k].state).length;
        const trial = {
          ok: true,
          ms: reached.at - t0,
          reached: `${reached.state}/${reached.diagnosis}`,
          seen: held.map((l) => `${l.state}/${l.diagnosis}`),
          changes,
          stateChanges,
          backMs,
          timeline: steps,
        };
        trials.push(trial);
        opts.onTrial?.(plan, trial);
      }
    } finally {
      off();
    }
  } finally {
    await runtime?.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { plan, fault, trials };
}

/** What a trial that missed its diagnosis leaves to read: every completion slot's streaks and last result. */
function slotsText(state) {
  return Object.entries(state.slots)
    .filter(([, m]) => m.last !== undefined && !['health', 'serverinfo', 'load'].includes(m.probeKind))
    .map(
      ([k, m]) =>
        `${k} ${m.last.result}${m.last.error ? ` (${m.last.error.slice(0, 160)})` : ''} fail ${m.failStreak} ok ${m.okStreak}`,
    )
    .join('; ');
}

/** The engines' load and crawl clocks, for a trial whose engine evidence never came. */
function enginesText(state) {
  const crawl = (c) =>
    c === undefined
      ? 'no crawl clock'
      : `crawl baseline ${c.baseline?.toFixed(2) ?? '-'} over ${c.samples} samples, ratio ${c.ratio?.toFixed(3) ?? '-'}, below ${c.belowSince !== undefined ? `${Math.round((Date.now() - c.belowSince) / 1000)} s` : 'no'}`;
  const ago = (t) => (t === undefined ? '-' : `${Math.round((Date.now() - t) / 1000)} s ago`);
  const progress = (p) =>
    p === undefined
      ? 'no progress memory'
      : `tokens ${ago(p.lastTokensAt)} (made after ${ago(p.madeAfter)}), line ${ago(p.lastLineAt)}, ${p.failedScrapes} failed scrapes, loaded ${p.loaded === undefined ? 'never' : `${ago(p.loaded.at)}${p.loaded.loadedNow ? ' (now)' : ''}`}`;
  return Object.values(state.engines)
    .map(
      (e) =>
        `${e.service} running ${e.running} queued ${e.queued}${e.stalled ? ' stalled' : ''}, ${progress(e.progress)}, ${crawl(e.crawl)}`,
    )
    .join('; ');
}

/**
 * Whether a plan's trials meet the matrix's bar: reached, at most `maxChanges` changes (the bench's bar is one), and
 * each an escalation. The wall-clock test passes Infinity: on a loaded machine the evidence can arrive one step at a
 * time (slow → completions_failing → engine_stalled), which is more escalations, never a flap back.
 */
export function verdictOf(trials, { maxChanges = 1 } = {}) {
  const problems = [];
  for (const [i, t] of trials.entries()) {
    if (!t.ok) problems.push(`trial ${i + 1}: ${t.error}`);
    else if (t.changes.length > maxChanges || t.changes.some((c) => !c.escalation))
      problems.push(
        `trial ${i + 1}: ${t.changes.map((c) => `${c.from} → ${c.to}${c.escalation ? '' : ' (not an escalation)'}`).join(', ')}`,
      );
    if (t.backMs === undefined) problems.push(`trial ${i + 1}: never back to ok after the fault ended`);
  }
  return problems;
}
