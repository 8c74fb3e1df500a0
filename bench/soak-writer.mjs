// Log writer for bench/soak.mjs, in a worker thread (an engine writing its log is another process): appends
// SGLang-style lines as fast as the disk takes them, and rotates by rename when told to.
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { makeLineSource } from '../test/helpers/ingest-gen.mjs';

const { file } = workerData;
const next = makeLineSource({ seed: 9, faults: true });
let i = 0;
let fd = openSync(file, 'a');

parentPort.on('message', (m) => {
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
    parentPort.postMessage({ done: 'write', lines: m.lines, ms: performance.now() - t0 });
  } else if (m.cmd === 'rotate') {
    closeSync(fd);
    renameSync(file, `${file}.1`);
    fd = openSync(file, 'a');
    parentPort.postMessage({ done: 'rotate' });
  } else if (m.cmd === 'stop') {
    closeSync(fd);
    process.exit(0);
  }
});
parentPort.postMessage({ ready: true });
