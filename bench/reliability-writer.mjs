// @ts-check
// The numbered-line writer of bench/reliability.mjs, in its own process (as an engine is): appends
// `[time] seq=N CRIT|info x… end` lines at RATE lines/s through an O_APPEND descriptor, one batch every 5 ms;
// every CRIT_EVERY-th line is critical. Commands on stdin, one per line, each answered `ok <cmd> <next seq>`:
//   reopen          close and reopen the path (after an external rename, as an app does on SIGHUP)
//   truncate N|past ftruncate the file to 0 and write N lines (or more bytes than it held) at once
//   partial MS      write half of the next critical line, nothing for MS ms, then the rest
//   pause | resume  stop and restart writing
//   stop            stop; prints {"total": N} and exits
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import readline from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';

const [file, rate = '2000', critEvery = '10'] = process.argv.slice(2);
const RATE = Number(rate);
const CRIT = Number(critEvery);
let fd = fs.openSync(file, 'a');
let seq = 0;
let paused = false;
let base = Date.now();
let baseSeq = 0;

const stamp = () => {
  const d = new Date();
  const p = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
};
const line = (/** @type {number} */ n) =>
  `[${stamp()}] seq=${n} ${n % CRIT === 0 ? 'CRIT' : 'info'} ${'x'.repeat(60)} end\n`;
const lines = (/** @type {number} */ k) => {
  let out = '';
  for (let i = 0; i < k; i++) out += line(seq++);
  return out;
};

const timer = setInterval(() => {
  if (paused) return;
  const want = baseSeq + Math.floor(((Date.now() - base) / 1000) * RATE);
  if (want > seq) fs.writeSync(fd, lines(want - seq));
}, 5);

const resumeClock = () => {
  base = Date.now();
  baseSeq = seq;
};

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (cmd) => {
  const [name, arg] = cmd.trim().split(/\s+/);
  if (name === 'reopen') {
    fs.closeSync(fd);
    fd = fs.openSync(file, 'a');
  } else if (name === 'truncate') {
    // `past`: more than the file held, so the regrown file is longer than any reader's position in it.
    const before = fs.fstatSync(fd).size;
    fs.ftruncateSync(fd, 0);
    if (arg === 'past') {
      let out = '';
      while (Buffer.byteLength(out) <= before) out += lines(100);
      fs.writeSync(fd, out);
    } else fs.writeSync(fd, lines(Number(arg)));
  } else if (name === 'partial') {
    paused = true;
    // The held line is a critical one: a line cut in two is then a lost event.
    if (seq % CRIT !== 0) fs.writeSync(fd, lines(CRIT - (seq % CRIT)));
    const text = line(seq++);
    const half = Math.floor(text.length / 2);
    fs.writeSync(fd, text.slice(0, half));
    await new Promise((r) => setTimeout(r, Number(arg)));
    fs.writeSync(fd, text.slice(half));
    paused = false;
    resumeClock();
  } else if (name === 'pause') {
    paused = true;
  } else if (name === 'resume') {
    paused = false;
    resumeClock();
  } else if (name === 'stop') {
    clearInterval(timer);
    fs.closeSync(fd);
    process.stdout.write(`ok stop ${seq}\n${JSON.stringify({ total: seq })}\n`);
    process.exit(0);
  }
  process.stdout.write(`ok ${name} ${seq}\n`);
});
