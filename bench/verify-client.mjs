// @ts-check
// bench:verify — how many streamed tokens/s the verify load client sustains on one core. The simulator runs in
// a child process (its own core) at a fast setting; this process only runs the client, so its CPU time is the
// client's cost. Prints the wall-clock rate and the rate per client CPU-second (the one-core capacity).
// Usage: npm run bench:verify [-- --concurrency 64 --requests 256 --max-tokens 512]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { runLoad } from '../dist/verify/load-run.js';
import { makeTarget } from '../dist/verify/target.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '64' },
    requests: { type: 'string', default: '256' },
    'max-tokens': { type: 'string', default: '512' },
  },
});
const concurrency = Number(values.concurrency);
const n = Number(values.requests);
const maxTokens = Number(values['max-tokens']);

const simSource = `
  import { startSim } from ${JSON.stringify(new URL('../dist/sim/index.js', import.meta.url).href)};
  const sim = await startSim({ model: { stepBaseMs: 1, stepPerReqMs: 0, prefillMs: 1, maxRunning: 1024, defaultMaxTokens: 16 } });
  process.stdout.write(JSON.stringify(sim.urls) + '\\n');
  process.stdin.on('end', () => sim.stop().then(() => process.exit(0)));
  process.stdin.resume();
`;
const child = spawn(process.execPath, ['--input-type=module', '-e', simSource], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const urls = await new Promise((resolve, reject) => {
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
  });
  child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
});

try {
  const target = makeTarget(urls.router, 'sim-model');
  await runLoad(target, { concurrency: 8, n: 8, maxTokens: 32, timeoutMs: 30_000 }); // warm-up
  const cpu0 = process.cpuUsage();
  const run = await runLoad(target, { concurrency, n, maxTokens, timeoutMs: 120_000 });
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const tokens = run.results.reduce((s, r) => s + r.tokens, 0);
  const errs = run.results.filter((r) => !r.ok).length;
  const wallS = run.wallMs / 1000;
  console.log(`verify load client: C=${concurrency} n=${n} max_tokens=${maxTokens}`);
  console.log(
    `  streamed tokens=${tokens} errs=${errs} wall=${wallS.toFixed(2)}s client cpu=${cpuS.toFixed(2)}s`,
  );
  console.log(`  wall-clock rate:        ${(tokens / wallS).toFixed(0)} tok/s (bounded by the simulator)`);
  console.log(
    `  per client CPU-second:  ${(tokens / cpuS).toFixed(0)} tok/s (one-core capacity; target >= 20000)`,
  );
} finally {
  child.stdin.end();
}
