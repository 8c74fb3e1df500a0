// Maps an engine's scraped metrics to the fields of an EngineSignal: load (running, queued, PD queues),
// monotonic progress counters (finished, generated) and the failure counters a watchdog needs. Each engine's
// families live in ./mappings/ (one file per engine); a scrape that holds several (an engine behind the router
// on one port) is the sum of what each mapping found.
import type { Sample } from './promtext.js';
import { ENGINE_MAPPINGS, type EngineFields } from './mappings/index.js';

export type { EngineFields } from './mappings/index.js';

/** What a scrape retains: the families and label names some mapping reads (promtext.ts ParseOptions). */
export const SCRAPE_FAMILIES: ReadonlySet<string> = new Set(ENGINE_MAPPINGS.flatMap((m) => m.families));
export const SCRAPE_LABELS: ReadonlySet<string> = new Set(ENGINE_MAPPINGS.flatMap((m) => m.labels));

const MAX_FIELDS = new Set<keyof EngineFields>([
  'tokenUsage',
  'kvTransferLatencyMs',
  'routerOldestInflightMs',
]);

export function mapEngineMetrics(samples: Sample[]): EngineFields {
  const out: EngineFields = {};
  const engines = ENGINE_MAPPINGS.filter((m) => m.detect(samples)).filter((m) => m.name !== 'router');
  // The router's load counts only when no engine reports its own (it would count the same requests twice).
  const mappings = engines.length > 0 ? engines : ENGINE_MAPPINGS.filter((m) => m.detect(samples));
  for (const m of mappings) {
    const { ranks, sleeping, ...numbers } = m.map(samples);
    // Ranks come from one engine's own labels: a second mapping's ranks would be another engine's.
    if (ranks !== undefined) out.ranks ??= ranks;
    // Asleep only when every engine that says says so: one awake engine serves.
    if (sleeping !== undefined) out.sleeping = (out.sleeping ?? true) && sleeping;
    for (const [k, v] of Object.entries(numbers) as [
      Exclude<keyof EngineFields, 'ranks' | 'sleeping'>,
      number | undefined,
    ][]) {
      if (v === undefined) continue;
      const prev = out[k];
      out[k] = prev === undefined ? v : MAX_FIELDS.has(k) ? Math.max(prev, v) : prev + v;
    }
  }
  return out;
}
