// The status page's drawings, as inline SVG written on the server: no script, no font or file fetched, so the
// page keeps its Content-Security-Policy and works offline. Every state has a pattern as well as a colour and
// its name written on it when there is room, and every mark has its own shape, so the page reads in grey.
// Hovering gives an SVG <title>; each strip also comes as text (a <details> list) for readers without a mouse.
// Text from logs (diagnosis causes, event summaries) goes through html``, which escapes it.
import type { RangeName, SlotHistory } from '../probes/history.js';
import { html, SafeHtml } from './html.js';
import type { StripMark, StripMarkKind, StripState, StripView } from './status-strip.js';

const STRIP_W = 1000;
const BAR_Y = 14;
const BAR_H = 20;

/** Base colour per state; the pattern laid over it says the same in grey. */
export const STATE_FILL: Record<StripState, string> = {
  ok: '#15803d',
  degraded: 'url(#p-degraded)',
  wedged: 'url(#p-wedged)',
  down: 'url(#p-down)',
  unknown: 'url(#p-unknown)',
  no_history: 'url(#p-no_history)',
};

const LABEL: Record<StripState, string> = {
  ok: 'OK',
  degraded: 'DEGRADED',
  wedged: 'WEDGED',
  down: 'DOWN',
  unknown: 'UNKNOWN',
  no_history: 'no history',
};

/** The patterns, once per page (ids are document-wide). */
export const SVG_DEFS = new SafeHtml(
  `<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>` +
    `<pattern id="p-degraded" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#b45309"/><rect width="3" height="8" fill="#f59e0b"/></pattern>` +
    `<pattern id="p-wedged" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#b91c1c"/><path d="M0 0L8 8M8 0L0 8" stroke="#fca5a5" stroke-width="1.5"/></pattern>` +
    `<pattern id="p-down" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#7e22ce"/><circle cx="3" cy="3" r="1.4" fill="#e9d5ff"/></pattern>` +
    `<pattern id="p-unknown" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#6b7280"/><rect width="6" height="2" fill="#9ca3af"/></pattern>` +
    `<pattern id="p-no_history" width="10" height="10" patternUnits="userSpaceOnUse"><rect width="10" height="10" fill="#f1f5f9"/><path d="M0 10L10 0" stroke="#cbd5e1"/></pattern>` +
    `</defs></svg>`,
);

/** One shape per mark kind, centred on (x, 6); the same shapes as in the legend. */
function markShape(kind: StripMarkKind, x: number): string {
  switch (kind) {
    case 'diagnosis':
      return `<path d="M${x} 0l6 6-6 6-6-6z" fill="#fff" stroke="#111" stroke-width="1.5"/>`;
    case 'critical':
      return `<path d="M${x} 0l6 12h-12z" fill="#b91c1c" stroke="#111"/>`;
    case 'remediation':
      return `<circle cx="${x}" cy="6" r="5.5" fill="#1d4ed8" stroke="#111"/><path d="M${x - 2} 3v6M${x - 2} 3h3v3h-3l3 3" fill="none" stroke="#fff" stroke-width="1.3"/>`;
    case 'bundle':
      return `<rect x="${x - 5.5}" y=".5" width="11" height="11" fill="#fde68a" stroke="#111"/><path d="M${x - 3} 4h6M${x - 3} 6h6M${x - 3} 8h6" stroke="#111"/>`;
  }
}

const MARK_NAME: Record<StripMarkKind, string> = {
  diagnosis: 'diagnosis changed',
  critical: 'critical log event confirmed',
  remediation: 'remediation ran',
  bundle: 'incident bundle captured (opens it)',
};

export function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : 'never';
}

/** Tick steps, the smallest that leaves at most 8 ticks on the window is used. */
const TICK_STEPS_MS = [
  10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000,
];

function clock(ms: number, seconds: boolean): string {
  return new Date(ms).toISOString().slice(11, seconds ? 19 : 16);
}

/** The state strip of one target over `view`'s window, marks above the bar and UTC ticks below it. */
export function stateStrip(target: string, view: StripView, range: RangeName): SafeHtml {
  const span = Math.max(1, view.to - view.from);
  const x = (t: number) => Math.round(((t - view.from) / span) * STRIP_W * 10) / 10;
  const segs = view.segments.map((s) => {
    const x0 = x(s.from);
    const w = Math.max(0.5, Math.round((x(s.to) - x0) * 10) / 10);
    const detail = `${iso(s.from)} – ${iso(s.to)}: ${s.state}${s.diagnosis ? ` (${s.diagnosis})` : ''}${s.cause ? `: ${s.cause}` : ''}`;
    const label =
      w >= LABEL[s.state].length * 7 + 8
        ? html`<text x="${x0 + w / 2}" y="${BAR_Y + 14}" class="sl">${LABEL[s.state]}</text>`
        : '';
    return html`<rect
        x="${x0}"
        y="${BAR_Y}"
        width="${w}"
        height="${BAR_H}"
        fill="${STATE_FILL[s.state]}"
        data-state="${s.state}"
        data-from="${s.from}"
        data-to="${s.to}"
        data-diagnosis="${s.diagnosis ?? ''}"
        ><title>${detail}</title></rect
      >${label}`;
  });
  const marks = view.marks.map((m) => {
    const mx = Math.min(STRIP_W - 6, Math.max(6, x(m.time)));
    const body = html`<g class="mark" data-kind="${m.kind}" data-time="${m.time}"
      ><title>${iso(m.time)} ${MARK_NAME[m.kind]}: ${m.text}</title
      >${new SafeHtml(markShape(m.kind, mx))}<path
        d="M${mx} 12V${BAR_Y + BAR_H}"
        stroke="#111"
        stroke-width="1.5"
    /></g>`;
    return m.href ? html`<a href="${m.href}">${body}</a>` : body;
  });
  const ticks: SafeHtml[] = [];
  const step = TICK_STEPS_MS.find((t) => span / t <= 8) ?? TICK_STEPS_MS.at(-1)!;
  for (let t = Math.ceil(view.from / step) * step; t <= view.to; t += step) {
    const tx = x(t);
    ticks.push(
      html`<path d="M${tx} ${BAR_Y + BAR_H}v4" stroke="#555" /><text
          x="${Math.min(STRIP_W - 16, Math.max(16, tx))}"
          y="${BAR_Y + BAR_H + 14}"
          class="tl"
          >${clock(t, step < 60_000)}</text
        >`,
    );
  }
  return html`<svg
    class="strip"
    viewBox="0 0 ${STRIP_W} ${BAR_Y + BAR_H + 18}"
    role="img"
    aria-label="state of ${target} over the last ${range}"
    data-from="${view.from}"
    data-to="${view.to}"
  >
    ${segs}${ticks}${marks}
  </svg>`;
}

/** The strip as a list: each state with its times, diagnosis and cause, and each mark, in time order. */
export function stripText(view: StripView): SafeHtml {
  type Row = { time: number; body: SafeHtml };
  const rows: Row[] = [
    ...view.segments.map((s) => ({
      time: s.from,
      body: html`<time>${iso(s.from)}</time> – <time>${iso(s.to)}</time> <b>${s.state}</b>${
          s.diagnosis ? html` <code>${s.diagnosis}</code>` : ''
        }${s.cause ? html` — ${s.cause}` : ''}`,
    })),
    ...view.marks.map((m: StripMark) => ({
      time: m.time,
      body: html`<time>${iso(m.time)}</time> <i>${MARK_NAME[m.kind]}</i>:
        ${m.href ? html`<a href="${m.href}">${m.text}</a>` : m.text}`,
    })),
  ].sort((a, b) => a.time - b.time);
  return html`<details class="strip-text">
    <summary>the strip as text</summary>
    <ul>
      ${rows.map((r) => html`<li>${r.body}</li>`)}
    </ul>
  </details>`;
}

export function legend(): SafeHtml {
  const states: StripState[] = ['ok', 'degraded', 'wedged', 'down', 'unknown', 'no_history'];
  const kinds: StripMarkKind[] = ['diagnosis', 'critical', 'remediation', 'bundle'];
  return html`<p class="legend">
    ${states.map(
      (s) =>
        html`<svg class="sw" viewBox="0 0 16 12" aria-hidden="true">
            <rect width="16" height="12" fill="${STATE_FILL[s]}" />
          </svg>
          ${s} `,
    )}
    ·
    ${kinds.map(
      (k) =>
        html`<svg class="sw" viewBox="-7 -1 14 14" aria-hidden="true">${new SafeHtml(markShape(k, 0))}</svg>
          ${MARK_NAME[k]} `,
    )}
    · sparklines: <b>━</b> TTFT, <b>┅</b> duration (slowest passing run per point), <b class="fx">✕</b> failed
    runs
  </p>`;
}

const SPARK_H = 30;
const LINE_TOP = 2;
const LINE_H = 22;
const FAIL_Y = 26;

/**
 * A path through the points, y as integers; relative moves, flat runs merged. Points closer than twice the
 * slot's usual spacing (a probe every 5 s drawn in 2.5 s buckets) are joined; a wider gap (runs that hung, or
 * failed: their crosses show) starts a new subpath. Compact because the page holds hundreds of these.
 */
function linePath(xs: number[], ys: number[]): string {
  const gaps = xs
    .slice(1)
    .map((x, i) => x - xs[i]!)
    .sort((a, b) => a - b);
  const join = 2 * (gaps[Math.floor(gaps.length / 2)] ?? 2);
  const parts: string[] = [];
  let flat = 0;
  const flush = () => {
    if (flat > 0) parts.push(`h${flat}`);
    flat = 0;
  };
  const joined = (i: number) => i > 0 && i < xs.length && xs[i]! - xs[i - 1]! <= join;
  for (let i = 0; i < xs.length; i++) {
    if (!joined(i)) {
      flush();
      parts.push(`M${xs[i]} ${ys[i]}`);
      // A lone point is drawn as a short dash (a zero-length line's round caps are not drawn everywhere).
      if (!joined(i + 1)) parts.push('h1');
      continue;
    }
    const dx = xs[i]! - xs[i - 1]!;
    const dy = ys[i]! - ys[i - 1]!;
    if (dy === 0) flat += dx;
    else {
      flush();
      parts.push(dy < 0 ? `l${dx}${dy}` : `l${dx} ${dy}`);
    }
  }
  flush();
  return parts.join('');
}

export function fmtMs(v: number): string {
  return v >= 10_000
    ? `${(v / 1000).toFixed(0)} s`
    : v >= 1000
      ? `${(v / 1000).toFixed(1)} s`
      : `${Math.round(v)} ms`;
}

/**
 * One slot's sparkline over the range: TTFT solid, duration dashed, both on `scaleMs` (shared by the probe's
 * slots, so hops and connection kinds compare by eye), a cross under each bucket with a failed run.
 */
export function sparkline(s: SlotHistory, scaleMs: number, range: RangeName): SafeHtml {
  const w = (s.lastBucket - s.firstBucket + 1) * 2;
  const xOf = (t: number) => (Math.round(t / s.bucketMs) - s.firstBucket) * 2;
  const yOf = (v: number) => LINE_TOP + Math.round(LINE_H * (1 - Math.min(1, v / scaleMs)));
  const series = (pick: (p: SlotHistory['points'][number]) => number | undefined) => {
    const xs: number[] = [];
    const ys: number[] = [];
    for (const p of s.points) {
      const v = pick(p);
      if (v === undefined) continue;
      xs.push(xOf(p.t));
      ys.push(yOf(v));
    }
    return linePath(xs, ys);
  };
  const ttft = series((p) => p.ttftMs);
  const dur = series((p) => p.durationMs);
  let fails = '';
  let failed = 0;
  let runs = 0;
  let maxTtft = 0;
  let maxDur = 0;
  for (const p of s.points) {
    runs += p.runs;
    failed += p.fails;
    if (p.ttftMs !== undefined) maxTtft = Math.max(maxTtft, p.ttftMs);
    if (p.durationMs !== undefined) maxDur = Math.max(maxDur, p.durationMs);
    if (p.fails > 0) fails += `M${xOf(p.t)} ${FAIL_Y}l2 3m0-3l-2 3`;
  }
  const title = `${s.probe} on ${s.endpoint}/${s.conn}, last ${range}: ${runs} runs, ${failed} failed${
    maxTtft > 0 ? `, TTFT up to ${fmtMs(maxTtft)}` : ''
  }${maxDur > 0 ? `, duration up to ${fmtMs(maxDur)}` : ''}; scale 0–${fmtMs(scaleMs)}`;
  return html`<svg
      class="spark"
      viewBox="0 0 ${w} ${SPARK_H}"
      preserveAspectRatio="none"
      role="img"
      aria-label="${title}"
      data-probe="${s.probe}"
      data-endpoint="${s.endpoint}"
      data-conn="${s.conn}"
      data-points="${s.points.length}"
      data-fails="${failed}"
    >
      <title>${title}</title>
      ${dur ? html`<path class="d" d="${dur}" />` : ''}${
        ttft ? html`<path class="t" d="${ttft}" />` : ''
      }${fails ? html`<path class="f" d="${fails}" />` : ''}</svg
    ><span class="sc">${failed > 0 ? html`<b class="fx">✕${failed}</b> ` : ''}≤${fmtMs(scaleMs)}</span>`;
}
