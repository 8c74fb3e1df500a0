// @ts-check
// The bench:ingest files the comparison benches share: build roots from the command line (default: this checkout),
// the 1M-line tuned and varied SGLang logs and the tuned log as JSON records, written under the OS temp dir when
// missing, so every bench reads the same bytes.
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLog } from '../test/helpers/ingest-gen.mjs';
import { writeJsonLog } from './ingest-json.mjs';
import { writeVariedLog } from './ingest-varied.mjs';

/** The build roots named on the command line, or this checkout. */
export function buildRoots(argv = process.argv.slice(2)) {
  return (argv.length > 0 ? argv : [fileURLToPath(new URL('..', import.meta.url))]).map((r) => resolve(r));
}

export const LINES = Number(process.env.LINES ?? 1_000_000);
/** Where the files (and bench:ingest's mtail programs) live. */
export const BENCH_DIR = join(tmpdir(), 'wedgewatch-bench');
const dir = BENCH_DIR;

/** The path of generator `name`'s file at LINES lines. */
export const fileOf = (/** @type {string} */ name) => join(dir, `sglang-${name}-${LINES}.log`);

/** @type {Record<string, (f: string) => Promise<unknown>>} */
const writers = {
  tuned: (f) => writeLog(f, LINES, { seed: 42, faults: true }),
  varied: (f) => writeVariedLog(f, LINES, { seed: 7 }),
  json: async (f) => {
    await ensureFiles(['tuned']);
    await writeJsonLog(fileOf('tuned'), f);
  },
};

/** Writes each named generator's file unless it is there already. */
/** @param {string[]} names */
export async function ensureFiles(names) {
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    const write = writers[name];
    if (write === undefined) throw new Error(`unknown generator ${name} (tuned, varied, json)`);
    if (existsSync(fileOf(name))) continue;
    // Written aside and renamed: an interrupted run must not leave a half file the next run takes as whole.
    const part = `${fileOf(name)}.part`;
    await write(part);
    renameSync(part, fileOf(name));
  }
}
