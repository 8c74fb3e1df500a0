#!/usr/bin/env node
// The real engine as a fixture (issue 38): upstream llama.cpp's `llama-server`, built here, serving a random-weight
// model. This machine reaches the npm registry and no other network, so the source comes from an npm package: the
// pinned `node-llama-cpp` ships llama.cpp's source as a git bundle (package/llama/gitRelease.bundle), at a commit
// we check. Only `llama-server` is built (no curl, no tests or examples, portable CPU code); the model is written by
// scripts/real-llama/gen-model.py with the source's own gguf-py, vocabulary and chat template.
//
// Cache: ~/.cache/wedgewatch/llama-server-<commit>/ ($XDG_CACHE_HOME honoured, WEDGEWATCH_CACHE overrides the root),
// outside the repository: src/ (the bundle's tree), build/ (cmake), model.gguf, ready.json (written last: what was
// built, how, and the cold times). A cache whose ready.json matches the pin and the flags is reused as it is; a new
// pin is a new directory, so it is rebuilt; a changed generator rewrites only the model.
//
// Usage: node scripts/real-llama/fixture.mjs           warm the cache (cold: build; warm: check), print the times
//        node scripts/real-llama/fixture.mjs --check   exit 0 when warm, 1 (saying how to warm it) when not
/* global performance */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pin. A new version of the package carries another llama.cpp commit: change both together. */
export const PIN = Object.freeze({
  package: 'node-llama-cpp',
  version: '3.21.1',
  commit: '80fb11ac73e66d89eae2c6a91d8a77428fa733ed',
});

/** cmake's configure flags: only what llama-server needs, and code that runs on any x86-64 (no -march=native). */
export const CMAKE_FLAGS = Object.freeze([
  '-DCMAKE_BUILD_TYPE=Release',
  '-DLLAMA_CURL=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DGGML_NATIVE=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
]);

const GENERATOR = fileURLToPath(new URL('./gen-model.py', import.meta.url));
export const WARM_COMMAND = 'node scripts/real-llama/fixture.mjs';

export function cacheRoot() {
  if (process.env.WEDGEWATCH_CACHE) return process.env.WEDGEWATCH_CACHE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'wedgewatch');
}

function generatorHash() {
  return createHash('sha256').update(readFileSync(GENERATOR)).digest('hex').slice(0, 16);
}

/** Where the fixture lives and whether it is warm; `missing` says what is not there. */
export function fixturePaths() {
  const dir = join(cacheRoot(), `llama-server-${PIN.commit.slice(0, 7)}`);
  const server = join(dir, 'build', 'bin', 'llama-server');
  const model = join(dir, 'model.gguf');
  const readyFile = join(dir, 'ready.json');
  let ready;
  try {
    ready = JSON.parse(readFileSync(readyFile, 'utf8'));
  } catch {
    ready = undefined;
  }
  let missing;
  if (!existsSync(server)) missing = `no llama-server at ${server}`;
  else if (!existsSync(model)) missing = `no model at ${model}`;
  else if (!ready) missing = `no ${readyFile} (an interrupted build)`;
  else if (ready.commit !== PIN.commit || ready.flags?.join(' ') !== CMAKE_FLAGS.join(' '))
    missing = `${readyFile} was built with other settings`;
  else if (ready.generator !== generatorHash()) missing = `the model was written by another gen-model.py`;
  return {
    dir,
    src: join(dir, 'src'),
    server,
    model,
    readyFile,
    ready,
    warm: missing === undefined,
    missing,
  };
}

/** The message a lane prints when the cache is cold: what is missing and the one command that warms it. */
export function coldMessage(p = fixturePaths()) {
  return `the real llama-server fixture is not built (${p.missing}). Warm it with: ${WARM_COMMAND}  (~10 min on 2 cores, once per pin; or WARM_REAL=1 bash .ci/run)`;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: opts.log ? ['ignore', 'pipe', 'pipe'] : 'inherit', ...opts });
  if (opts.log) writeFileSync(opts.log, `${r.stdout ?? ''}${r.stderr ?? ''}`, { flag: 'a' });
  if (r.status !== 0) {
    const tail = opts.log ? `\n${readFileSync(opts.log, 'utf8').split('\n').slice(-30).join('\n')}` : '';
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.error ?? `exit ${r.status}`})${tail}`);
  }
  return r;
}

const seconds = (t0) => Math.round((performance.now() - t0) / 100) / 10;

/** numpy for gen-model.py, from the Python package index when this python has none (as .ci/run does py-spy). */
function ensureNumpy() {
  if (spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0) return;
  const pip = (extra) =>
    spawnSync('python3', ['-m', 'pip', 'install', '--quiet', ...extra, 'numpy'], { stdio: 'inherit' })
      .status === 0;
  if (!pip([]) && !pip(['--break-system-packages']))
    throw new Error('could not install numpy from the Python package index (gen-model.py needs it)');
}

/** The source at the pinned commit: `npm pack` the package, clone its bundle. */
function fetchSource(p, times) {
  const t0 = performance.now();
  const tmp = mkdtempSync(join(tmpdir(), 'ww-llama-pack-'));
  try {
    run('npm', ['pack', '--silent', `${PIN.package}@${PIN.version}`, '--pack-destination', tmp], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tgz = join(tmp, `${PIN.package}-${PIN.version}.tgz`);
    run('tar', ['xzf', tgz, '-C', tmp, 'package/llama/gitRelease.bundle']);
    const bundle = join(tmp, 'package', 'llama', 'gitRelease.bundle');
    rmSync(p.src, { recursive: true, force: true });
    run('git', ['clone', '--quiet', bundle, p.src]);
    run('git', ['-C', p.src, 'checkout', '--quiet', PIN.commit]);
    const head = spawnSync('git', ['-C', p.src, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    if (head !== PIN.commit) throw new Error(`the bundle's HEAD is ${head}, the pin says ${PIN.commit}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  times.fetch = seconds(t0);
}

/** Only llama-server, niced and on two jobs: the machine is shared. */
function build(p, times) {
  const t0 = performance.now();
  const log = join(p.dir, 'build.log');
  writeFileSync(log, '');
  const jobs = process.env.WEDGEWATCH_BUILD_JOBS ?? '2';
  run('nice', ['-n', '15', 'cmake', '-S', p.src, '-B', join(p.dir, 'build'), ...CMAKE_FLAGS], { log });
  run(
    'nice',
    ['-n', '15', 'cmake', '--build', join(p.dir, 'build'), '--target', 'llama-server', `-j${jobs}`],
    {
      log,
    },
  );
  times.build = seconds(t0);
}

function generateModel(p, times) {
  const t0 = performance.now();
  ensureNumpy();
  const tmpModel = `${p.model}.tmp`;
  run('python3', [GENERATOR, p.src, tmpModel]);
  renameSync(tmpModel, p.model);
  times.model = seconds(t0);
}

/** Makes the cache warm (each missing piece only) and returns its paths and the times each step took. */
export function ensureFixture() {
  const t0 = performance.now();
  let p = fixturePaths();
  if (p.warm) return { ...p, times: { warm: seconds(t0) }, cold: false };
  mkdirSync(p.dir, { recursive: true });
  const times = {};
  const sameBuild = p.ready?.commit === PIN.commit && p.ready?.flags?.join(' ') === CMAKE_FLAGS.join(' ');
  if (!sameBuild || !existsSync(p.server)) {
    // An interrupted build resumes: cmake keeps what it compiled. A source at another commit is fetched again.
    const head = existsSync(p.src)
      ? spawnSync('git', ['-C', p.src, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout?.trim()
      : '';
    if (head !== PIN.commit) fetchSource(p, times);
    build(p, times);
  }
  if (!existsSync(p.model) || p.ready?.generator !== generatorHash()) generateModel(p, times);
  const ready = {
    commit: PIN.commit,
    package: `${PIN.package}@${PIN.version}`,
    flags: CMAKE_FLAGS,
    generator: generatorHash(),
    modelBytes: statSync(p.model).size,
    cold: { ...(p.ready?.cold ?? {}), ...times, total: seconds(t0) },
    at: new Date().toISOString(),
  };
  writeFileSync(p.readyFile, `${JSON.stringify(ready, null, 2)}\n`);
  p = fixturePaths();
  if (!p.warm) throw new Error(`the fixture is still not warm after building: ${p.missing}`);
  return { ...p, times: ready.cold, cold: true };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const p = fixturePaths();
    if (p.warm) {
      console.log(`warm: ${p.server}, ${p.model}`);
      process.exit(0);
    }
    console.error(coldMessage(p));
    process.exit(1);
  }
  try {
    const r = ensureFixture();
    const t = Object.entries(r.times)
      .map(([k, v]) => `${k} ${v} s`)
      .join(', ');
    console.log(`${r.cold ? 'cold' : 'warm'}: ${t}\n  server ${r.server}\n  model  ${r.model}`);
  } catch (err) {
    console.error(`real-llama fixture: ${err.message}`);
    process.exit(1);
  }
}
