// /metrics content negotiation: Prometheus text 0.0.4 by default, OpenMetrics 1.0.0 when the Accept header prefers
// it (exemplars — the probe run id on the probe histograms — exist only there), gzip when Accept-Encoding allows.
import { promisify } from 'node:util';
import { constants, gzip as gzipCb, type ZlibOptions } from 'node:zlib';
import client from 'prom-client';
import type { Format } from '../metrics-render.js';

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

// gzip level 1 (BEST_SPEED), not zlib's default 6: on the 50-target body (2.6 MB text, 2.7 MB OpenMetrics) it
// takes a fraction of the CPU for a body a little larger (figures in docs/decisions.md, "gzip level"). Prometheus
// client_golang's promhttp compresses with Go's default level (prometheus/promhttp/http.go: gzipPool's
// `gzip.NewWriter(nil)`), but Go's deflate at its default is much cheaper than zlib's level 6 on this kind of text,
// and a scrape is a local, once-in-15-s transfer where CPU is the scarcer resource.
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
