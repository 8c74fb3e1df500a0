// Acceptance (issue 12): two corpora through `replay` (the same engine as the CLI and the daemon): one built
// from upstream format strings (every built-in rule's fixture), one of lines quoted in public bug reports.
// Every critical signature is caught as critical, every warning as warning, one event per incident, and the
// healthy lines around them stay silent.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeLineSource } from '../helpers/ingest-gen.mjs';
import { LOG_PACKS } from '../../src/config/schema.js';
import { PACKS, RULE_CLASSES } from '../../src/sources/logs/packs/index.js';
import { LINE_STAMP } from '../../src/sources/logs/line-time.js';
import { replayFiles, type ReplayEvent } from '../../src/commands/replay-files.js';
import { REPORT_CORPUS } from '../fixtures/logs/report-corpus.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-corpus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULES = new Map(LOG_PACKS.flatMap((p) => PACKS[p].rules.map((r) => [r.name, r] as const)));
const healthy = makeLineSource({ seed: 11, faults: false });
let healthyAt = 0;

interface Entry {
  label: string;
  text: string;
  expect: string[];
}

const GLOBAL_STAMP = new RegExp(LINE_STAMP.source, 'g');
const pad = (n: number) => String(n).padStart(2, '0');
/** Every stamp of `text` set to entry `i`'s hour, in its own format: entries an hour apart are separate incidents. */
function atHour(text: string, i: number): string {
  const d = new Date(Date.UTC(2026, 7, 10) + i * 3_600_000);
  const [mo, da, h] = [pad(d.getUTCMonth() + 1), pad(d.getUTCDate()), pad(d.getUTCHours())];
  return text.replace(GLOBAL_STAMP, (s) => {
    if (/^\d{4}-/.test(s))
      return `${d.getUTCFullYear()}-${mo}-${da}${s[10]}${h}:00:00${s.slice(19).replace(/^[.,]\d+/, '')}`;
    if (/^[IWEF]/.test(s)) return `${s[0]}${mo}${da} ${h}:00:00${s.slice(14)}`;
    return `${mo}-${da} ${h}:00:00${s.slice(14)}`;
  });
}

/** Writes the entries apart (an hour and a few hundred healthy lines between them) and replays them. */
function replayCorpus(name: string, entries: Entry[]) {
  const parts: string[] = [];
  const ranges: [from: number, to: number][] = [];
  let line = 1;
  for (const [i, e] of entries.entries()) {
    const gap = Array.from({ length: 220 }, () => atHour(healthy(healthyAt++), i));
    parts.push(...gap);
    line += gap.length;
    const n = e.text.split(/\r?\n/).length;
    parts.push(atHour(e.text, i));
    ranges.push([line, line + n - 1]);
    line += n;
  }
  const file = join(dir, `${name}.log`);
  writeFileSync(file, `${parts.join('\n')}\n`);
  const r = replayFiles({ files: [file], packs: [...LOG_PACKS], format: 'auto' });
  const within = ([a, b]: [number, number]) => r.events.filter((ev) => ev.lineNo >= a && ev.lineNo <= b);
  const outside = r.events.filter((ev) => !ranges.some(([a, b]) => ev.lineNo >= a && ev.lineNo <= b));
  return { r, ranges, within, outside };
}

const show = (evs: ReplayEvent[]) => evs.map((e) => `${e.rule}/${e.severity}`);

describe('upstream corpus (every rule fixture, quoted from its upstream format string)', () => {
  const entries: Entry[] = Object.entries(RULE_FIXTURES).flatMap(([rule, texts]) =>
    // A start-up marker raises no event: it ends the open incidents (rules/incidents.ts).
    texts.map((text) => ({ label: rule, text, expect: RULES.get(rule)!.startup ? [] : [rule] })),
  );
  const { within, outside, ranges } = replayCorpus('upstream', entries);

  it('every fixture raises exactly its rule, at the pack severity, and nothing else fires', () => {
    const wrong: string[] = [];
    entries.forEach((e, i) => {
      const got = within(ranges[i]!);
      const want = e.expect.map((n) => `${n}/${RULES.get(n)!.severity}`);
      if (JSON.stringify(show(got)) !== JSON.stringify(want))
        wrong.push(`${e.label}: ${show(got).join(',')}`);
    });
    expect(wrong).toEqual([]);
    expect(show(outside)).toEqual([]);
  });

  it('every built-in rule names a class and its upstream source', () => {
    for (const r of RULES.values()) {
      expect(RULE_CLASSES, r.name).toContain(r.class);
      expect(r.upstream.length, r.name).toBeGreaterThan(10);
    }
  });

  it('events carry 1-based line numbers and the rule class', () => {
    const e = within(ranges[0]!)[0]!;
    expect(e.lineNo).toBe(ranges[0]![0]);
    expect(e.class).toBe(RULES.get(e.rule)!.class);
  });
});

describe('bug-report corpus (lines quoted in public reports of hangs and crashes)', () => {
  const entries: Entry[] = REPORT_CORPUS.map((e) => ({ label: e.from, text: e.text, expect: e.expect }));
  const { within, outside, ranges } = replayCorpus('reports', entries);

  it('catches every quoted signature at its severity, once per incident; healthy lines stay silent', () => {
    const wrong: string[] = [];
    entries.forEach((e, i) => {
      const got = within(ranges[i]!);
      const want = e.expect.map((n) => `${n}/${RULES.get(n)!.severity}`);
      if (JSON.stringify(show(got)) !== JSON.stringify(want))
        wrong.push(`${e.label}: ${show(got).join(',')}`);
    });
    expect(wrong).toEqual([]);
    expect(show(outside)).toEqual([]);
  });
});
