// The two test lanes (issue 39 item 2), decided by a rule, not a list, so a test file another branch adds lands in a
// lane without anyone editing this file:
// - e2e: the file, or a test-local module it imports (followed transitively inside test/), imports something that
//   runs outside this process or on the wall clock by nature: `node:child_process` (the daemon, the CLI, Prometheus,
//   Alertmanager, Chromium, HAProxy, journald tools, python engines), the built bundle (`dist/`), or a simulator's
//   servers (`src/sim/index`, `src/sim/vllm/index`, `src/sim/gateway`, `src/sim/pd-worker`). A file whose process
//   comes from src (a log source that spawns journalctl, say) says so with a `// lane: e2e` line; a helper whose
//   process is a quick local tool (openssl making a certificate) says `// lane: fast`, and importing it is not enough.
// - fast: everything else under test/ (unit, the pure core, the detector on the virtual clock, fixtures).
// test/real/** (the real llama.cpp lane, `npm run test:real`) is in neither.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export type Lane = 'fast' | 'e2e';

export const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const TEST = join(ROOT, 'test');

/** Folders under test/ that belong to neither lane (they have their own command). */
export const OWN_LANES = ['real'];

/** Import specifiers that put a file in the end-to-end lane. */
const E2E_IMPORTS: RegExp[] = [
  /^(node:)?child_process$/,
  /(^|\/)dist\//,
  /\/src\/sim\/(index|gateway|pd-worker|pd-workers|vllm\/index)\.js$/,
];

/** The explicit markers: a process or wall-clock dependency that comes through src; a helper that is quick. */
const MARKER = /^\/\/ lane: e2e\b/m;
/** A path into the built bundle written as a string literal (a URL of ../../dist/x.js, say): a forked child. */
const DIST_PATH = /['"`](?:\.\.?\/)*dist\/[\w$]/;
const QUICK_HELPER = /^\/\/ lane: fast\b/m;

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

/** A test-local import's file (`./x.js` is `./x.ts` on disk), or undefined outside test/ or not found. */
function localFile(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const abs = resolve(dirname(from), spec);
  if (!abs.startsWith(TEST + '/')) return undefined;
  for (const f of [abs, abs.replace(/\.js$/, '.ts'), abs.replace(/\.mjs$/, '.mts')])
    if (existsSync(f)) return f;
  return undefined;
}

/** Why `file` (absolute) is end to end: the chain of imports that reaches a marker, or undefined for fast. */
export function e2eReason(file: string, seen = new Set<string>()): string | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  if (seen.size > 1 && QUICK_HELPER.test(text)) return undefined;
  if (MARKER.test(text)) return `${relative(ROOT, file)}: // lane: e2e`;
  if (DIST_PATH.test(text)) return `${relative(ROOT, file)} names a path in dist/`;
  for (const spec of importsOf(text)) {
    const abs = spec.startsWith('.') ? resolve(dirname(file), spec) : spec;
    if (E2E_IMPORTS.some((r) => r.test(spec) || r.test(abs)))
      return `${relative(ROOT, file)} imports ${spec}`;
    const local = localFile(file, spec);
    const why = local && e2eReason(local, seen);
    if (why) return `${relative(ROOT, file)} → ${why}`;
  }
  return undefined;
}

export function laneOf(file: string): Lane {
  return e2eReason(resolve(ROOT, file)) === undefined ? 'fast' : 'e2e';
}

/** Every test file under test/ outside OWN_LANES, relative to the repository root. */
export function testFiles(dir = TEST): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (dir === TEST && OWN_LANES.includes(e.name)) continue;
      out.push(...testFiles(p));
    } else if (e.name.endsWith('.test.ts')) out.push(relative(ROOT, p));
  }
  return out.sort();
}

/**
 * A fast file that replaces a module (`vi.mock`, `vi.doMock`): it needs a module graph of its own. The rest of the
 * fast lane shares one per worker (no isolation), which cuts its import time four-fold; a mocked `node:fs` would be
 * the real one there, already imported by the file before it.
 */
const MOCKS = /\bvi\.(?:do)?[mM]ock\(/;
export function mocksModules(file: string): boolean {
  return MOCKS.test(readFileSync(resolve(ROOT, file), 'utf8'));
}

/** The files of each lane. */
export function lanes(): Record<Lane, string[]> {
  const out: Record<Lane, string[]> = { fast: [], e2e: [] };
  for (const f of testFiles()) out[laneOf(f)].push(f);
  return out;
}
