// Writes the shipped entry point dist/cli.js after `tsc`: src/cli.ts and every module it loads, dependencies
// included, bundled by esbuild into dist/cli.js plus chunks (dist/chunk-*.js, dist/<command>-*.js). Each
// command stays a lazily imported chunk (cli.ts imports them dynamically), so `run` does not load sim, verify,
// replay or demo code. Why: one minified file per chunk instead of ~1,000 module files cut the daemon's steady RSS
// by ~10 MB at one target (less module source text held by V8, fewer module records; bench:steady,
// docs/decisions.md). tsc's per-module output stays in dist/ beside it for benches and tests that import a module.
// Chunks sit in dist/ itself: src/version.ts reads ../package.json and ./build-info.json relative to its module.
import { build } from 'esbuild';
import { readFileSync, rmSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeIfChanged } from './write-if-changed.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist/`;

// prom-client's index.js requires every part of the library as it loads: the Pushgateway (http, https, zlib and
// with them tls and crypto), the cluster aggregator, the default metrics (v8, perf_hooks, @opentelemetry/api) and
// the Summary (tdigest). wedgewatch uses none of them through the index (src/metrics-runtime.ts requires the
// default metrics it wants by path, at run time), yet loading them was a tenth of `replay`'s start-up (instructions
// of `node dist/cli.js replay /dev/null` under valgrind: 815M before, 725M after; issue 18). In the bundle they
// become getters that require on first use: same exports, loaded only if read. The build fails if the index no
// longer has the lines rewritten here.
const PROM_LAZY = ['Summary', 'Pushgateway', 'collectDefaultMetrics', 'AggregatorRegistry'];
const promClientLazy = {
  name: 'prom-client-lazy',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/ }, (args) => {
      let src = readFileSync(args.path, 'utf8');
      for (const name of PROM_LAZY) {
        const eager = new RegExp(`^exports\\.${name} = (require\\('[^']+'\\)(?:\\.\\w+)?);$`, 'm');
        if (!eager.test(src))
          throw new Error(`prom-client-lazy: no \`exports.${name} = require(…)\` in ${args.path}`);
        src = src.replace(
          eager,
          `Object.defineProperty(exports, '${name}', { enumerable: true, configurable: true, get: () => $1 });`,
        );
      }
      return { contents: src, loader: 'js' };
    });
  },
};

const result = await build({
  absWorkingDir: root,
  // `run` forks dist/load-child.js to validate its config (src/config/load-in-child.ts): zod, yaml and the schema
  // are in chunks the daemon itself never loads.
  entryPoints: ['src/cli.ts', 'src/config/load-child.ts'],
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Function and class names reach logs and messages (err.name, constructor names); minifying keeps them.
  keepNames: true,
  sourcemap: 'linked',
  // Bundled CommonJS dependencies call require() for node built-ins and read __dirname; ESM has neither.
  banner: {
    js: [
      "import { createRequire as __ww_createRequire } from 'node:module';",
      "import { fileURLToPath as __ww_fileURLToPath } from 'node:url';",
      'const require = __ww_createRequire(import.meta.url);',
      'const __filename = __ww_fileURLToPath(import.meta.url);',
      "const __dirname = __ww_fileURLToPath(new URL('.', import.meta.url));",
    ].join('\n'),
  },
  // Loaded at run time from node_modules, not bundled: pino-pretty only for --log.format pretty (src/lib/logger.ts
  // requires it by name). The bcrypt worker thread (src/outputs/server/bcrypt-pool.ts) also requires bcryptjs from there.
  external: ['pino-pretty'],
  logLevel: 'warning',
  metafile: true,
  plugins: [promClientLazy],
  // Written below, file by file, only where the bytes changed (scripts/write-if-changed.mjs).
  write: false,
});

for (const f of result.outputFiles) writeIfChanged(f.path, f.contents);
// Chunks of an earlier build have other hashes; leave only this build's.
const current = new Set(result.outputFiles.map((f) => basename(f.path)));
for (const f of readdirSync(dist)) {
  if (/^[\w-]+-[A-Z0-9]{8}\.js(\.map)?$/.test(f) && !current.has(f)) rmSync(dist + f);
}

// Which dependencies each output file carries (test/cli/bundle.test.ts checks `run`'s main thread loads no zod or
// yaml): { "dist/chunk-X.js": ["yaml", ...] }.
const packages = {};
for (const [out, meta] of Object.entries(result.metafile.outputs)) {
  if (!out.endsWith('.js')) continue;
  const names = new Set();
  for (const input of Object.keys(meta.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) names.add(m[1]);
  }
  packages[out] = [...names].sort();
}
writeIfChanged(`${dist}bundle-packages.json`, `${JSON.stringify(packages, null, 1)}\n`);
