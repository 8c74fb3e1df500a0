// Tests never sleep to wait for something: they poll for the condition with a deadline.

export async function waitFor<T>(
  check: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  const interval = opts.intervalMs ?? 20;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const why = lastErr ? `; last error: ${String(lastErr)}` : '';
      throw new Error(
        `timed out after ${opts.timeoutMs ?? 10_000} ms waiting for ${(typeof opts.what === 'function' ? opts.what() : opts.what) ?? 'condition'}${why}`,
      );
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
