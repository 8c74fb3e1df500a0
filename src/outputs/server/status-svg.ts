// The status page's drawings, as inline SVG written on the server: no script, no font or file fetched, so the
// page keeps its Content-Security-Policy and works offline. Every state has a pattern as well as a colour and
// its name written on it when there is room, and every mark has its own shape, so the page reads in grey.
// Hovering gives an SVG <title>; each strip also comes as text (a <details> list) for readers without a mouse.
// Text from logs (diagnosis causes, event summaries) goes through html``, which escapes it.
import type { RangeName, SlotHistory } from '../../sources/probes/history.js';
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
  // Fills and strokes are the page's CSS (.mk-*): the shapes repeat on every strip.
  switch (kind) {
    case 'diagnosis':
      return `<path class="mk-d" d="M${x} 0l6 6-6 6-6-6z"/>`;
    case 'critical':
      return `<path class="mk-c" d="M${x} 0l6 12h-12z"/>`;
    case 'remediation':
      return `<circle class="mk-r" cx="${x}" cy="6" r="5.5"/><path class="mk-ri" d="M${x - 2} 3v6M${x - 2} 3h3v3h-3l3 3"/>`;
    case 'bundle':
      return `<rect class="mk-b" x="${x - 5.5}" y=".5" width="11" height="11"/><path class="mk-bi" d="M${x - 3} 4h6M${x - 3} 6h6M${x - 3} 8h6"/>`;
  }
}

/** The marks' paint, in the page's style sheet. */
export const MARK_CSS =
  '.mk-d{fill:#fff;stroke:#111;stroke-width:1.5}.mk-c{fill:#b91c1c;stroke:#111}.mk-r{fill:#1d4ed8;stroke:#111}' +
  '.mk-ri{fill:none;stroke:#fff;stroke-width:1.3}.mk-b{fill:#fde68a;stroke:#111}.mk-bi,.ml{stroke:#111}' +
  '.ml{fill:none;stroke-width:1.5}';

const MARK_NAME: Record<StripMarkKind, string> = {
  diagnosis: 'diagnosis changed',
  critical: 'critical log event confirmed',
  remediation: 'remediation ran',
  bundle: 'incident bundle captured (opens it)',
};

export function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : 'never';
}

/** Tick steps, the smallest that leaves at most 6 ticks on the window is used. */
const TICK_STEPS_MS = [
  10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000,
];

function clock(ms: number, seconds: boolean): string {
  return new Date(ms).toISOString().slice(11, seconds ? 19 : 16);
}

/**
 * html`` itself (it escapes the same) under names prettier does not reformat as HTML, so the drawings and the
 * repeated rows stay on one line each: indentation was a fifth of the 50-target page.
 */
const svg = html;
export const tight = html;

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
        ? svg`<text x="${Math.round((x0 + w / 2) * 10) / 10}" y="${BAR_Y + 14}" class="sl">${LABEL[s.state]}</text>`
        : '';
    return svg`<rect x="${x0}" y="${BAR_Y}" width="${w}" height="${BAR_H}" fill="${STATE_FILL[s.state]}" data-state="${s.state}" data-from="${s.from}" data-to="${s.to}"${s.diagnosis ? svg` data-diagnosis="${s.diagnosis}"` : ''}><title>${detail}</title></rect>${label}`;
  });
  // Marks close in time (a confirmation and the wedge's bundle, a second apart) would hide each other: each icon
  // moves right of the one before, and its line still drops to the bar at its own time.
  let lastIcon = Number.NEGATIVE_INFINITY;
  const marks = [...view.marks]
    .sort((a, b) => a.time - b.time)
    .map((m) => {
      const at = x(m.time);
      const mx = Math.min(STRIP_W - 6, Math.max(6, at, lastIcon + 13));
      lastIcon = mx;
      const body = svg`<g class="mark" data-kind="${m.kind}" data-time="${m.time}"><title>${iso(m.time)} ${MARK_NAME[m.kind]}: ${m.text}</title>${new SafeHtml(markShape(m.kind, mx))}<path class="ml" d="M${mx} 12L${at} ${BAR_Y}V${BAR_Y + BAR_H}"/></g>`;
      return m.href ? svg`<a href="${m.href}">${body}</a>` : body;
    });
  const step = TICK_STEPS_MS.find((t) => span / t <= 6) ?? TICK_STEPS_MS.at(-1)!;
  let tickPath = '';
  // Half a label's width: labels at the ends stay inside the drawing.
  const edge = step < 60_000 ? 26 : 16;
  const labels: SafeHtml[] = [];
  for (let t = Math.ceil(view.from / step) * step; t <= view.to; t += step) {
    const tx = x(t);
    tickPath += `M${tx} ${BAR_Y + BAR_H}v4`;
    labels.push(
      svg`<text x="${Math.min(STRIP_W - edge, Math.max(edge, tx))}">${clock(t, step < 60_000)}</text>`,
    );
  }
  const ticks = svg`<path d="${tickPath}" stroke="#555"/><g class="tl" transform="translate(0 ${BAR_Y + BAR_H + 14})">${labels}</g>`;
  return svg`<svg class="strip" viewBox="0 0 ${STRIP_W} ${BAR_Y + BAR_H + 18}" role="img" aria-label="${target} state, ${range}">${segs}${ticks}${marks}</svg>`;
}

/** The strip as a list: each state with its times, diagnosis and cause, and each mark, in time order. */
export function stripText(view: StripView): SafeHtml {
  const rows: Array<{ time: number; body: SafeHtml }> = [
    ...view.segments.map((s) => ({
      time: s.from,
      body: tight`<time>${iso(s.from)}</time> – <time>${iso(s.to)}</time> <b>${s.state}</b>${s.diagnosis ? tight` <code>${s.diagnosis}</code>` : ''}${s.cause ? tight` — ${s.cause}` : ''}`,
    })),
    ...view.marks.map((m: StripMark) => ({
      time: m.time,
      body: tight`<time>${iso(m.time)}</time> <i>${MARK_NAME[m.kind]}</i>: ${m.href ? tight`<a href="${m.href}">${m.text}</a>` : m.text}`,
    })),
  ].sort((a, b) => a.time - b.time);
  return tight`<details class="strip-text"><summary>as text</summary><ul>
${rows.map(
  (r) => tight`<li>${r.body}</li>
`,
)}</ul></details>`;
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
    · sparklines: <b>━</b> TTFT, <b>┅</b> duration (slowest passing run per point), <b class="fx">▬</b> failed
    runs
  </p>`;
}

// Drawn 30 px high; 16 levels of y are as many as that shows, and fewer distinct values keep the paths short.
const SPARK_H = 22;
/** About the width of a window's drawing in units (2 per bucket at most tiers); drawn 30/22 of that in px. */
const SPARK_W = 144;
const LINE_TOP = 1;
const LINE_H = 15;
const FAIL_Y = 19.5;

/**
 * A path through the points, y as integers; relative moves, flat runs merged. Points closer than twice the
 * slot's usual spacing (a probe every 5 s drawn in 2.5 s buckets) are joined; a wider gap (runs that hung, or
 * failed: their ticks show) starts a new subpath. Compact because the page holds hundreds of these.
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
 * slots, so hops and connection kinds compare by eye), a tick under each bucket with a failed run.
 */
export function sparkline(s: SlotHistory, scaleMs: number): SafeHtml {
  const n = s.lastBucket - s.firstBucket + 1;
  // Whole units per bucket, enough that a short window (the demo's first minute, 24 buckets) is as wide as a long one.
  const step = Math.max(2, Math.round(SPARK_W / n));
  const w = n * step;
  const xOf = (t: number) => (Math.round(t / s.bucketMs) - s.firstBucket) * step;
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
  // Failed runs: a 2-unit block under the lines per bucket holding one, drawn as the dashes of one line (a dash
  // per block costs two numbers; a day of sporadic timeouts is many blocks on a 50-target page).
  const dashes: number[] = [0];
  let at = 0;
  for (const p of s.points) {
    if (p.fails === 0) continue;
    const fx = xOf(p.t);
    dashes.push(fx - at, step);
    at = fx + step;
  }
  const fails = dashes.length > 1 ? [...dashes, w].join(' ') : '';
  // No <title> and no class or slot attributes: the cell (.probe, its link) names the slot, the card the scale;
  // each of those was 5-10 KB of the 50-target page.
  return svg`<svg viewBox="0 0 ${w} ${SPARK_H}" data-points="${s.points.length}">${dur ? svg`<path class="d" d="${dur}"/>` : ''}${ttft ? svg`<path class="t" d="${ttft}"/>` : ''}${fails ? svg`<path class="f" d="M0 ${FAIL_Y}h${w}" stroke-dasharray="${fails}"/>` : ''}</svg>`;
}
