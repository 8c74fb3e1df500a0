// Runs a remediation command: argv with no shell, so nothing from a log line or a diagnosis can become
// shell syntax; a timeout (TERM, then KILL, to the whole process group: a restart script's background
// children must not outlive it); output captured up to a bound.
import { spawn } from 'node:child_process';

export interface ExecResult {
  /** interrupted: the daemon stopped (SIGTERM) and the command was still running past the shutdown grace. */
  result: 'success' | 'failure' | 'timeout' | 'interrupted';
  code: number | null;
  signal: string | null;
  /** stdout and stderr interleaved, at most maxOutputBytes (the rest counted in `droppedBytes`). */
  output: string;
  droppedBytes: number;
  durationMs: number;
  error?: string;
}

export interface ExecOptions {
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes?: number;
  /** Time between TERM and KILL on timeout. */
  killAfterMs?: number;
  /** Told the process group id once the command started (persisted as the lock against overlapping runs). */
  onSpawn?: (pid: number) => void;
  /** Aborted on shutdown: TERM to the group now, KILL after interruptKillAfterMs. */
  signal?: AbortSignal;
  /** Time between TERM and KILL when `signal` aborts (a shutdown has a deadline); default killAfterMs. */
  interruptKillAfterMs?: number;
}

const EXIT_GRACE_MS = 200;

export function runCommand(argv: string[], opts: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  const max = opts.maxOutputBytes ?? 64 * 1024;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    let timedOut = false;
    let interrupted = false;
    let spawnError: string | undefined;
    const child = spawn(argv[0]!, argv.slice(1), {
      shell: false,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timeout reaches grandchildren too.
      detached: true,
    });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    const signalGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // The group is gone already.
      }
    };
    const collect = (b: Buffer) => {
      const take = Math.min(Math.max(0, max - kept), b.length);
      if (take > 0) chunks.push(b.subarray(0, take));
      kept += take;
      dropped += b.length - take;
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    let killTimer: NodeJS.Timeout | undefined;
    const terminate = (killAfterMs: number) => {
      signalGroup('SIGTERM');
      clearTimeout(killTimer);
      killTimer = setTimeout(() => signalGroup('SIGKILL'), killAfterMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate(opts.killAfterMs ?? 5000);
    }, opts.timeoutMs);
    const onAbort = () => {
      interrupted = true;
      clearTimeout(timer);
      terminate(opts.interruptKillAfterMs ?? opts.killAfterMs ?? 5000);
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    let graceTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (code: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(graceTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // A background grandchild may hold the pipes open: stop reading, do not wait for it.
      child.stdout.destroy();
      child.stderr.destroy();
      // The leader is gone; what it left behind in its group must not outlive a cut run.
      if (timedOut || interrupted) signalGroup('SIGKILL');
      resolve({
        result: interrupted
          ? 'interrupted'
          : timedOut
            ? 'timeout'
            : code === 0 && spawnError === undefined
              ? 'success'
              : 'failure',
        code,
        signal,
        output: Buffer.concat(chunks).toString('utf8'),
        droppedBytes: dropped,
        durationMs: performance.now() - started,
        error: spawnError,
      });
    };
    child.on('error', (err) => {
      spawnError = err.message;
      // A command that never started (ENOENT, EACCES) has no process to wait for.
      if (child.pid === undefined) finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
    // 'close' waits for every holder of the pipes; after 'exit' give the output a moment to drain, then finish.
    child.on('exit', (code, signal) => {
      graceTimer = setTimeout(() => finish(code, signal), EXIT_GRACE_MS);
    });
  });
}
