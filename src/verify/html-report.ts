// `--report FILE.html`: one self-contained page (no network at view time: inline CSS and script, data embedded
// as JSON). Throughput against concurrency before and after with the trials' range as bars, latency percentiles
// per level, TTFT per conversation round, and the verdict table. The script draws the SVG charts from the data
// with textContent only, so no engine text (errors, model names) is ever parsed as markup.
import { writeFileSync } from 'node:fs';
import type { BaselineComparison, SavedResults } from './baseline.js';

export interface HtmlReportInput {
  after: SavedResults;
  before?: SavedResults;
  comparison?: BaselineComparison & { summary: string };
}

/** The JSON put inside <script>: `<` escaped so no text in it can close the element. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccd;padding:3px 8px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f0f2f6}.PASS{color:#176b2c;font-weight:600}.FAIL,.REGRESSION{color:#b3261e;font-weight:600}.INCONCLUSIVE{color:#8a5a00;font-weight:600}
svg{background:#fafbfc;border:1px solid #dde}.legend span{margin-right:14px}.muted{color:#667}
`;

// Runs in the browser: reads #report-data, draws every chart and table.
const SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var COLORS = { before: '#6b7a90', after: '#1f6feb', 'before p50': '#9aa7b8', 'before p99': '#4b5668', 'after p50': '#7fb0ff', 'after p99': '#0b4fc2' };
  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(tag, parent, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    parent.appendChild(e);
    return e;
  }
  function step(run, name) {
    if (!run) return undefined;
    for (var i = 0; i < run.steps.length; i++) if (run.steps[i].step === name) return run.steps[i];
    return undefined;
  }
  // series: [{name, points: [{x, y, lo?, hi?}]}]; logX for concurrency.
  function chart(id, title, xLabel, yLabel, series, logX) {
    var box = document.getElementById(id);
    h('h2', box, title);
    var all = [];
    series.forEach(function (s) { s.points.forEach(function (p) { all.push(p); }); });
    if (all.length === 0) { h('p', box, 'no data in these runs', 'muted'); return; }
    var W = 640, H = 300, L = 64, R = 16, T = 16, B = 44;
    var svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-chart': id, role: 'img' }, box);
    el('title', {}, svg, title);
    var fx = function (x) { return logX ? Math.log2(x) : x; };
    var xs = all.map(function (p) { return fx(p.x); });
    var ys = all.map(function (p) { return p.hi !== undefined ? p.hi : p.y; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    var y1 = Math.max.apply(null, ys) * 1.1 || 1;
    var px = function (x) { return L + ((fx(x) - x0) / (x1 - x0)) * (W - L - R); };
    var py = function (y) { return T + (1 - y / y1) * (H - T - B); };
    el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#889' }, svg);
    el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#889' }, svg);
    var ticks = {};
    all.forEach(function (p) { ticks[p.x] = true; });
    Object.keys(ticks).forEach(function (x) {
      el('text', { x: px(Number(x)), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11 }, svg, x);
    });
    for (var i = 0; i <= 4; i++) {
      var v = (y1 * i) / 4;
      el('text', { x: L - 6, y: py(v) + 4, 'text-anchor': 'end', 'font-size': 11 }, svg, v >= 100 ? v.toFixed(0) : v.toPrecision(2));
    }
    el('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 12 }, svg, xLabel);
    el('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', 'font-size': 12, transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')' }, svg, yLabel);
    var legend = h('div', box, undefined, 'legend');
    series.forEach(function (s) {
      var color = COLORS[s.name] || '#333';
      var g = el('g', { 'data-series': s.name }, svg);
      var pts = s.points.slice().sort(function (a, b) { return a.x - b.x; });
      el('polyline', { points: pts.map(function (p) { return px(p.x) + ',' + py(p.y); }).join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }, g);
      pts.forEach(function (p) {
        if (p.lo !== undefined && p.hi !== undefined)
          el('line', { x1: px(p.x), x2: px(p.x), y1: py(p.lo), y2: py(p.hi), stroke: color, 'stroke-width': 6, 'stroke-opacity': 0.35, 'data-interval': p.lo + '..' + p.hi }, g);
        var c = el('circle', { cx: px(p.x), cy: py(p.y), r: 4, fill: color, 'data-x': p.x, 'data-y': p.y }, g);
        el('title', {}, c, s.name + ': ' + xLabel + ' ' + p.x + ' → ' + p.y.toFixed(3));
      });
      var item = h('span', legend);
      item.style.color = color;
      item.textContent = '■ ' + s.name;
    });
  }
  var runs = data.before ? [['before', data.before], ['after', data.after]] : [['after', data.after]];
  var tp = runs.map(function (r) {
    var s = step(r[1], 'throughput');
    var levels = (s && s.saved && s.saved.levels) || [];
    return {
      name: r[0],
      points: levels.map(function (l) {
        var t = (l.trials || []).map(function (x) { return x.aggTokS; });
        return { x: l.concurrency, y: l.aggTokS, lo: t.length ? Math.min.apply(null, t) : undefined, hi: t.length ? Math.max.apply(null, t) : undefined };
      }),
    };
  });
  chart('throughput', 'Aggregate throughput against concurrency (median, bars: range of the counted trials)', 'concurrency', 'output tokens/s', tp, true);
  var lat = [];
  runs.forEach(function (r) {
    var s = step(r[1], 'throughput');
    var levels = (s && s.saved && s.saved.levels) || [];
    ['p50', 'p99'].forEach(function (q) {
      lat.push({ name: r[0] + ' ' + q, points: levels.map(function (l) { return { x: l.concurrency, y: l[q + 'LatMs'] / 1000 }; }) });
    });
  });
  chart('latency', 'End-to-end latency percentiles against concurrency', 'concurrency', 'seconds', lat, true);
  var ttft = runs.map(function (r) {
    var s = step(r[1], 'conversation');
    var rounds = (s && s.saved && s.saved.rounds) || [];
    return { name: r[0], points: rounds.filter(function (x) { return x.ttftP50Ms !== null; }).map(function (x) { return { x: x.round, y: x.ttftP50Ms / 1000, lo: x.ttftMinMs / 1000, hi: x.ttftMaxMs / 1000 }; }) };
  });
  chart('ttft-rounds', 'Conversation: time to first token per round (median over sessions, bars: min..max)', 'round', 'seconds', ttft, false);

  var v = document.getElementById('verdicts');
  h('h2', v, 'Steps');
  var t = h('table', v);
  var head = h('tr', t);
  ['run', 'step', 'result', 'time', 'summary'].forEach(function (x) { h('th', head, x); });
  runs.forEach(function (r) {
    r[1].steps.forEach(function (s) {
      var row = h('tr', t);
      row.setAttribute('data-step', s.step);
      h('td', row, r[0]);
      h('td', row, s.step);
      h('td', row, s.ok ? 'PASS' : 'FAIL', s.ok ? 'PASS' : 'FAIL');
      h('td', row, s.durationMs !== undefined ? (s.durationMs / 1000).toFixed(1) + 's' : '');
      h('td', row, s.summary);
    });
  });
  if (data.comparison) {
    h('h2', v, 'Comparison: ' + data.comparison.verdict);
    h('p', v, data.comparison.summary);
    var c = h('table', v);
    var ch = h('tr', c);
    ['verdict', 'figure', 'before', 'after', 'after/before', '95% interval', 'detects beyond', 'why'].forEach(function (x) { h('th', ch, x); });
    var pct = function (r) { return isFinite(r) ? ((r - 1) * 100).toFixed(1) + '%' : (r > 0 ? '+∞' : '-∞'); };
    data.comparison.figures.forEach(function (f) {
      var row = h('tr', c);
      row.setAttribute('data-figure', f.key);
      h('td', row, f.verdict, f.verdict);
      h('td', row, f.key);
      h('td', row, f.before.toPrecision(4));
      h('td', row, f.after.toPrecision(4));
      h('td', row, pct(f.ratio));
      h('td', row, '[' + pct(f.lo) + ', ' + pct(f.hi) + ']');
      h('td', row, f.mde === null || !isFinite(f.mde) ? 'none' : (f.mde * 100).toFixed(1) + '%');
      h('td', row, f.why);
    });
  }
  document.body.setAttribute('data-rendered', 'true');
})();
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderHtmlReport(input: HtmlReportInput): string {
  const title = `wedgewatch verify ${input.after.url} model=${input.after.model}`;
  // Infinity does not survive JSON: the page reads null as "no interval".
  const data = JSON.parse(
    JSON.stringify(input, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)),
  ) as unknown;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<p class="muted">saved ${escapeHtml(input.after.savedAt)}${input.before ? `; compared with ${escapeHtml(input.before.url)} saved ${escapeHtml(input.before.savedAt)}` : ''}</p>
<div id="verdicts"></div><div id="throughput"></div><div id="latency"></div><div id="ttft-rounds"></div>
<script type="application/json" id="report-data">${embedJson(data)}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}

export function writeHtmlReport(path: string, input: HtmlReportInput): void {
  writeFileSync(path, renderHtmlReport(input));
}
