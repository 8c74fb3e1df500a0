// The /metrics body, line for line what prom-client's Registry.metrics() writes — Prometheus text 0.0.4, or
// OpenMetrics 1.0.0 as a registry of that content type writes it — in a fraction of its time and garbage. With 50
// targets the body is ~2.6 MB and 30k series: prom-client builds an object per histogram bucket and an array per
// label set on every scrape, then joins 30k fresh strings (50–60 ms of CPU a render on a loaded 2-core machine;
// its OpenMetrics writer more). Here each series' text up to its value is made once and kept, and the body is
// written straight into one buffer.
// prom-client keeps series in `hashMap` (counter, gauge: {labels, value, exemplar?}; histogram: {labels,
// bucketValues, sum, count, bucketExemplars?}, bucket maps keyed by upper bound, -1 for +Inf); a metric of another
// shape goes through prom-client's own writer, and test/metrics/render.test.ts compares the two outputs in both
// formats so an upgrade that changes either shows there.
// Redaction (src/lib/redact.ts) happens here, once per series: label values (and exemplar labels) are the only text
// of the body a secret can reach — names and HELP texts are ours, values are numbers. A series' text is redacted
// when it is first made and kept; the kept texts are dropped when the redactor's secrets change (its generation).
import client from 'prom-client';
import { redactor as processRedactor } from '../../lib/redact.js';

const PROM_TEXT = client.Registry.PROMETHEUS_CONTENT_TYPE;
const OPENMETRICS = client.Registry.OPENMETRICS_CONTENT_TYPE;

export type Format = 'text' | 'openmetrics';

/** What the renderer needs of src/lib/redact.ts's Redactor. */
export interface LabelRedactor {
  redact(text: string): string;
  readonly generation: number;
}

interface Exemplar {
  labelSet: Record<string, string | number>;
  value: number;
  timestamp?: number;
}

interface SeriesEntry {
  labels: Record<string, string | number>;
  value?: number;
  exemplar?: Exemplar | null;
  bucketValues?: Record<string, number>;
  bucketExemplars?: Record<string, Exemplar | null>;
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

function escapeLabel(v: string): string {
  return NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v;
}

const escapeText = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/**
 * `a="x",b="y"` (no braces), in the order the series' labels were first given, as prom-client writes them;
 * each value redacted before it is escaped, and the whole again after (the form the old whole-body pass saw).
 */
function labelText(labels: Record<string, string | number>, r: LabelRedactor): string {
  let out = '';
  for (const k in labels) out += `${out === '' ? '' : ','}${k}="${escapeLabel(r.redact(String(labels[k])))}"`;
  return out === '' ? out : r.redact(out);
}

/**
 * A growing output buffer: one copy of the body instead of 30k strings joined. Pieces are gathered in a string
 * (V8 concatenates without copying) and written ~16k characters at a time: each Buffer.write is a call into C++,
 * and a 50-target body is ~50k pieces (a third of the render's time when written one by one).
 */
class Out {
  buf: Buffer;
  private len = 0;
  private pending = '';
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  write(s: string): void {
    this.pending += s;
    if (this.pending.length >= 16_384) this.flush();
  }
  private flush(): void {
    const s = this.pending;
    this.pending = '';
    // UTF-8 takes at most 3 bytes per UTF-16 unit; Buffer.write would silently cut what does not fit.
    if (this.len + s.length * 3 > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + s.length * 3));
      this.buf.copy(next, 0, 0, this.len);
      this.buf = next;
    }
    this.len += this.buf.write(s, this.len, 'utf8');
  }
  /** The body written so far. */
  body(): Buffer {
    this.flush();
    return this.buf.subarray(0, this.len);
  }
}

/**
 * Per metric and sample name, the text of each series up to its value (`name{labels} `; for a histogram one per
 * bucket, +Inf, sum and count), keyed by prom-client's series key. A series removed from the metric is dropped
 * here on the next render; the label order is the one the series first had (Prometheus does not read order).
 */
type Prefixes = Map<string, string | string[]>;

/** The caches of one redactor generation: replaced whole when the secrets change. */
interface Caches {
  redactor: LabelRedactor;
  generation: number;
  prefixes: WeakMap<object, Map<string, Prefixes>>;
  /** ` # {run_id="…"} `: an exemplar's label set object lives until the next observation replaces it. */
  exemplars: WeakMap<object, string>;
}

let caches: Caches | undefined;

function cachesFor(r: LabelRedactor): Caches {
  if (caches?.redactor !== r || caches.generation !== r.generation)
    caches = { redactor: r, generation: r.generation, prefixes: new WeakMap(), exemplars: new WeakMap() };
  return caches;
}

function prefixesFor(c: Caches, metric: object, sampleName: string): Prefixes {
  let byName = c.prefixes.get(metric);
  if (byName === undefined) c.prefixes.set(metric, (byName = new Map()));
  let p = byName.get(sampleName);
  if (p === undefined) byName.set(sampleName, (p = new Map()));
  return p;
}

/** prom-client's exemplar suffix: ` # {labels} value timestamp` (OpenMetrics only). */
function exemplarText(e: Exemplar, c: Caches): string {
  let l = c.exemplars.get(e.labelSet);
  if (l === undefined) {
    l = labelText(e.labelSet, c.redactor);
    c.exemplars.set(e.labelSet, l);
  }
  return ` # {${l}} ${value(e.value)} ${e.timestamp}`;
}

function renderSimple(
  m: MetricInternals,
  sampleName: string,
  cache: Prefixes,
  c: Caches,
  om: boolean,
  out: Out,
): number {
  let n = 0;
  for (const key in m.hashMap) {
    const e = m.hashMap[key]!;
    let p = cache.get(key) as string | undefined;
    if (p === undefined) {
      const l = labelText(e.labels, c.redactor);
      p = `\n${sampleName}${l === '' ? '' : `{${l}}`} `;
      cache.set(key, p);
    }
    out.write(p);
    out.write(value(e.value ?? 0));
    if (om && e.exemplar) out.write(exemplarText(e.exemplar, c));
    n++;
  }
  return n;
}

function histogramPrefixes(
  name: string,
  bounds: number[],
  labels: SeriesEntry['labels'],
  r: LabelRedactor,
): string[] {
  const l = labelText(labels, r);
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
  c: Caches,
  om: boolean,
  out: Out,
): number {
  let n = 0;
  for (const key in m.hashMap) {
    const e = m.hashMap[key]!;
    let p = cache.get(key) as string[] | undefined;
    if (p === undefined) {
      p = histogramPrefixes(name, bounds, e.labels, c.redactor);
      cache.set(key, p);
    }
    const ex = om ? e.bucketExemplars : undefined;
    let acc = 0;
    for (let i = 0; i < bounds.length; i++) {
      acc += e.bucketValues![bounds[i]!]!;
      out.write(p[i]!);
      out.write(value(acc));
      const x = ex?.[bounds[i]!];
      if (x) out.write(exemplarText(x, c));
    }
    out.write(p[bounds.length]!);
    out.write(value(e.count!));
    if (ex?.['-1']) out.write(exemplarText(ex['-1'], c));
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

/** prom-client's standardizeCounterName: an OpenMetrics counter family is named without `_total`. */
const familyName = (m: MetricInternals, om: boolean) =>
  om && m.type === 'counter' ? m.name.replace(/_total$/, '') : m.name;

/**
 * The registry's families in OpenMetrics, by prom-client's own writer. It renders OpenMetrics only from a registry
 * of that type, and renames counters in place while doing so (it strips `_total`); each metric is wrapped in an
 * object that inherits from it, so the rename lands on the wrapper and the shared registry keeps rendering the
 * text format unchanged. Not redacted.
 */
export async function openMetrics(registry: client.Registry): Promise<string> {
  const om = new client.Registry<client.OpenMetricsContentType>();
  om.setContentType(OPENMETRICS);
  om.setDefaultLabels((registry as unknown as { _defaultLabels?: object })._defaultLabels ?? {});
  for (const metric of registry.getMetricsAsArray())
    om.registerMetric(Object.create(metric) as client.Metric);
  return om.metrics();
}

/** prom-client's writer for one family (a shape this module does not know), in either format. */
interface FamilyWriter {
  getMetricsAsString(metric: object): Promise<string>;
}
const omRegistry = new client.Registry<client.OpenMetricsContentType>();
omRegistry.setContentType(OPENMETRICS);
// getMetricsAsString is prom-client's per-family writer (registry.js), public but untyped.
const omWriter = omRegistry as unknown as FamilyWriter;

async function slowFamily(
  registry: client.Registry,
  metric: object,
  m: MetricInternals,
  om: boolean,
): Promise<string> {
  if (!om) return registry.getSingleMetricAsString(m.name);
  const wrapper = Object.create(metric) as MetricInternals;
  wrapper.name = familyName(m, true);
  return omWriter.getMetricsAsString(wrapper);
}

/** The last body's size per format: the next buffer starts there, so a steady body is written without regrowing. */
const lastSize: Record<Format, number> = { text: 64 * 1024, openmetrics: 64 * 1024 };

/**
 * Registry.metrics() as bytes, redacted, in the format asked for (OpenMetrics as prom-client writes it from a
 * registry of that content type: counters' families named without `_total`, exemplars, `# EOF`). A registry with
 * default labels (ours has none) goes through prom-client whole. Collect callbacks (the process and event-loop
 * defaults) run first, as prom-client runs them.
 */
export async function renderMetrics(
  registry: client.Registry,
  opts: { format?: Format; redactor?: LabelRedactor } = {},
): Promise<Buffer> {
  const format = opts.format ?? 'text';
  const om = format === 'openmetrics';
  const r = opts.redactor ?? processRedactor;
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels;
  if (defaults === undefined || Object.keys(defaults).length > 0 || registry.contentType !== PROM_TEXT)
    return Buffer.from(r.redact(om ? await openMetrics(registry) : await registry.metrics()));
  const c = cachesFor(r);
  const out = new Out(Math.ceil(lastSize[format] * 1.25) + 64 * 1024);
  let first = true;
  for (const metric of registry.getMetricsAsArray()) {
    const m = metric as unknown as MetricInternals;
    // OpenMetrics families are joined by one newline, the text format's by a blank line.
    if (!first) out.write(om ? '\n' : '\n\n');
    first = false;
    if (!fastShape(m)) {
      out.write(r.redact(await slowFamily(registry, metric, m, om)));
      continue;
    }
    if (m.collect) {
      const v = m.collect();
      if (v instanceof Promise) await v;
    }
    const name = escapeText(familyName(m, om));
    out.write(`# HELP ${name} ${escapeText(m.help)}\n# TYPE ${name} ${m.type}`);
    // prom-client's OpenMetrics counter samples: the family name plus `_total`.
    const sampleName = om && m.type === 'counter' ? `${name}_total` : name;
    const cache = prefixesFor(c, metric, sampleName);
    const n =
      m.type === 'histogram'
        ? renderHistogram(m, name, m.upperBounds!, cache, c, om, out)
        : renderSimple(m, sampleName, cache, c, om, out);
    if (cache.size > n) for (const key of cache.keys()) if (!(key in m.hashMap!)) cache.delete(key);
  }
  out.write(om ? '\n# EOF\n' : '\n');
  const body = out.body();
  lastSize[format] = body.length;
  return body;
}
