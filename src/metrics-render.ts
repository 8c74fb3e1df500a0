// The /metrics body, line for line what prom-client's Registry.metrics() writes (text format 0.0.4), in a
// fraction of its time and garbage. With 50 targets the body is ~2.6 MB and 30k series: prom-client builds an
// object per histogram bucket and an array per label set on every scrape, then joins 30k fresh strings (50–60 ms
// of CPU a render on a loaded 2-core machine, most of a 200–370 ms scrape). Here each series' text up to its value
// is made once and kept, and the body is written straight into one buffer.
// prom-client keeps series in `hashMap` (counter, gauge: {labels, value}; histogram: {labels, bucketValues, sum,
// count}, bucketValues keyed by upper bound); a metric of another shape goes through prom-client's own writer, and
// test/metrics/render.test.ts compares the two outputs so an upgrade that changes either shows there.
import client from 'prom-client';

const PROM_TEXT = client.Registry.PROMETHEUS_CONTENT_TYPE;

interface SeriesEntry {
  labels: Record<string, string | number>;
  value?: number;
  bucketValues?: Record<string, number>;
  sum?: number;
  count?: number;
}

interface MetricInternals {
  name: string;
  help: string;
  type: string;
  hashMap?: Record<string, SeriesEntry>;
  upperBounds?: number[];
  collect?: () => unknown;
}

// prom-client's getValueAsString: NaN is written "Nan" (sic), kept so the output stays identical.
function value(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabel(v: string | number): string {
  if (typeof v !== 'string') return String(v);
  return NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v;
}

const escapeText = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** `a="x",b="y"` (no braces), in the order the series' labels were first given, as prom-client writes them. */
function labelText(labels: Record<string, string | number>): string {
  let out = '';
  for (const k in labels) out += `${out === '' ? '' : ','}${k}="${escapeLabel(labels[k]!)}"`;
  return out;
}

/** A growing output buffer: one copy of the body instead of 30k strings joined. */
class Out {
  buf: Buffer;
  len = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  write(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; Buffer.write would silently cut what does not fit.
    if (this.len + s.length * 3 > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + s.length * 3));
      this.buf.copy(next, 0, 0, this.len);
      this.buf = next;
    }
    this.len += this.buf.write(s, this.len, 'utf8');
  }
}

/**
 * Per metric, the text of each series up to its value (`name{labels} `; for a histogram one per bucket, +Inf, sum
 * and count), keyed by prom-client's series key. A series removed from the metric is dropped here on the next
 * render; the label order is the one the series first had (Prometheus does not read order).
 */
type Prefixes = Map<string, string | string[]>;

function renderSimple(m: MetricInternals, name: string, cache: Prefixes, out: Out): number {
  let n = 0;
  for (const key in m.hashMap) {
    const e = m.hashMap[key]!;
    let p = cache.get(key) as string | undefined;
    if (p === undefined) {
      const l = labelText(e.labels);
      p = `\n${name}${l === '' ? '' : `{${l}}`} `;
      cache.set(key, p);
    }
    out.write(p);
    out.write(value(e.value ?? 0));
    n++;
  }
  return n;
}

function histogramPrefixes(name: string, bounds: number[], labels: SeriesEntry['labels']): string[] {
  const l = labelText(labels);
  const rest = l === '' ? '}' : `,${l}}`;
  const plain = l === '' ? '' : `{${l}}`;
  return [
    ...bounds.map((b) => `\n${name}_bucket{le="${b}"${rest} `),
    `\n${name}_bucket{le="+Inf"${rest} `,
    `\n${name}_sum${plain} `,
    `\n${name}_count${plain} `,
  ];
}

function renderHistogram(
  m: MetricInternals,
  name: string,
  bounds: number[],
  cache: Prefixes,
  out: Out,
): number {
  let n = 0;
  for (const key in m.hashMap) {
    const e = m.hashMap[key]!;
    let p = cache.get(key) as string[] | undefined;
    if (p === undefined) {
      p = histogramPrefixes(name, bounds, e.labels);
      cache.set(key, p);
    }
    let acc = 0;
    for (let i = 0; i < bounds.length; i++) {
      acc += e.bucketValues![bounds[i]!]!;
      out.write(p[i]!);
      out.write(value(acc));
    }
    out.write(p[bounds.length]!);
    out.write(value(e.count!));
    out.write(p[bounds.length + 1]!);
    out.write(value(e.sum!));
    out.write(p[bounds.length + 2]!);
    out.write(value(e.count!));
    n++;
  }
  return n;
}

/** Whether this writer knows the metric's shape; anything else goes through prom-client. */
function fastShape(m: MetricInternals): boolean {
  if (typeof m.hashMap !== 'object' || m.hashMap === null) return false;
  if (m.type === 'counter' || m.type === 'gauge') return true;
  return m.type === 'histogram' && Array.isArray(m.upperBounds);
}

const caches = new WeakMap<object, Prefixes>();
/** The last body's size: the next buffer starts there, so a steady body is written without regrowing. */
let lastSize = 64 * 1024;

/**
 * Registry.metrics() as bytes, for a registry without default labels (ours has none), Prometheus text format.
 * Collect callbacks (the process and event-loop defaults) run first, as prom-client runs them.
 */
export async function renderMetrics(registry: client.Registry): Promise<Buffer> {
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels;
  if (defaults === undefined || Object.keys(defaults).length > 0 || registry.contentType !== PROM_TEXT) {
    return Buffer.from(await registry.metrics());
  }
  const out = new Out(Math.ceil(lastSize * 1.25) + 64 * 1024);
  let first = true;
  for (const metric of registry.getMetricsAsArray()) {
    const m = metric as unknown as MetricInternals;
    if (!first) out.write('\n\n');
    first = false;
    if (!fastShape(m)) {
      out.write(await registry.getSingleMetricAsString(m.name));
      continue;
    }
    if (m.collect) {
      const v = m.collect();
      if (v instanceof Promise) await v;
    }
    let cache = caches.get(metric);
    if (cache === undefined) caches.set(metric, (cache = new Map()));
    const name = escapeText(m.name);
    out.write(`# HELP ${name} ${escapeText(m.help)}\n# TYPE ${name} ${m.type}`);
    const n =
      m.type === 'histogram'
        ? renderHistogram(m, name, m.upperBounds!, cache, out)
        : renderSimple(m, name, cache, out);
    if (cache.size > n) for (const key of cache.keys()) if (!(key in m.hashMap!)) cache.delete(key);
  }
  out.write('\n');
  lastSize = out.len;
  return out.buf.subarray(0, out.len);
}
