// How the build writes dist/: a file whose bytes are already there is left alone, a changed one is replaced in one
// rename. Why: .ci/run starts the real-engine lane (a daemon from dist/cli.js, which imports its command chunks
// lazily) while `npm test` builds again; a rebuild of unchanged sources must not open a window in which a chunk is
// missing or half written (issue 39).
import { Buffer } from 'node:buffer';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** Writes `data` to `path` unless it already holds exactly that; returns whether it wrote. */
export function writeIfChanged(path, data) {
  const bytes = Buffer.from(data);
  if (existsSync(path) && readFileSync(path).equals(bytes)) return false;
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
  return true;
}
