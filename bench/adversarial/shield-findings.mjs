// bench:adversarial rows for issue 37 items 1, 2 and 7 (src/sources/logs/carriers.ts, fold.ts, the journal's state
// ring): tool-call output that prints the engine's own tail early, a tail the scanner cuts, and 2,500 fake thread
// deaths, appended to the shared daemon's prefill log on an idle engine and then a loaded one (slow fault: first
// token late, every completion still finishing). Each must raise 0 events, states, bundles and remediations; the
// real bootstrap-thread traceback after the record's real end must still be raised (its latency is reported); the
// state history must survive.
import { join } from 'node:path';
import { DIST, metricSum, sleep, until } from './harness.mjs';
import { markerRuns, startMainEnv } from './main-env.mjs';
import { tally } from './findings.mjs';

const { bootstrapThreadTraceback, pyTime } = await import(join(DIST, 'sim/logfmt.js'));
const { errorTexts } = await import(join(DIST, 'sources/logs/json-error-tail.js'));

const FAKE_TAIL = ', JSON parse error: Expecting value: line 1 column 2 (char 1)';
const TEXT = '{"name": "run", "arguments": {"notes": "a';

/**
 * The engine's record: its header, the model's lines, and its real tail (`"}}` closes the model's text, then str()
 * of the error CPython's json.loads raises on the text: json-error-tail.ts, held to CPython by its fixture test).
 */
function record(lines) {
  const text = [TEXT, ...lines, '"}}'].join('\n');
  const tail = `"}}, JSON parse error: ${errorTexts(text, 'loads')[0]}`;
  return [`[${pyTime(new Date())}] Failed to parse JSON part: ${TEXT}`, ...lines, tail].join('\n') + '\n';
}

/** Item 1: the model prints the tail, then a thread death, then more; the engine's real tail ends the record. */
export const earlyTail = () => record([`x${FAKE_TAIL}`, ...bootstrapThreadTraceback(7), 'and more output']);

/**
 * Item 1, the forged record: the model prints the tail, then a line with SGLang's record prefix (which ends a
 * record once a tail went by), then a thread death. The tail names no error CPython raises on the text before it.
 */
export const forgedRecord = () =>
  record([
    `x${FAKE_TAIL}`,
    `[${pyTime(new Date())} TP0] Exception in thread Thread-9 (bootstrap_thread):`,
    ...bootstrapThreadTraceback(7),
    'and more output',
  ]);

/** Item 2 (a): the tool call's last line is longer than maxLineBytes (64 KB): the real tail is cut off. */
export const cutTail = () => {
  const last = `${'b'.repeat(70_000)}"}}`;
  const said = errorTexts(`${TEXT}\n${last}`, 'loads')[0];
  return `[${pyTime(new Date())}] Failed to parse JSON part: ${TEXT}\n${last}, JSON parse error: ${said}\n`;
};

/** Item 7: one tool call printing 2,500 thread deaths after an early tail. */
export const deathFlood = () =>
  record([
    `x${FAKE_TAIL}`,
    ...Array.from({ length: 2500 }, (_, i) => bootstrapThreadTraceback(100 + i)).flat(),
  ]);

/**
 * Appends `payload` on an idle engine, then on a loaded one; counts what user text raised; then the control. On a
 * daemon and simulator of the row's own: each row's loaded phase is a stall the daemon sees, and on a shared target
 * the fourth within 5 min is (rightly) `stalls_recurring`, so the next row never saw `pd` ok.
 */
async function shieldRow(scope, name, payload, { strip = false } = {}) {
  const env = await startMainEnv(join(scope.dir, name), { extras: false, name });
  scope.add(() => env.stop());
  tally.daemons.push(env.daemon);
  const d = env.daemon;
  const t0 = Date.now();
  const eventsOf = async () =>
    metricSum(await d.metrics(), 'wedgewatch_log_events_total', (l) => l.includes('target="pd"')) ?? 0;
  const eventsBefore = await eventsOf();
  const remBefore = markerRuns(env.marker);
  const bundlesOf = async () => (await d.json('/api/incidents?target=pd'))?.incidents?.length ?? 0;
  const bundlesBefore = await bundlesOf();
  let seen;
  const ok = await until(
    async () => {
      seen = (await d.json('/api/status'))?.targets?.find((t) => t.target === 'pd');
      return seen?.state === 'ok';
    },
    { timeoutMs: 15_000 },
  );
  if (!ok) throw new Error(`pd not ok before the payload (${seen?.state} ${seen?.diagnosis ?? ''})`);
  env.appendPrefill(payload());
  await sleep(6000);
  env.sim.enableFault('slow', { factor: 60 });
  await sleep(1500);
  env.appendPrefill(payload());
  await sleep(8000);
  env.sim.disableFault('slow');
  await sleep(1500);
  const evs = (await d.events('pd', { since: t0 })) ?? [];
  const raised = evs.filter((e) => ['critical_log', 'critical_confirmed'].includes(e.type)).length;
  const states = evs.filter((e) => e.type === 'transition' && e.data?.to !== 'ok').map((e) => e.data?.to);
  const eventsAfter = await eventsOf();
  const logEvents = eventsAfter - eventsBefore;
  const bundles = (await bundlesOf()) - bundlesBefore;
  const remediations = markerRuns(env.marker) - remBefore;
  tally.userTextEvents += Math.max(raised, logEvents);
  tally.userTextBundles += bundles;
  tally.userTextRemediations += remediations;
  // The state history is still held (the strip needs a transition; a flood once pushed every one out).
  const history = strip ? ((await d.events('pd', { type: 'transition' })) ?? []).length : 1;

  // The control: the record ended (its real tail, then the interpreter's traceback on its own): raised, and when.
  const tc = Date.now();
  env.appendPrefill(payload() + bootstrapThreadTraceback(8).join('\n') + '\n');
  let latency = Infinity;
  const control = await until(
    async () => {
      const n = await eventsOf();
      if (n > eventsAfter) return ((latency = (Date.now() - tc) / 1000), true);
      return false;
    },
    { timeoutMs: 8000, intervalMs: 100 },
  );
  const pass =
    raised === 0 &&
    logEvents === 0 &&
    states.length === 0 &&
    bundles === 0 &&
    remediations === 0 &&
    history > 0 &&
    control === true;
  return {
    pass,
    value:
      `events ${Math.max(raised, logEvents)} (journal ${raised}, log_events_total +${logEvents}), states [${states.join(',') || 'ok'}], ` +
      `bundles ${bundles}, remediations ${remediations}` +
      (strip ? `, transitions held ${history}` : '') +
      `; real traceback after the real end ${control ? `raised in ${latency.toFixed(1)} s` : 'NOT raised'}`,
  };
}

export const finding37early = (_env, scope) => shieldRow(scope, 's371', earlyTail);
export const finding37forged = (_env, scope) => shieldRow(scope, 's371f', forgedRecord);
export const finding37cut = (_env, scope) => shieldRow(scope, 's372', cutTail);
export const finding37flood = (_env, scope) => shieldRow(scope, 's377', deathFlood, { strip: true });
