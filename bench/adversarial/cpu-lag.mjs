// @ts-check
/* global performance, setInterval */
// Loaded into a daemon under test (`node --import …/cpu-lag.mjs`, bench only): its event-loop lag in its own CPU
// time. A timer due every PERIOD_MS records, each time it fires, the CPU time the main thread (the event loop's)
// ran since it last fired (/proc/thread-self/schedstat, ns; up to a scheduler tick stale): whatever ran in
// between held the loop that long in the daemon's own work. Host load stretches that work in wall time — the lag
// gauge counts it: on a shared 2-core host a 30 ms burst lagged 300 ms — not in CPU time. Every 250 ms it
// appends `unix-ms worst-cpu-ms worst-wall-lag-ms` to $WW_CPU_LAG_FILE. Costs ~1 % of a core (a /proc read per
// tick), which is why it is a bench instrument and not the daemon's gauge.
import { appendFileSync, readFileSync } from 'node:fs';

/** The main thread's CPU time in ms (this module runs on it). */
const threadCpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;

const PERIOD_MS = 10;
const file = process.env.WW_CPU_LAG_FILE;
if (file) {
  let worstCpu = 0;
  let worstWall = 0;
  let last = threadCpuMs();
  let due = performance.now() + PERIOD_MS;
  const tick = () => {
    const cpu = threadCpuMs();
    worstCpu = Math.max(worstCpu, cpu - last);
    last = cpu;
    const now = performance.now();
    worstWall = Math.max(worstWall, now - due);
    due = now + PERIOD_MS;
    setTimeout(tick, PERIOD_MS).unref();
  };
  setTimeout(tick, PERIOD_MS).unref();
  setInterval(() => {
    appendFileSync(file, `${Date.now()} ${worstCpu.toFixed(1)} ${worstWall.toFixed(1)}\n`);
    worstCpu = 0;
    worstWall = 0;
  }, 250).unref();
}
