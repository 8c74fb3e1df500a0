// @ts-check
// Log writer for bench/soak.mjs, in a worker thread (an engine writing its log is another process): appends
// SGLang-style lines as fast as the disk takes them, and rotates by rename when told to.
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { makeLineSource } from '../test/helpers/ingest-gen.mjs';

const { file } = workerData;
if (parentPort === null) throw new Error('soak-writer.mjs runs as a worker thread of bench/soak.mjs');
const port = parentPort;
const next = makeLineSource({ seed: 9, faults: true });
let i = 0;
let fd = openSync(file, 'a');

port.on('message', (m) => {
  if (m.cmd === 'write') {
    const t0 = performance.now();
    let batch = [];
    for (let k = 0; k < m.lines; k++) {
      batch.push(next(i++));
      if (batch.length === 2048 || k === m.lines - 1) {
        writeSync(fd, batch.join('\n') + '\n');
        batch = [];
      }
    }
    port.postMessage({ done: 'write', lines: m.lines, ms: performance.now() - t0 });
  } else if (m.cmd === 'rotate') {
    closeSync(fd);
    renameSync(file, `${file}.1`);
    fd = openSync(file, 'a');
    port.postMessage({ done: 'rotate' });
  } else if (m.cmd === 'stop') {
    closeSync(fd);
    process.exit(0);
  }
});
port.postMessage({ ready: true });
