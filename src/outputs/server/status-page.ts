// The status page at `/`: one card per target, server-rendered, no script (a meta refresh keeps it current,
// and the page's Content-Security-Policy forbids scripts outright). A pure function of the status views, so it
// is tested with plain data; everything that came from logs or remote servers goes through html``, which escapes.
import type { TargetStateName } from '../../core/vocabulary.js';
import type { ConnKind, Severity } from '../../core/signals.js';
import { RANGE_NAMES, RANGES, type RangeName, type SlotHistory } from '../../sources/probes/history.js';
import { html, SafeHtml, urlWithQuery } from './html.js';
import type { StripView } from './status-strip.js';
import { fmtMs, legend, MARK_CSS, sparkline, stateStrip, stripText, SVG_DEFS, tight } from './status-svg.js';

/** The last result of one probe on one hop over one connection kind. */
export interface ProbeCellView {
  probe: string;
  endpoint: string;
  conn: ConnKind;
  result: string;
  durationMs: number;
  ttftMs?: number;
  status?: number;
  phase?: string;
  error?: string;
  start?: number;
}

export interface EventView {
  time: number;
  severity?: Severity;
  /** log, probe, state, remediation, … */
  kind?: string;
  service?: string;
  rule?: string;
  text: string;
}

export interface ChangeView {
  time: number;
  path: string;
  diff?: string;
}

/** What the page shows for one target (built from the detector's status by status-source.ts). */
export interface StatusView {
  target: string;
  state: TargetStateName;
  since: number;
  diagnosis?: string;
  cause?: string;
  /** Hops, outermost first, so grid rows follow the request path. */
  endpoints: string[];
  probes: ProbeCellView[];
  events: EventView[];
  changes: ChangeView[];
  remediationPaused: boolean;
  /** In or out of rotation per backend, held in by the pool rule, drained from the gateway (issue 43). */
  traffic?: TrafficView;
  /** The state strip over the page's range (absent before the watchdog runs). */
  strip?: StripView;
  /** Each slot's sparkline points over the page's range. */
  history?: SlotHistory[];
}

/** One backend's place in rotation as GET /ready answers it. */
export interface BackendView {
  backend: string;
  inRotation: boolean;
  held: boolean;
  pool?: string;
  changedAt: number;
}

export interface TrafficView {
  backends: BackendView[];
  drain?: {
    out: boolean;
    dryRun: boolean;
    since?: number;
    worker: string;
    gateway: string;
    drainsInWindow: number;
    max: number;
  };
}

export interface RenderOptions {
  now?: number;
  refreshSeconds?: number;
  version?: string;
  maxEvents?: number;
  maxChanges?: number;
  /** The window of the strip and the sparklines (?range=); 6h by default. */
  range?: RangeName;
}

export const DEFAULT_RANGE: RangeName = '6h';

/** Served with the page: no script may run, whatever a log line smuggles in. */
export const STATUS_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const COLOURS: Record<TargetStateName, string> = {
  unknown: '#6b7280',
  ok: '#15803d',
  degraded: '#b45309',
  wedged: '#b91c1c',
  down: '#7e22ce',
};

const MAX_TEXT = 2000;

function clip(text: string, max = MAX_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : 'never';
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

function ms(v: number | undefined): string {
  return v === undefined ? '' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
}

interface CardContext {
  range: RangeName;
  now: number;
  /** Sparkline per probe|endpoint|conn, already drawn. */
  sparks: Map<string, SafeHtml>;
}

function probeCell(target: string, c: ProbeCellView, ctx: CardContext): SafeHtml {
  const spark = ctx.sparks.get(`${c.probe}|${c.endpoint}|${c.conn}`);
  const href = urlWithQuery('/probe', {
    target,
    probe: c.probe,
    endpoint: c.endpoint,
    conn: c.conn,
    debug: 'true',
  });
  const detail = [
    c.ttftMs !== undefined ? `TTFT ${ms(c.ttftMs)}` : '',
    c.result === 'skipped_overlap' ? '' : ms(c.durationMs),
    c.status !== undefined && c.result !== 'ok' ? `HTTP ${c.status}` : '',
    c.phase !== undefined ? `in ${c.phase}` : '',
  ]
    .filter((s) => s !== '')
    .join(' · ');
  const ok = c.result === 'ok';
  return tight`<div class="probe ${ok ? 'pass' : 'fail'}"${c.error ? tight` title="${c.error}"` : ''}><a href="${href}">${c.probe}</a> <span class="res">${c.result}</span>${detail ? tight` <span class="det">${detail}</span>` : ''}${!ok && c.error ? tight`<div class="err">${clip(c.error, 300)}</div>` : ''}${spark ?? ''}</div>`;
}

function grid(v: StatusView, ctx: CardContext): SafeHtml {
  if (v.probes.length === 0) return html`<p class="muted">No probe results yet.</p>`;
  const hops = [...new Set([...v.endpoints, ...v.probes.map((p) => p.endpoint)])].filter((h) =>
    v.probes.some((p) => p.endpoint === h),
  );
  const conns = (['fresh', 'keepalive'] as const).filter((c) => v.probes.some((p) => p.conn === c));
  const cell = (h: string, c: string) => {
    const cells = v.probes.filter((p) => p.endpoint === h && p.conn === c);
    return tight`<td>${cells.length > 0 ? cells.map((p) => probeCell(v.target, p, ctx)) : tight`<span class="muted">—</span>`}</td>`;
  };
  // One line per row: 50 targets' grids would otherwise be a fifth indentation.
  return tight`<table class="grid"><thead><tr><th>hop</th>${conns.map((c) => tight`<th>${c}</th>`)}</tr></thead><tbody>
${hops.map(
  (h) => tight`<tr><th>${h}</th>${conns.map((c) => cell(h, c))}</tr>
`,
)}</tbody></table>`;
}

function events(list: EventView[], max: number): SafeHtml {
  if (list.length === 0) return html`<p class="muted">No recent events.</p>`;
  const shown = [...list].sort((a, b) => b.time - a.time).slice(0, max);
  return html`<ul class="events">
    ${shown.map(
      (e) =>
        html`<li class="sev-${e.severity ?? 'info'}">
          <time>${iso(e.time)}</time> <b>${e.severity ?? e.kind ?? ''}</b> ${
            e.service ? html`<span class="svc">${e.service}</span> ` : ''
          }${e.rule ? html`<span class="rule">${e.rule}</span> ` : ''}<code>${clip(e.text)}</code>
        </li>`,
    )}
  </ul>`;
}

function changes(list: ChangeView[], max: number): SafeHtml {
  if (list.length === 0) return html`<p class="muted">No watched files changed since the last ok.</p>`;
  return html`<ul class="changes">
    ${list.slice(-max).map(
      (c) =>
        html`<li>
          <time>${iso(c.time)}</time> <code>${c.path}</code>${
            c.diff
              ? html`<details>
                  <summary>diff</summary>
                  <pre>${clip(c.diff)}</pre>
                </details>`
              : ''
          }
        </li>`,
    )}
  </ul>`;
}

function windowTitle(strip: StripView, range: RangeName): SafeHtml {
  // Cut to the journal's reach (status-page-route.ts windowStart): say so rather than claim the whole range.
  return strip.to - strip.from < RANGES[range] - 60_000
    ? html`State since <time>${iso(strip.from)}</time> (all the history held; range ${range})`
    : html`State, last ${range}`;
}

/** Each probe's scale: its slowest passing run over the window, shared by its hops and kinds to compare by eye. */
function scales(v: StatusView): Map<string, number> {
  const scale = new Map<string, number>();
  for (const s of v.history ?? [])
    for (const p of s.points) {
      const top = p.durationMs ?? p.ttftMs;
      if (top !== undefined) scale.set(s.probe, Math.max(scale.get(s.probe) ?? 1, top));
    }
  return scale;
}

function sparks(v: StatusView, scale: Map<string, number>): Map<string, SafeHtml> {
  return new Map(
    (v.history ?? []).map((s) => [
      `${s.probe}|${s.endpoint}|${s.conn}`,
      sparkline(s, scale.get(s.probe) ?? 1),
    ]),
  );
}

/** Written once per card, not beside each of its sparklines (350 of them on a 50-target page). */
function scaleNote(scale: Map<string, number>): SafeHtml {
  if (scale.size === 0) return tight``;
  return tight`, and over the same window <small>(top of each sparkline: ${[...scale].map(([p, v]) => `${p} ${fmtMs(v)}`).join(', ')})</small>`;
}

function traffic(t: TrafficView | undefined, now: number): SafeHtml | '' {
  if (t === undefined) return '';
  const rows = t.backends.map((b) => {
    const where = b.held
      ? tight`<b class="held">held in rotation</b>: not ready, but the last healthy backend of pool <code>${b.pool ?? ''}</code> is never drained`
      : b.inRotation
        ? tight`in rotation`
        : tight`<b>out of rotation</b>`;
    return tight`<li data-backend="${b.backend}" data-in-rotation="${String(b.inRotation)}" data-held="${String(b.held)}"><code>${b.backend}</code>: ${where} since <time>${iso(b.changedAt)}</time> (${ago(now - b.changedAt)} ago)</li>`;
  });
  const d = t.drain;
  const drain =
    d === undefined
      ? ''
      : tight`<p class="drain" data-drained="${String(d.out)}">gateway <code>${d.gateway}</code>: worker <code>${d.worker}</code> ${d.out ? tight`<b>drained</b>${d.dryRun ? ' (dry run: not really)' : ''}${d.since !== undefined ? tight` since <time>${iso(d.since)}</time>` : ''}` : 'in the pool'} (${String(d.drainsInWindow)} of ${String(d.max)} drains used in the window)</p>`;
  return tight`<h3>Traffic</h3>
<ul class="traffic">${rows}</ul>
${drain}`;
}

function card(
  v: StatusView,
  o: Required<Pick<RenderOptions, 'now' | 'maxEvents' | 'maxChanges' | 'range'>>,
): SafeHtml {
  const colour = COLOURS[v.state] ?? COLOURS.unknown;
  const scale = scales(v);
  const ctx: CardContext = { range: o.range, now: o.now, sparks: sparks(v, scale) };
  const since = Number.isFinite(v.since)
    ? tight`<p class="since">${v.state} since <time>${iso(v.since)}</time> (${ago(o.now - v.since)} ago)</p>`
    : tight`<p class="since muted">no verdict yet</p>`;
  const paused = v.remediationPaused ? tight` <span class="paused">remediation paused</span>` : '';
  const diagnosis = v.diagnosis
    ? tight`<p class="diagnosis">diagnosis: <code>${v.diagnosis}</code>${v.cause ? tight` — ${v.cause}` : ''}</p>`
    : '';
  const strip = v.strip
    ? tight`<h3>${windowTitle(v.strip, o.range)}</h3>
${stateStrip(v.target, v.strip, o.range)}
${stripText(v.strip)}`
    : '';
  // Lines, not indentation: the card is repeated per target (bench:page-render's 50).
  return tight`<section class="card" id="target-${v.target}" data-target="${v.target}" data-state="${v.state}" style="border-left-color:${colour}">
<h2>${v.target} <span class="state" style="background:${colour}">${v.state}</span>${paused}</h2>
${since}
${diagnosis}
<p class="incidents"><a href="${urlWithQuery('/api/incidents', { target: v.target })}">incident bundles</a></p>
${traffic(v.traffic, o.now)}
${strip}
<h3>Last probe results${scaleNote(scale)}</h3>
${grid(v, ctx)}
<h3>Recent events</h3>
${events(v.events, o.maxEvents)}
<h3>Files changed since the last ok</h3>
${changes(v.changes, o.maxChanges)}
</section>`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111;background:#f8fafc}
h1{font-size:1.4em;margin:0 0 .2em}h2{margin:0 0 .3em;font-size:1.2em}h3{font-size:1em;margin:1em 0 .3em}
.card{background:#fff;border:1px solid #ddd;border-left:8px solid;padding:1em;margin:1em 0;border-radius:4px}
.state{color:#fff;padding:.1em .5em;border-radius:3px;text-transform:uppercase;font-size:.8em}
.held{background:#fde68a;padding:0 .3em}.traffic{list-style:none;padding:0;margin:.2em 0}
.paused{background:#fde68a;padding:.1em .5em;border-radius:3px;font-size:.8em}
.grid{border-collapse:collapse}.grid th,.grid td{border:1px solid #ddd;padding:.3em .6em;vertical-align:top;text-align:left}
.probe.pass .res{color:#15803d}.probe.fail .res{color:#b91c1c;font-weight:bold}.det,.muted,time{color:#555}
.err{color:#7f1d1d;font-size:.85em;max-width:40em;overflow-wrap:anywhere}
code{overflow-wrap:anywhere;white-space:pre-wrap}.events{list-style:none;padding:0}.events li{margin:.2em 0}
.sev-critical b{color:#b91c1c}.sev-warning b{color:#b45309}pre{background:#f1f5f9;padding:.5em;overflow:auto;max-height:20em}
.strip{width:100%;height:auto;display:block;max-width:80em}.strip .sl{font:bold 12px system-ui,sans-serif;fill:#fff;stroke:#000;stroke-width:2.5px;paint-order:stroke;text-anchor:middle}
.strip .tl{font:11px system-ui,sans-serif;fill:#444;text-anchor:middle}.strip a .mark{cursor:pointer}
.legend{font-size:.85em;color:#333}.sw{width:16px;height:12px;vertical-align:middle;border:1px solid #999}
.probe svg{height:30px;width:auto;display:block;background:#f8fafc;border:1px solid #e2e8f0}
.probe svg path{fill:none;stroke-linecap:round;stroke-linejoin:round}
.probe .t{stroke:#111;stroke-width:1.5}.probe .d{stroke:#2563eb;stroke-width:1;stroke-dasharray:3 2}.probe .f{stroke:#b91c1c;stroke-width:5;stroke-linecap:butt}
.probe small{color:#555}.probe small b,.fx{color:#b91c1c}.strip-text{font-size:.85em}.strip-text ul{margin:.3em 0}
${MARK_CSS}`;

export function renderStatusPage(status: StatusView[], opts: RenderOptions = {}): string {
  const o = {
    now: opts.now ?? Date.now(),
    maxEvents: opts.maxEvents ?? 20,
    maxChanges: opts.maxChanges ?? 20,
    range: opts.range ?? DEFAULT_RANGE,
  };
  const refresh = opts.refreshSeconds ?? 10;
  const counts = status.reduce<Record<string, number>>(
    (acc, v) => ((acc[v.state] = (acc[v.state] ?? 0) + 1), acc),
    {},
  );
  const summary = Object.entries(counts)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="refresh" content="${refresh}" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>wedgewatch status</title>
        <style>
          ${new SafeHtml(STYLE)}
        </style>
      </head>
      <body>
        <h1>wedgewatch</h1>
        <p class="muted">
          ${status.length} target${status.length === 1 ? '' : 's'}${summary ? `: ${summary}` : ''} · rendered
          <time>${iso(o.now)}</time>, refreshes every
          ${refresh}s${opts.version ? ` · version ${opts.version}` : ''} · <a href="/metrics">metrics</a> ·
          <a href="/api/status">/api/status</a>
        </p>
        ${SVG_DEFS}
        <p class="range">
          range:
          ${RANGE_NAMES.map((r) =>
            r === o.range
              ? html`<b aria-current="page">${r}</b> `
              : html`<a href="${urlWithQuery('/', { range: r })}">${r}</a> `,
          )}
        </p>
        ${legend()}
        ${status.length === 0 ? html`<p class="muted">No targets configured.</p>` : status.map((v) => card(v, o))}
      </body>
    </html> `.value;
}
