// A bounded line diff in unified format. Common head and tail lines are trimmed first (a typical edit to
// a serve script touches a few lines), then an LCS table over the middle, capped in cells so a rewritten
// large file costs bounded time and memory; the text itself is capped in bytes.

export interface DiffOptions {
  context?: number;
  /** Largest LCS table (lines × lines) computed; beyond it the diff says only that the files differ. */
  maxCells?: number;
  maxBytes?: number;
}

type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

export function unifiedDiff(before: string, after: string, path: string, opts: DiffOptions = {}): string {
  const context = opts.context ?? 3;
  const maxCells = opts.maxCells ?? 4_000_000;
  const maxBytes = opts.maxBytes ?? 16 * 1024;
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const header = `--- a${path}\n+++ b${path}\n`;
  if (am.length === 0 && bm.length === 0) return '';
  if (am.length * bm.length > maxCells) {
    return `${header}@@ files differ: ${a.length} → ${b.length} lines, too many changed lines to diff @@\n`;
  }
  const ops: Op[] = [];
  for (let i = 0; i < head; i++) ops.push({ kind: ' ', line: a[i]!, a: i, b: i });
  for (const op of lcsOps(am, bm)) ops.push({ ...op, a: op.a + head, b: op.b + head });
  for (let i = 0; i < tail; i++) {
    ops.push({ kind: ' ', line: a[a.length - tail + i]!, a: a.length - tail + i, b: b.length - tail + i });
  }
  let out = header;
  for (const hunk of hunks(ops, context)) {
    const text = formatHunk(hunk);
    if (out.length + text.length > maxBytes) {
      out += `@@ diff truncated at ${maxBytes} bytes @@\n`;
      break;
    }
    out += text;
  }
  return out;
}

function splitLines(s: string): string[] {
  if (s === '') return [];
  const lines = s.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function lcsOps(
  a: string[],
  b: string[],
): Array<{ kind: ' ' | '-' | '+'; line: string; a: number; b: number }> {
  const n = a.length;
  const m = b.length;
  // table[i][j] = LCS length of a[i..] and b[j..], flattened.
  const table = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[at(i, j)] =
        a[i] === b[j] ? table[at(i + 1, j + 1)]! + 1 : Math.max(table[at(i + 1, j)]!, table[at(i, j + 1)]!);
    }
  }
  const ops: Array<{ kind: ' ' | '-' | '+'; line: string; a: number; b: number }> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i]!, a: i++, b: j++ });
    } else if (i < n && (j >= m || table[at(i + 1, j)]! >= table[at(i, j + 1)]!)) {
      // Deletions before insertions, as diff(1) prints a changed line.
      ops.push({ kind: '-', line: a[i]!, a: i++, b: j });
    } else {
      ops.push({ kind: '+', line: b[j]!, a: i, b: j++ });
    }
  }
  return ops;
}

function hunks(ops: Op[], context: number): Op[][] {
  const out: Op[][] = [];
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i]!.kind === ' ') i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - context);
    let end = i;
    // Extend while the next change is within 2×context unchanged lines.
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let k = end;
      while (k < ops.length && ops[k]!.kind === ' ' && k - end < 2 * context) k++;
      if (k < ops.length && ops[k]!.kind !== ' ') end = k;
      else break;
    }
    const stop = Math.min(ops.length, end + context);
    out.push(ops.slice(start, stop));
    i = stop;
  }
  return out;
}

function formatHunk(h: Op[]): string {
  const aLines = h.filter((o) => o.kind !== '+').length;
  const bLines = h.filter((o) => o.kind !== '-').length;
  const aStart = aLines === 0 ? h[0]!.a : h.find((o) => o.kind !== '+')!.a + 1;
  const bStart = bLines === 0 ? h[0]!.b : h.find((o) => o.kind !== '-')!.b + 1;
  return `@@ -${aStart},${aLines} +${bStart},${bLines} @@\n` + h.map((o) => `${o.kind}${o.line}\n`).join('');
}
