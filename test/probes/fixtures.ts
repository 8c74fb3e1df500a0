// Builders for probe runs in tests: parsed through the real schema, so defaults match the daemon's.
import {
  endpointSchema,
  probeSchema,
  type EndpointConfig,
  type ProbeConfig,
} from '../../src/config/schema.js';
import { EndpointDispatchers, tlsOptions } from '../../src/sources/probes/http.js';
import { runProbe, type RunOutcome } from '../../src/sources/probes/runner.js';
import type { ConnKind } from '../../src/core/signals.js';

export function endpoint(url: string, extra: Record<string, unknown> = {}): EndpointConfig {
  return endpointSchema.parse({ name: 'hop', url, ...extra });
}

export function probe(kind: ProbeConfig['kind'], extra: Record<string, unknown> = {}): ProbeConfig {
  return probeSchema.parse({ name: kind, kind, every: '15s', timeout: '3s', ...extra });
}

export function hop(url: string, extra: Record<string, unknown> = {}): EndpointDispatchers {
  const e = endpoint(url, extra);
  return new EndpointDispatchers(e, tlsOptions(e));
}

/** Runs a probe once over a throwaway hop (closed afterwards). */
export async function runOnce(
  url: string,
  kind: ProbeConfig['kind'],
  opts: {
    probe?: Record<string, unknown>;
    endpoint?: Record<string, unknown>;
    conn?: ConnKind;
    timeline?: boolean;
  } = {},
): Promise<RunOutcome> {
  const h = hop(url, opts.endpoint);
  try {
    return await runProbe({
      target: 't',
      model: 'm',
      probe: probe(kind, opts.probe),
      hop: h,
      conn: opts.conn ?? 'fresh',
      headers: {},
      timeline: opts.timeline,
    });
  } finally {
    await h.close();
  }
}
