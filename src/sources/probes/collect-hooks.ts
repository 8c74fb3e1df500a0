// Scrape-time updates for a gauge shared by several owners (one ProbeScheduler per target): each adds a
// hook, and the gauge's single prom-client `collect` runs them all, so in-flight ages are exact at scrape.
import type { Gauge } from 'prom-client';

type Hook = () => void;
const hooks = new WeakMap<object, Set<Hook>>();

/** Adds a hook run before every collection of `gauge`; returns the function that removes it. */
export function addCollectHook(gauge: Gauge<string>, hook: Hook): () => void {
  let set = hooks.get(gauge);
  if (set === undefined) {
    const all = new Set<Hook>();
    set = all;
    hooks.set(gauge, all);
    // prom-client reads `collect` from the instance at scrape time but does not declare it on the type.
    const g = gauge as unknown as { collect?: () => void | Promise<void> };
    const previous = g.collect;
    g.collect = () => {
      for (const h of all) h();
      return previous?.call(gauge);
    };
  }
  set.add(hook);
  return () => set.delete(hook);
}
