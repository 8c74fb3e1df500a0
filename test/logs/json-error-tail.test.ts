// The tail check of SGLang's `Failed to parse JSON part: {text}, JSON parse error: {e}` (issue 37 item 1, a fake
// tail then a forged record) against CPython itself: test/fixtures/json-errors/cpython.json holds str(e) of
// json.loads and JSONDecoder().raw_decode from CPython 3.6 → 3.13 on random JSON-ish texts (gen.py makes it). Every
// real tail must end the record; a tail naming anything else (another position, another message) must not.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  decode,
  errorTexts,
  JsonErrorTail,
  type DecodeMode,
} from '../../src/sources/logs/json-error-tail.js';

interface Row {
  t: string;
  loads: string[];
  raw: string[];
}
const ROWS = JSON.parse(
  readFileSync(new URL('../fixtures/json-errors/cpython.json', import.meta.url), 'utf8'),
) as Row[];
const MODES: [DecodeMode, 'loads' | 'raw'][] = [
  ['loads', 'loads'],
  ['raw_decode', 'raw'],
];
const PREFIX = '[2026-08-10 14:00:03 TP0] Failed to parse JSON part: ';

/** Whether the tail `said` after `text` ends a record that carried `text` (split into lines as a log has it). */
function ends(text: string, said: string): boolean {
  const lines = text.split('\n');
  if (lines.length === 1) {
    const header = `${PREFIX}${text}, JSON parse error: ${said}`;
    return new JsonErrorTail(header.slice(PREFIX.length)).fits(header, PREFIX.length);
  }
  const t = new JsonErrorTail(lines[0]!);
  for (const l of lines.slice(1, -1)) t.add(l);
  return t.fits(`${lines.at(-1)!}, JSON parse error: ${said}`);
}

/** The same message form with another position, its line and column computed as CPython would for it. */
function moved(text: string, said: string, by: number): string | undefined {
  const m = /^(.*): line \d+ column \d+ \(char (\d+)\)$/.exec(said);
  if (!m) return undefined;
  const pos = Number(m[2]) + by;
  if (pos < 0 || pos > [...text].length) return undefined;
  const cps = [...text].slice(0, pos);
  const line = cps.filter((c) => c === '\n').length + 1;
  const nl = cps.lastIndexOf('\n');
  return `${m[1]}: line ${line} column ${pos - nl} (char ${pos})`;
}

const MESSAGES = [
  'Expecting value',
  "Expecting ',' delimiter",
  "Expecting ':' delimiter",
  'Expecting property name enclosed in double quotes',
  'Unterminated string starting at',
  'Invalid control character at',
  'Invalid \\escape',
  'Invalid \\uXXXX escape',
  'Extra data',
];

describe('CPython json error messages (issue 37 item 1)', () => {
  it('the fixture covers every message form, multi-line texts, non-BMP text and both modes', () => {
    const all = ROWS.flatMap((r) => [...r.loads, ...r.raw]);
    for (const m of [...MESSAGES, 'Illegal trailing comma before end of', 'Unexpected UTF-8 BOM'])
      expect(
        all.some((s) => s.startsWith(m)),
        m,
      ).toBe(true);
    expect(all.some((s) => !s.includes(': line 1 '))).toBe(true);
    expect(ROWS.some((r) => /[\u{10000}-\u{10FFFF}]/u.test(r.t) && r.loads.length > 0)).toBe(true);
    expect(ROWS.filter((r) => r.loads.length === 0).length).toBeGreaterThan(10);
    expect(ROWS.length).toBeGreaterThan(1000);
  });

  it("decode raises exactly CPython's messages (every version's), and decodes what CPython decodes", () => {
    const wrong: string[] = [];
    for (const r of ROWS)
      for (const [mode, key] of MODES) {
        const got = errorTexts(r.t, mode).sort();
        if (JSON.stringify(got) !== JSON.stringify(r[key]))
          wrong.push(`${mode} ${JSON.stringify(r.t)}: ${got}`);
      }
    expect(wrong).toEqual([]);
  });

  it("every real tail ends the record (the text carried over the record's lines, as the log has it)", () => {
    const refused: string[] = [];
    let n = 0;
    for (const r of ROWS)
      for (const said of [...r.loads, ...r.raw]) {
        n++;
        if (!ends(r.t, said)) refused.push(`${JSON.stringify(r.t)}: ${said}`);
      }
    expect(refused).toEqual([]);
    expect(n).toBeGreaterThan(1000);
  });

  it('a tail naming another position or another message ends nothing', () => {
    const accepted: string[] = [];
    let n = 0;
    for (const r of ROWS) {
      const real = new Set([...r.loads, ...r.raw]);
      const fakes = new Set<string>(['Expecting value: line 1 column 2 (char 1)']);
      for (const said of real) {
        for (const by of [-3, -1, 1, 2, 7]) {
          const f = moved(r.t, said, by);
          if (f !== undefined) fakes.add(f);
        }
        const at = said.slice(said.indexOf(': line '));
        for (const m of MESSAGES) fakes.add(`${m}${at}`);
        // The right message and char with another line or column.
        fakes.add(said.replace(/column (\d+)/, (_, c: string) => `column ${Number(c) + 1}`));
        fakes.add(said.replace(/line (\d+)/, (_, l: string) => `line ${Number(l) + 1}`));
      }
      for (const f of fakes) {
        if (real.has(f)) continue;
        n++;
        if (ends(r.t, f)) accepted.push(`${JSON.stringify(r.t)}: ${f}`);
      }
    }
    expect(accepted).toEqual([]);
    expect(n).toBeGreaterThan(10_000);
  });

  it('2,000 fake tails in one record cost a few decodes, not one each (the answer settles on the first)', () => {
    const t = new JsonErrorTail('[{"name": "f", "arguments": {"a": "x');
    const fake = `${'y'.repeat(100)}, JSON parse error: Expecting value: line 1 column 2 (char 1)`;
    let ended = 0;
    for (let i = 0; i < 2000; i++) {
      if (t.fits(fake)) ended++;
      t.add(fake);
    }
    expect(ended).toBe(0);
    expect(t.built).toBeLessThanOrEqual(2);
    // The real tail still fits after them: the first error is the raw newline after `x`, at char 36.
    expect(t.fits('"}}], JSON parse error: Invalid control character at: line 1 column 37 (char 36)')).toBe(
      true,
    );
  });

  it('a text CPython decodes takes no tail at all', () => {
    const t = new JsonErrorTail('[{"name": "f",');
    expect(t.fits('"arguments": {}}], JSON parse error: Expecting value: line 1 column 2 (char 1)')).toBe(
      false,
    );
    expect(decode('[{"name": "f",\n"arguments": {}}]', 'loads')).toEqual({ ok: true, end: 32 });
  });

  it('positions are Python str indices: a character past U+FFFF counts once', () => {
    // '["😀' then a raw newline: json.loads raises at char 3 (UTF-16 index 4).
    expect(errorTexts('["\u{1F600}\n"]', 'loads')).toEqual([
      'Invalid control character at: line 1 column 4 (char 3)',
    ]);
  });

  it('a deep text is decoded without recursion (a model may nest 100,000 brackets)', () => {
    const deep = '['.repeat(100_000) + 'x';
    expect(errorTexts(deep, 'loads')).toEqual(['Expecting value: line 1 column 100001 (char 100000)']);
  });
});
