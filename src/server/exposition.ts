// /metrics content negotiation: Prometheus text 0.0.4 by default, OpenMetrics 1.0.0 when the Accept header prefers
// it (exemplars — the probe run id on the probe histograms — exist only there), gzip when Accept-Encoding allows.
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import client from 'prom-client';

const gzip = promisify(gzipCb);

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

/**
 * The registry's families in OpenMetrics. prom-client renders OpenMetrics only from a registry of that type, and
 * renames counters in place while doing so (it strips `_total`); each metric is wrapped in an object that inherits
 * from it, so the rename lands on the wrapper and the shared registry keeps rendering the text format unchanged.
 */
export async function openMetrics(registry: client.Registry): Promise<string> {
  const om = new client.Registry<client.OpenMetricsContentType>();
  om.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE);
  for (const metric of registry.getMetricsAsArray())
    om.registerMetric(Object.create(metric) as client.Metric);
  return om.metrics();
}

export interface Exposition {
  body: string | Buffer;
  contentType: string;
  encoding?: 'gzip';
}

/** Renders the registry as the request asks; `redact` runs on a text before it is compressed. */
export async function exposition(
  registry: client.Registry,
  headers: { accept?: string; 'accept-encoding'?: string },
  redact: (text: string) => string,
  renderText: () => Promise<string | Buffer> = () => registry.metrics(),
): Promise<Exposition> {
  const om = wantsOpenMetrics(headers.accept);
  const text = om ? await openMetrics(registry) : (await renderText()).toString();
  const contentType = om ? client.Registry.OPENMETRICS_CONTENT_TYPE : registry.contentType;
  // An uncompressed body is redacted once, by the server's onSend hook with every other answer.
  if (!acceptsGzip(headers['accept-encoding'])) return { body: text, contentType };
  return { body: await gzip(redact(text)), contentType, encoding: 'gzip' };
}
