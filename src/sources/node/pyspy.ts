// Python stacks of the engine's processes with py-spy (issue 42): `py-spy dump --pid N [--native]` at a wedge (into
// the incident bundle, before remediation), and once with `--nonblocking` when a process is first seen, to learn its
// threads' Python names (a lost thread is then named `bootstrap_thread`, not the 15-byte comm it inherited). The
// dump's text is parsed back into one line per process for the cause. py-spy's output format (0.4.2,
// benfred/py-spy src/dump.rs print_traces): `Thread <os tid> (<status>): "<name>"`, then one frame per line,
// innermost first, `    <function> (<file>:<line>)`; native frames (`--native`) as `    <symbol> (<library>)`.
import { access, constants } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

/** How a command is run (the runtime hands over src/lib/exec.ts's runCommand). */
export type Exec = (
  argv: string[],
  opts: { env: Record<string, string>; timeoutMs: number; maxOutputBytes?: number; killAfterMs?: number },
) => Promise<{ result: string; code: number | null; output: string; droppedBytes: number; error?: string }>;

export interface DumpedThread {
  tid: number;
  status: string;
  name: string;
  /** Innermost first: `function (file:line)` or a native symbol. */
  frames: string[];
}

export interface ParsedDump {
  threads: DumpedThread[];
}

const MAX_THREADS = 4096;
const MAX_FRAMES = 256;
// Control characters (a terminal escape in a thread name) become '?'.
// eslint-disable-next-line no-control-regex
const clean = (s: string, n: number) => s.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, n);

export function parseDump(text: string): ParsedDump {
  const threads: DumpedThread[] = [];
  let cur: DumpedThread | undefined;
  for (const line of text.split('\n')) {
    const h = /^Thread (0x[0-9A-Fa-f]{1,16}|\d{1,10}) \(([^)]{0,64})\)(?:: "(.{0,256})")?\s*$/.exec(line);
    if (h !== null) {
      if (threads.length >= MAX_THREADS) break;
      cur = {
        tid: h[1]!.startsWith('0x') ? Number.parseInt(h[1]!, 16) : Number(h[1]),
        status: clean(h[2]!, 64),
        name: clean(h[3] ?? '', 128),
        frames: [],
      };
      threads.push(cur);
      continue;
    }
    if (cur !== undefined && /^ {4}\S/.test(line) && cur.frames.length < MAX_FRAMES)
      cur.frames.push(clean(line.trim(), 300));
  }
  return { threads };
}

/**
 * Standard-library modules a thread waits inside (py-spy prints the file's base name): the frame that says where the
 * engine waits is the one that called them (`poll`, not threading's `wait`).
 */
const STDLIB_WAITS = new Set([
  'threading.py',
  'queue.py',
  'selectors.py',
  'socket.py',
  'ssl.py',
  'subprocess.py',
  'synchronize.py',
  'connection.py',
  'popen_fork.py',
  'base_events.py',
  'events.py',
  'locks.py',
  'tasks.py',
  '_base.py',
  'thread.py',
]);

/** The innermost Python frame's function outside the standard library's waits (`poll`), else the innermost frame. */
export function innermost(t: DumpedThread): string | undefined {
  const python = t.frames.filter((f) => /\.py[cw]?:\d+\)$/.test(f));
  const own = python.find((f) => !STDLIB_WAITS.has(/\(([^():]*):\d+\)$/.exec(f)?.[1] ?? ''));
  return (own ?? python[0] ?? t.frames[0])?.replace(/ \(.*\)$/, '');
}

/**
 * One line per process: each thread's innermost frame and how long it used no CPU ("scheduler waiting in `poll` for
 * 41 s"), at most `maxThreads` of them (those idle longest first, MainThread always), then the threads it had before
 * and lacks now ("no `bootstrap_thread`").
 */
export function summarize(
  dump: ParsedDump,
  idleMs: (tid: number) => number | undefined,
  gone: readonly string[],
  maxThreads = 4,
): string {
  const rows = dump.threads.map((t) => ({ t, idle: idleMs(t.tid) }));
  rows.sort(
    (a, b) =>
      Number(b.t.name === 'MainThread') - Number(a.t.name === 'MainThread') ||
      (b.idle ?? -1) - (a.idle ?? -1),
  );
  const parts = rows.slice(0, maxThreads).map(({ t, idle }) => {
    const at = innermost(t);
    const name = t.name !== '' ? t.name : `thread ${t.tid}`;
    const where = at !== undefined ? ` in \`${at}\`` : '';
    const still = idle !== undefined && idle >= 1000 ? ` with no CPU for ${Math.round(idle / 1000)} s` : '';
    return `${name} ${t.status === 'active' ? 'running' : 'waiting'}${where}${still}`;
  });
  if (rows.length > maxThreads) parts.push(`${rows.length - maxThreads} more threads`);
  const names = new Set(dump.threads.map((t) => t.name));
  for (const g of gone) if (!names.has(g)) parts.push(`no \`${g}\``);
  return clean(parts.join('; '), 600);
}

/** Where an executable is: a path as given, or the first match on PATH; undefined when none can be run. */
export async function which(cmd: string, path = process.env.PATH ?? ''): Promise<string | undefined> {
  const candidates =
    isAbsolute(cmd) || cmd.includes('/')
      ? [cmd]
      : path
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, cmd));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface DumpOptions {
  pySpy: string;
  native: boolean;
  nonblocking?: boolean;
  timeoutMs: number;
  maxBytes: number;
}

export interface DumpResult {
  pid: number;
  ok: boolean;
  /** The command's output (capped), or why it was skipped. */
  text: string;
  argv: string[];
  /** Why it did not dump, in words an operator can act on. */
  problem?: string;
  cut: boolean;
}

/** Runs one `py-spy dump`; never throws. */
export async function dumpProcess(exec: Exec, pid: number, o: DumpOptions): Promise<DumpResult> {
  const bin = await which(o.pySpy);
  const argv = [
    o.pySpy,
    'dump',
    '--pid',
    String(pid),
    ...(o.native ? ['--native'] : []),
    ...(o.nonblocking ? ['--nonblocking'] : []),
  ];
  if (bin === undefined)
    return {
      pid,
      ok: false,
      text: '',
      argv,
      cut: false,
      problem: `${o.pySpy} not found (pip install py-spy==0.4.2)`,
    };
  argv[0] = bin;
  const r = await exec(argv, {
    env: {},
    timeoutMs: o.timeoutMs,
    maxOutputBytes: o.maxBytes,
    killAfterMs: 500,
  });
  const ok = r.result === 'success';
  return {
    pid,
    ok,
    text: r.output,
    argv,
    cut: r.droppedBytes > 0,
    ...(ok ? {} : { problem: whyNot(r.output, r.result, r.error) }),
  };
}

/** py-spy's own words for a missing right, turned into what to grant. */
function whyNot(output: string, result: string, error?: string): string {
  if (/Permission denied|Operation not permitted|ptrace/i.test(output))
    return 'no ptrace rights over the process: run as its user with kernel.yama.ptrace_scope ≤ 1, or grant CAP_SYS_PTRACE (docs/node-evidence.md)';
  if (result === 'timeout') return 'py-spy did not finish within its timeout';
  return clean(error ?? output.trim().split('\n').at(-1) ?? result, 300);
}
