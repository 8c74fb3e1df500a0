// /metrics content negotiation: Prometheus text 0.0.4 by default, OpenMetrics 1.0.0 when the Accept header prefers
// it (exemplars — the probe run id on the probe histograms — exist only there), gzip when Accept-Encoding allows.
import { promisify } from 'node:util';
import { constants, gzip as gzipCb, type ZlibOptions } from 'node:zlib';
import client from 'prom-client';
import type { Format } from '../metrics/metrics-render.js';

const gzip = promisify<Buffer, ZlibOptions, Buffer>(gzipCb);

/** The q value of each media range / coding in an Accept or Accept-Encoding header (absent q = 1). */
function qualities(header: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [range, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (!range) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/.exec(p);
      if (m) q = Number(m[1]);
    }
    // The best q wins when a range repeats (OpenMetrics is often listed once per version).
    out.set(range, Math.max(out.get(range) ?? 0, Number.isFinite(q) ? q : 0));
  }
  return out;
}

/** Whether to answer in OpenMetrics: it is accepted with a q at least that of the text format. */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  const q = qualities(accept);
  const om = q.get('application/openmetrics-text') ?? 0;
  const text = Math.max(q.get('text/plain') ?? 0, q.get('text/*') ?? 0, q.get('*/*') ?? 0);
  return om > 0 && om >= text;
}

export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  const q = qualities(acceptEncoding);
  return (q.get('gzip') ?? q.get('*') ?? 0) > 0;
}

export interface Exposition {
  /** Redacted already (metrics-render.ts redacts each series' labels once), compressed when `encoding` says so. */
  body: Buffer;
  contentType: string;
  encoding?: 'gzip';
}

// gzip level 1 (BEST_SPEED), not zlib's default 6: on the 50-target bodies it takes a third of the CPU (text 2.6 MB:
// 4.4 vs 13.8 ms; OpenMetrics 2.7 MB: 5.5 vs 16.6 ms) for a body ~25% larger (125 vs 101 KiB, 173 vs 140 KiB),
// docs/decisions.md "The /metrics scrape as Prometheus makes it". Prometheus client_golang's promhttp compresses
// at Go's default level (prometheus/promhttp/http.go, gzipPool: `gzip.NewWriter(nil)`); we depart from it because
// a scrape every 15 s over a local network is short of CPU here (issue 18's budget), not of bandwidth.
const GZIP = { level: constants.Z_BEST_SPEED };

/**
 * Renders the registry as the request asks: `render` writes the (redacted) body in the negotiated format, which is
 * then gzipped when Accept-Encoding allows. The body stays a Buffer from render to socket.
 */
export async function exposition(
  registry: client.Registry,
  headers: { accept?: string; 'accept-encoding'?: string },
  render: (format: Format) => Promise<Buffer>,
): Promise<Exposition> {
  const om = wantsOpenMetrics(headers.accept);
  const body = await render(om ? 'openmetrics' : 'text');
  const contentType = om ? client.Registry.OPENMETRICS_CONTENT_TYPE : registry.contentType;
  if (!acceptsGzip(headers['accept-encoding'])) return { body, contentType };
  return { body: await gzip(body, GZIP), contentType, encoding: 'gzip' };
}
