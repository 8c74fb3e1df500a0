// @ts-check
// The log side of bench/soak.mjs: one LogWatcher following one file with the SGLang, NIXL and Python packs.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * @param {{ file: string, dir: string, metrics: any, logger: any }} opts `metrics` and `logger` are the dist build's
 *   (createMetrics, pino): loaded at run time from dist/, so typed here by their use only.
 */
export async function startLogSource({ file, dir, metrics, logger }) {
  const { LogWatcher } = await import('../dist/sources/logs/watcher.js');
  const { logSourceSchema } = await import('../dist/config/schema.js');
  let events = 0;
  const source = logSourceSchema.parse({
    service: 'prefill',
    path: file,
    packs: ['sglang', 'nixl', 'python'],
    from: 'start',
  });
  const watcher = new LogWatcher({
    target: 'soak',
    sources: [source],
    userRules: [],
    stateDir: join(dir, 'state'),
    metrics,
    logger,
    onEvent: () => events++,
    onEngine: () => {},
    // Experiment knob (not a product setting): the follower's read budget per event-loop turn.
    ...(process.env.SOAK_MAX_BYTES_PER_TICK
      ? { follow: { maxBytesPerTick: Number(process.env.SOAK_MAX_BYTES_PER_TICK) } }
      : {}),
  });
  await watcher.start();
  let read = 0;
  const refresh = async () => {
    const m = await metrics.logLines.get();
    read =
      m.values.find(
        (/** @type {{ labels: Record<string, string>, value: number }} */ v) =>
          v.labels.target === 'soak' && v.labels.service === 'prefill',
      )?.value ?? 0;
    return read;
  };
  return {
    lines: () => read,
    events: () => events,
    /** Waits until `n` lines have been read; throws (lines lost or stuck) after a generous deadline. */
    /** @param {number} n */
    async waitForLines(n, timeoutMs = 300_000) {
      const deadline = Date.now() + timeoutMs;
      while ((await refresh()) < n) {
        if (Date.now() > deadline)
          throw new Error(`log watcher read ${read} of ${n} lines within ${timeoutMs} ms`);
        await sleep(20);
      }
    },
    stop: () => watcher.stop(),
  };
}
