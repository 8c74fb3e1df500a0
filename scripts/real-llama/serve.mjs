#!/usr/bin/env node
// The fixture's llama-server in the foreground, for a person or `wedgewatch verify` (issue 38): prints its URL and
// log file, runs until Ctrl-C (or SIGTERM), then stops it.
// Usage: node scripts/real-llama/serve.mjs [--port N] [--parallel N] [--ctx-size N]
import { parseArgs } from 'node:util';
import { startLlama } from './harness.mjs';

const { values: a } = parseArgs({
  options: {
    port: { type: 'string' },
    parallel: { type: 'string', default: '2' },
    'ctx-size': { type: 'string', default: '8192' },
  },
});
const llama = await startLlama({
  port: a.port ? Number(a.port) : undefined,
  parallel: Number(a.parallel),
  ctxSize: Number(a['ctx-size']),
});
console.log(
  `llama-server ${llama.url} (pid ${llama.pid}, ready in ${(llama.readyMs / 1000).toFixed(1)} s), log ${llama.logFile}`,
);
let stopping = false;
const stop = async () => {
  stopping = true;
  await llama.cleanup();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
void llama.exited.then((e) => {
  if (stopping) return;
  console.error(`llama-server exited: ${JSON.stringify(e)}`);
  process.exit(1);
});
