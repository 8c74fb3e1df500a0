// The short-lived child process that reads and validates the config for `run` (src/config/load-in-child.ts): zod,
// yaml and the schema load into this process, which exits once it has answered, instead of staying in the
// daemon's memory for its whole life (docs/decisions.md). An entry point of the esbuild bundle (scripts/bundle.mjs).
import { ConfigError } from './errors.js';
import { loadConfigFile } from './load.js';
import type { LoadRequest, LoadResponse } from './load-in-child.js';

process.once('message', (req: LoadRequest) => {
  let answer: LoadResponse;
  try {
    answer = { ok: true, loaded: loadConfigFile(req.file, req.env) };
  } catch (err) {
    answer =
      err instanceof ConfigError
        ? { ok: false, configError: { path: err.path, problems: err.problems } }
        : {
            ok: false,
            error: { message: String((err as Error)?.message ?? err), stack: (err as Error)?.stack },
          };
  }
  // Exit once the answer is written: the IPC channel would otherwise keep this process alive.
  process.send?.(answer, () => process.exit(0));
});
