// The status page's sparklines as tests read them: the cell's link names the slot (the SVG carries no name).
/** Each probe cell's sparkline by "probe hop conn" (from the cell's link), with its point count. */
export function sparklines(page: string): Map<string, { points: number; svg: string }> {
  const out = new Map<string, { points: number; svg: string }>();
  const cell =
    /<div class="probe[^"]*"[^>]*><a href="\/probe\?target=[^&]*&amp;probe=([^&]*)&amp;endpoint=([^&]*)&amp;conn=([^&]*)&amp;debug=true">(?:(?!<div class="probe)[\s\S])*?(<svg viewBox="[^"]*" data-points="(\d+)">[\s\S]*?<\/svg>)/g;
  for (const m of page.matchAll(cell))
    out.set(`${m[1]} ${m[2]} ${m[3]}`, { points: Number(m[5]), svg: m[4]! });
  return out;
}
