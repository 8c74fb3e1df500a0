// One incident capture: everything an engineer needs to find out why a target went bad, written before the
// remediation restarts it. Pieces run in parallel under one deadline (captureTimeout); what has not finished by
// then is recorded as such in the manifest, which is written last. Nothing here decides anything: the caller
// (TargetIncidents) says when, and hands over the detector's state at that moment.
import { join } from 'node:path';
import { Agent, request } from '../../lib/http/undici.js';
import type { CaptureCommandConfig, IncidentsConfig, TargetConfig } from '../../config/schema.js';
import type { Journal, JournalEvent } from '../journal/journal.js';
import type { TargetMemory } from '../../core/memory.js';
import { runCommand, type ExecOptions, type ExecResult } from '../../lib/exec.js';
import type { ConnKind, ProbeResultSignal } from '../../core/signals.js';
import { VERSION } from '../../version.js';
import { redactor } from '../../lib/redact.js';
import { BundleWriter, incidentId, isNoSpace, nodeBundleFs, type BundleFs } from './bundle.js';
import type { LogWindows } from './log-window.js';
import {
  MANIFEST_FORMAT,
  type CommandRecord,
  type IncidentManifest,
  type LogWindowRecord,
  type PieceRecord,
} from './manifest.js';
import { fillArgv, lookupPids } from './pids.js';
import { incidentsDir } from './store.js';
import { writeStacks, type StackDumper } from './stacks.js';

const MAX_FETCH_BYTES = 4 * 1024 * 1024;
/**
 * A command is cut this long before the capture's deadline (TERM, then KILL halfway), so what it printed still
 * makes it into the bundle: a tenth of captureTimeout, at most 1 s.
 */
const cutMargin = (captureTimeout: number) => Math.min(1000, captureTimeout / 10);

export interface ProbeHistory {
  recent(): { results: ProbeResultSignal[]; failures: ProbeResultSignal[] };
  inflight(): Array<{ probe: string; endpoint: string; conn: ConnKind; startedAt: number }>;
}

export interface CaptureDeps {
  target: TargetConfig;
  config: IncidentsConfig;
  stateDir: string;
  windows: LogWindows;
  journal: Journal;
  /** GET /api/status as it is now. */
  status: () => unknown;
  probes?: ProbeHistory;
  redact: (text: string) => string;
  fs?: BundleFs;
  now?: () => number;
  exec?: (argv: string[], opts: ExecOptions) => Promise<ExecResult>;
  /** Python stacks of the engine's processes (node.stacks), taken before remediation: issue 42. */
  stacks?: StackDumper;
}

/** The `result` label of wedgewatch_incidents_total: every one is created at 0 per target. */
export const CAPTURE_RESULTS = ['captured', 'partial', 'no_space', 'failed'] as const;
export type CaptureResult = (typeof CAPTURE_RESULTS)[number];

export interface CaptureOutcome {
  result: CaptureResult;
  id?: string;
  dir?: string;
  durationMs: number;
  bytes: number;
  files: number;
  detail?: string;
}

class Deadline extends Error {
  constructor() {
    super('capture deadline reached');
  }
}

/** The earliest sign of this episode: what the log window is measured back from. */
export function firstSignal(s: TargetMemory, events: JournalEvent[]): number {
  let first = s.since;
  for (const c of s.criticalSinceOk) first = Math.min(first, c.time);
  for (const e of events) if (e.type !== 'file_change') first = Math.min(first, e.time);
  return first;
}

const iso = (t: number) => new Date(t).toISOString();

export async function captureIncident(deps: CaptureDeps, s: TargetMemory): Promise<CaptureOutcome> {
  const now = deps.now ?? Date.now;
  const fs = deps.fs ?? nodeBundleFs;
  const cfg = deps.config;
  const started = now();
  const t0 = performance.now();
  const elapsed = () => performance.now() - t0;
  const root = incidentsDir(deps.stateDir);
  const id = incidentId(started, deps.target.name);
  const w = new BundleWriter(join(root, id), deps.redact, fs);
  const done = (result: CaptureResult, detail?: string): CaptureOutcome => ({
    result,
    id: result === 'captured' || result === 'partial' ? id : undefined,
    dir: result === 'captured' || result === 'partial' ? w.dir : undefined,
    durationMs: elapsed(),
    bytes: w.bytes,
    files: w.files.length,
    detail,
  });

  try {
    await fs.mkdir(root);
    const free = await fs.freeBytes(root);
    if (free < cfg.minFreeBytes) {
      return done(
        'no_space',
        `${mb(free)} free in ${root}, capture needs ${mb(cfg.minFreeBytes)} (minFreeBytes)`,
      );
    }
    await w.init();
  } catch (err) {
    if (isNoSpace(err)) return done('no_space', (err as Error).message);
    return done('failed', (err as Error).message);
  }

  const deadlineAt = started + cfg.captureTimeout;
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => {
      ac.abort(new Deadline());
      resolve('deadline');
    }, cfg.captureTimeout);
  });
  const remaining = () => Math.max(0, deadlineAt - now());
  const pieces: PieceRecord[] = [];
  const logs: LogWindowRecord[] = [];
  const commands: CommandRecord[] = [];
  const engineVersions: Record<string, string> = {};
  let noSpace: Error | undefined;

  const sinceOk = deps.journal.query({
    target: deps.target.name,
    since: s.lastOkAt === undefined ? undefined : s.lastOkAt - 1,
  });
  const first = firstSignal(s, sinceOk);
  const windowFrom = first - cfg.window;

  /** Runs one piece under the deadline; its record says how it ended. */
  const piece = async (
    kind: string,
    name: string,
    fn: () => Promise<string[] | { files: string[]; detail?: string; status?: PieceRecord['status'] }>,
  ) => {
    const p0 = performance.now();
    const rec: PieceRecord = { kind, name, status: 'ok', files: [], durationMs: 0 };
    pieces.push(rec);
    let finished = false;
    const run = fn().then(
      (r) => {
        finished = true;
        if (Array.isArray(r)) rec.files = r;
        else Object.assign(rec, r);
      },
      (err: unknown) => {
        finished = true;
        if (isNoSpace(err)) noSpace ??= err as Error;
        rec.status = ac.signal.aborted ? 'timeout' : 'error';
        rec.detail = deps.redact(String((err as Error)?.message ?? err)).slice(0, 500);
      },
    );
    const r = await Promise.race([run.then(() => 'done' as const), deadline]);
    if (r === 'deadline' && !finished) {
      rec.status = 'timeout';
      rec.detail ??= `not finished within captureTimeout (${cfg.captureTimeout} ms)`;
    }
    rec.durationMs = Math.round(performance.now() - p0);
  };
  /** A write that happens only while the capture is still live: nothing lands after the manifest. */
  const write = async (rel: string, content: string | Buffer) => {
    ac.signal.throwIfAborted();
    await w.write(rel, content);
    return rel;
  };

  const jobs: Promise<void>[] = [];
  jobs.push(
    piece('status', 'api-status', async () => [
      await write('status.json', JSON.stringify(deps.status(), null, 2) + '\n'),
    ]),
  );
  jobs.push(
    piece('events', 'journal', async () => [
      await write(
        'events.json',
        JSON.stringify(deps.journal.query({ target: deps.target.name, since: windowFrom - 1 }), null, 2) +
          '\n',
      ),
    ]),
  );
  jobs.push(
    piece('changes', 'watched-files', async () => {
      const changes = sinceOk.filter((e) => e.type === 'file_change');
      const text = changes
        .map((e) => `# ${iso(e.time)} ${e.summary}\n${typeof e.data?.diff === 'string' ? e.data.diff : ''}\n`)
        .join('\n');
      return [
        await write(
          'changes.txt',
          changes.length === 0 ? 'No watched file changed since the last ok.\n' : text,
        ),
      ];
    }),
  );
  if (deps.probes) {
    const probes = deps.probes;
    jobs.push(
      piece('probes', 'timelines', async () => {
        const recent = probes.recent();
        const inflight = probes.inflight();
        return [
          await write('probes/recent.json', JSON.stringify({ inflight, ...recent }, null, 2) + '\n'),
          await write('probes/timelines.txt', probeTimelines(s, recent.results, inflight, now())),
        ];
      }),
    );
  }
  jobs.push(
    piece('logs', 'windows', async () => {
      const windows = await deps.windows.read(windowFrom, cfg.maxLogBytes, ac.signal);
      const files: string[] = [];
      const used = new Set<string>();
      for (const win of windows) {
        let rel = `logs/${win.service}.log`;
        for (let n = 2; used.has(rel); n++) rel = `logs/${win.service}-${n}.log`;
        used.add(rel);
        files.push(await write(rel, win.text));
        logs.push({
          service: win.service,
          source: win.file,
          path: rel,
          startOffset: win.start,
          endOffset: win.end,
          droppedBytes: win.droppedBytes,
          marks: win.marks,
        });
        if (win.marks.length > 0) {
          const text = win.marks
            .map((m) => `${rel}:${m.line}\t${m.trigger ? 'TRIGGER ' : ''}${m.severity}\t${m.rule}\t${m.text}`)
            .join('\n');
          files.push(await write(`${rel.slice(0, -4)}.marks.txt`, text + '\n'));
        }
      }
      return files;
    }),
  );
  const agent = new Agent({ connections: 2, keepAliveTimeout: 1, pipelining: 0 });
  const infoProbe = deps.target.probes.find((p) => p.kind === 'serverinfo');
  const infoPath = (infoProbe?.kind === 'serverinfo' ? infoProbe.path : undefined) ?? '/get_server_info';
  for (const engine of deps.target.engines) {
    const base = new URL(engine.metrics);
    jobs.push(
      piece('engine', `${engine.service} /metrics`, async () => [
        await write(
          `engines/${engine.service}.metrics.txt`,
          await fetchText(agent, engine.metrics, cfg.fetchTimeout, remaining, ac.signal),
        ),
      ]),
    );
    jobs.push(
      piece('engine', `${engine.service} ${infoPath}`, async () => {
        const text = await fetchText(
          agent,
          new URL(infoPath, base).toString(),
          cfg.fetchTimeout,
          remaining,
          ac.signal,
        );
        const version = /"version"\s*:\s*"([^"]{1,64})"/.exec(text)?.[1];
        if (version !== undefined) engineVersions[engine.service] = version;
        return [await write(`engines/${engine.service}.server_info.json`, text)];
      }),
    );
  }
  if (deps.stacks !== undefined) {
    const dumper = deps.stacks;
    jobs.push(
      piece('stacks', 'py-spy', () =>
        writeStacks(dumper, Math.max(1, remaining() - cutMargin(cfg.captureTimeout)), write),
      ),
    );
  }
  for (const cmd of cfg.commands) {
    if (cmd.targets !== undefined && !cmd.targets.includes(deps.target.name)) continue;
    jobs.push(
      piece('command', cmd.name, () => runCapture(cmd, deps, w.dir, remaining, commands, write, ac.signal)),
    );
  }

  await Promise.all(jobs);
  clearTimeout(timer);
  await agent.close().catch(() => undefined);
  if (noSpace !== undefined) {
    await w.remove();
    return done('no_space', noSpace.message);
  }
  const partial = pieces.some((p) => p.status === 'timeout' || p.status === 'error');
  const end = now();
  const evidence = {
    critical: s.criticalSinceOk,
    confirmedCritical: s.confirmedCritical,
    failingProbes: Object.values(s.slots)
      .filter((m) => m.failStreak > 0)
      .map((m) => ({
        probe: m.probe,
        endpoint: m.endpoint,
        conn: m.conn,
        failStreak: m.failStreak,
        last: m.last,
      })),
    stalledEngines: Object.values(s.engines).filter((e) => e.stalled),
    events: sinceOk.filter((e) => e.type !== 'file_change'),
  };
  const times = {
    firstSignal: first,
    confirmation: s.since,
    ...(s.lastOkAt === undefined ? {} : { lastOk: s.lastOkAt }),
    captureStart: started,
    captureEnd: end,
    deadline: deadlineAt,
  };
  const manifest: IncidentManifest = {
    format: MANIFEST_FORMAT,
    id,
    target: deps.target.name,
    state: s.state,
    diagnosis: s.diagnosis,
    cause: s.cause,
    result: partial ? 'partial' : 'captured',
    times,
    timesIso: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, iso(v)])),
    window: { ms: cfg.window, from: windowFrom, to: end },
    evidence,
    versions: {
      wedgewatch: VERSION,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      engines: engineVersions,
    },
    logs,
    commands,
    pieces,
  };
  try {
    await w.writeManifest(manifest);
  } catch (err) {
    await w.remove();
    return done(isNoSpace(err) ? 'no_space' : 'failed', (err as Error).message);
  }
  return done(manifest.result);
}

async function runCapture(
  cmd: CaptureCommandConfig,
  deps: CaptureDeps,
  dir: string,
  remaining: () => number,
  records: CommandRecord[],
  write: (rel: string, content: string) => Promise<string>,
  signal: AbortSignal,
): Promise<{ files: string[]; status?: PieceRecord['status']; detail?: string }> {
  const usesPid = cmd.argv.some((a) => a.includes('${PID}'));
  let pids: Array<number | undefined> = [undefined];
  if (usesPid || cmd.pidFile !== undefined || cmd.processMatch !== undefined) {
    const found = await lookupPids(cmd);
    if (found.pids.length === 0) {
      records.push({
        name: cmd.name,
        argv: cmd.argv,
        result: 'skipped',
        durationMs: 0,
        detail: found.problem,
      });
      return { files: [], status: 'skipped', detail: found.problem };
    }
    pids = usesPid ? found.pids : [undefined];
  }
  const exec = deps.exec ?? runCommand;
  const margin = cutMargin(deps.config.captureTimeout);
  const runs = pids.map(async (pid) => {
    const argv = fillArgv(cmd.argv, { PID: pid, TARGET: deps.target.name, INCIDENT_DIR: dir });
    // Recorded before it runs: a manifest written at the capture's deadline still names a command that has not
    // come back yet (on a loaded host the deadline fired before the cut command was reaped, and the manifest had
    // no record of it at all).
    const rec: CommandRecord = {
      name: cmd.name,
      argv,
      ...(pid === undefined ? {} : { pid }),
      result: 'timeout',
      durationMs: 0,
    };
    records.push(rec);
    const r = await exec(argv, {
      env: { WEDGEWATCH_TARGET: deps.target.name, WEDGEWATCH_INCIDENT_DIR: dir },
      timeoutMs: Math.max(1, Math.min(cmd.timeout, remaining() - margin)),
      maxOutputBytes: cmd.maxOutputBytes,
      killAfterMs: margin / 2,
    });
    const rel = `commands/${cmd.name}${pid === undefined ? '' : `-${pid}`}.txt`;
    const header = [
      `$ ${argv.map(quote).join(' ')}`,
      `# result ${r.result}, exit code ${r.code ?? '-'}${r.signal ? `, signal ${r.signal}` : ''}, ${Math.round(r.durationMs)} ms`,
      ...(r.droppedBytes > 0
        ? [`# output cut at ${cmd.maxOutputBytes} bytes, ${r.droppedBytes} more dropped`]
        : []),
      ...(r.error ? [`# error: ${r.error}`] : []),
      '',
    ].join('\n');
    // Captures pass no interrupt signal to runCommand, so `interrupted` cannot happen here.
    rec.result = r.result === 'interrupted' ? 'timeout' : r.result;
    rec.code = r.code;
    rec.durationMs = Math.round(r.durationMs);
    if (signal.aborted) return { rel: undefined, result: r.result };
    rec.path = await write(rel, header + r.output);
    return { rel, result: r.result };
  });
  const out = await Promise.all(runs);
  const files = out.flatMap((o) => (o.rel === undefined ? [] : [o.rel]));
  const bad = out.find((o) => o.result !== 'success');
  return bad === undefined
    ? { files }
    : { files, status: bad.result === 'timeout' ? 'timeout' : 'error', detail: `command ${bad.result}` };
}

const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

async function fetchText(
  agent: Agent,
  url: string,
  timeoutMs: number,
  remaining: () => number,
  signal: AbortSignal,
): Promise<string> {
  const ms = Math.max(1, Math.min(timeoutMs, remaining()));
  const res = await request(url, {
    dispatcher: agent,
    signal: AbortSignal.any([signal, AbortSignal.timeout(ms)]),
    headersTimeout: ms,
    bodyTimeout: ms,
  });
  const chunks: Buffer[] = [];
  let n = 0;
  let cut = false;
  for await (const c of res.body as AsyncIterable<Buffer>) {
    if (n + c.length > MAX_FETCH_BYTES) {
      chunks.push(c.subarray(0, MAX_FETCH_BYTES - n));
      cut = true;
      res.body.destroy();
      break;
    }
    chunks.push(c);
    n += c.length;
  }
  const body = Buffer.concat(chunks).toString('utf8');
  // Only a 2xx is the endpoint's answer: a redirect (never followed: it could point anywhere) or a 1xx/3xx is
  // not the engine's metrics or server info, so the piece is an error that names the status.
  if (res.statusCode < 200 || res.statusCode > 299) {
    const where = res.statusCode >= 300 && res.statusCode < 400 ? location(res.headers.location) : '';
    throw new Error(`HTTP ${res.statusCode}${where}: ${redactor.clip(body, 200)}`);
  }
  return cut ? `${body}\n# cut at ${MAX_FETCH_BYTES} bytes\n` : body;
}

/** A redirect's target for the piece's detail, cut short (it is the engine's text, redacted with the rest). */
function location(h: string | string[] | undefined): string {
  const v = Array.isArray(h) ? h[0] : h;
  return v === undefined ? '' : ` (Location: ${redactor.clip(v, 200)})`;
}

/** The failing probes' recent runs, one block per probe × hop × connection, with the hangs still in flight. */
function probeTimelines(
  s: TargetMemory,
  results: ProbeResultSignal[],
  inflight: ReturnType<ProbeHistory['inflight']>,
  now: number,
): string {
  const out: string[] = [];
  for (const m of Object.values(s.slots)) {
    if (m.failStreak === 0) continue;
    out.push(`${m.probe} on ${m.endpoint}/${m.conn}: failing ${m.failStreak} in a row`);
    const runs = results
      .filter((r) => r.probe === m.probe && r.endpoint === m.endpoint && r.conn === m.conn)
      .slice(-10);
    for (const r of runs) {
      const parts = [
        `${iso(r.start)}  ${r.result}${r.phase ? ` in ${r.phase}` : ''}${r.status ? ` HTTP ${r.status}` : ''}`,
        r.connectMs !== undefined
          ? `connect ${r.connectMs.toFixed(0)} ms`
          : r.reusedConnection
            ? 'reused connection'
            : undefined,
        r.headersMs !== undefined ? `headers ${r.headersMs.toFixed(0)} ms` : undefined,
        r.ttftMs !== undefined ? `first token ${r.ttftMs.toFixed(0)} ms` : undefined,
        `total ${r.durationMs.toFixed(0)} ms`,
        r.error,
      ].filter((p) => p !== undefined);
      out.push(`  ${parts.join(', ')}`);
    }
    for (const i of inflight.filter(
      (i) => i.probe === m.probe && i.endpoint === m.endpoint && i.conn === m.conn,
    )) {
      out.push(`  ${iso(i.startedAt)}  still in flight after ${Math.round((now - i.startedAt) / 1000)} s`);
    }
    out.push('');
  }
  // A hang confirms a wedge before any run has failed: the runs still in flight are the evidence then.
  if (inflight.length > 0) out.push('In flight at capture:');
  for (const i of inflight) {
    out.push(
      `  ${i.probe} on ${i.endpoint}/${i.conn} since ${iso(i.startedAt)} (${Math.round((now - i.startedAt) / 1000)} s)`,
    );
  }
  return out.length === 0 ? 'No probe was failing or hung.\n' : out.join('\n') + '\n';
}

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
