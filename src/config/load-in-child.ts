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

/** loadConfigFile in a child process; the same result, or the same ConfigError, as loading it in process. */
export async function loadConfigInChild(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  if (!inChild) {
    const { loadConfigFile } = await import('./load.js');
    return loadConfigFile(file, env);
  }
  const request: LoadRequest = { file, env: { ...env } };
  const answer = await new Promise<LoadResponse>((resolve, reject) => {
    // No node flags of the daemon's: they size a long-lived heap; this process lives for one parse.
    const child = fork(CHILD, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    child.once('message', (m: unknown) => {
      settled = true;
      resolve(m as LoadResponse);
    });
    child.once('error', (err) => {
      settled = true;
      reject(err);
    });
    child.once('exit', (code, signal) => {
      if (!settled)
        reject(new Error(`the config loader process exited (${code ?? signal}) without an answer`));
    });
    child.send(request);
  });
  if (answer.ok) return answer.loaded;
  if ('configError' in answer) throw new ConfigError(answer.configError.path, answer.configError.problems);
  const err = new Error(answer.error.message);
  if (answer.error.stack !== undefined) err.stack = answer.error.stack;
  throw err;
}
