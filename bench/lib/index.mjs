// @ts-check
// The helpers every bench used to write for itself (reliability, steady, adversarial, detect): sleep, a poll with a
// deadline, a free loopback port, children that are always killed, and the seeded PRNG. One module, typed by JSDoc
// and checked by tsconfig.bench.json.
import { createServer } from 'node:net';

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `fn` until it returns a truthy value, every `intervalMs`; past `timeoutMs` throws naming `what`.
 * @template T
 * @param {string} what
 * @param {() => T | Promise<T>} fn
 * @param {{ timeoutMs?: number, intervalMs?: number }} [opts]
 * @returns {Promise<NonNullable<T>>}
 */
export async function until(what, fn, { timeoutMs = 60_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return /** @type {NonNullable<T>} */ (v);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** A port free on 127.0.0.1 a moment ago (the kernel's pick for port 0). */
export async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  const addr = s.address();
  await new Promise((r) => s.close(() => r(undefined)));
  if (addr === null || typeof addr === 'string') throw new Error('no TCP address for a listening socket');
  return addr.port;
}

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();

/**
 * Registers a child to be killed on any exit of the bench (a crash, a failed check, Ctrl-C).
 * @template {import('node:child_process').ChildProcess} C
 * @param {C} child
 * @returns {C}
 */
export function track(child) {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Kills every tracked child (SIGKILL). */
export function killAll() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', killAll);
for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

// mulberry32 (the same function as src/sim/prng.ts, which a bench cannot import before a build) from the line
// generator the ingest benches and the rule tests share.
export { mulberry32 } from '../../test/helpers/ingest-gen.mjs';
