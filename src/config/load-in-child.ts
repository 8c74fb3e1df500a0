// `run` validates its config file (at start and on every reload) in a short-lived child process
// (src/config/load-child.ts) and keeps what it sends back over IPC with V8's serializer, the structured clone
// algorithm: the config is plain objects, arrays, a Map and primitives, which the clone copies exactly (a test keeps
// it so). zod and yaml then never load into the daemon, ~5 MB less steady RSS at one target; a worker thread saved
// less, its freed memory stayed in the daemon's malloc arenas (bench:steady, docs/decisions.md). A bad file's
// ConfigError comes back with its path and problems.
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from './errors.js';
import type { LoadedConfig } from './load.js';

export interface LoadRequest {
  file: string;
  env: NodeJS.ProcessEnv;
}

export type LoadResponse =
  | { ok: true; loaded: LoadedConfig }
  | { ok: false; configError: { path: string; problems: string[] } }
  | { ok: false; error: { message: string; stack?: string } };

// Beside this module both in the bundle (dist/load-child.js next to its chunks) and in tsc's per-module output
// (dist/config/). Absent when this runs from TypeScript source (vitest): then the config loads in process.
const CHILD = fileURLToPath(new URL('./load-child.js', import.meta.url));

/** Whether loadConfigInChild forks (false when running from source, where there is no .js child entry). */
export const inChild = existsSync(CHILD);

export interface LoadOptions {
  timeoutMs?: number;
  /** Called when no loader process could be started and the config was loaded in process instead. */
  onFallback?: (why: string) => void;
  /** Tests: another loader script, another node binary. */
  childPath?: string;
  execPath?: string;
}

/** loadConfigFile in a child process; the same result, or the same ConfigError, as loading it in process. */
export async function loadConfigInChild(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: LoadOptions = {},
): Promise<LoadedConfig> {
  const { timeoutMs = LOAD_TIMEOUT_MS, onFallback } = opts;
  const inProcess = async () => (await import('./load.js')).loadConfigFile(file, env);
  if (!inChild && opts.childPath === undefined) return inProcess();
  const request: LoadRequest = { file, env: { ...env } };
  let answer: LoadResponse;
  try {
    answer = await ask(request, timeoutMs, opts.childPath ?? CHILD, opts.execPath);
  } catch (err) {
    if (!(err instanceof SpawnError)) throw err;
    // No process could be started (a process limit, no memory for one): the config is still loaded, in
    // process; memory is not worth a daemon that cannot start or reload.
    onFallback?.(err.message);
    return inProcess();
  }
  if (answer.ok) return answer.loaded;
  if ('configError' in answer) throw new ConfigError(answer.configError.path, answer.configError.problems);
  const err = new Error(answer.error.message);
  if (answer.error.stack !== undefined) err.stack = answer.error.stack;
  throw err;
}

/** A loader that has not answered in this long is killed: the load fails (a start fails, a reload is refused). */
export const LOAD_TIMEOUT_MS = 30_000;

/** The loader process could not be started at all. */
class SpawnError extends Error {}

function ask(
  request: LoadRequest,
  timeoutMs: number,
  childPath: string,
  execPath?: string,
): Promise<LoadResponse> {
  return new Promise<LoadResponse>((resolve, reject) => {
    let child: ReturnType<typeof fork>;
    try {
      // No node flags of the daemon's: they size a long-lived heap; this process lives for one parse.
      child = fork(childPath, [], {
        ...(execPath !== undefined ? { execPath } : {}),
        execArgv: [],
        serialization: 'advanced',
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
    } catch (err) {
      reject(new SpawnError(`cannot start the config loader: ${(err as Error).message}`));
      return;
    }
    let settled = false;
    let spawned = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(
        new Error(`the config loader gave no answer in ${timeoutMs / 1000} s (a file that never ends?)`),
      );
    }, timeoutMs);
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    child.once('spawn', () => (spawned = true));
    child.once('message', (m: unknown) => done(() => resolve(m as LoadResponse)));
    // on, not once: a failed spawn is followed by the failed send's EPIPE.
    child.on('error', (err) =>
      done(() => reject(spawned ? err : new SpawnError(`cannot start the config loader: ${err.message}`))),
    );
    child.once('exit', (code, signal) =>
      done(() => reject(new Error(`the config loader process exited (${code ?? signal}) without an answer`))),
    );
    try {
      // With a callback, a failed send is handed to it rather than emitted: the 'error' or 'exit' event says why.
      child.send(request, () => {});
    } catch {
      // The channel is already closed: the same events say why.
    }
  });
}
