// An unstamped matched line takes the stamp of the last stamped line before it (replay-files.ts stampBefore), read
// back line by line: a stamp is looked for in a line's first 160 characters, not bytes, so one behind a prefix of
// multi-byte text is found, and one past the 160th character is not.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replayFiles } from '../../src/commands/replay-files.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-stamp-before-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function stampOfDeath(prefix: string): string {
  const file = join(dir, 'engine.log');
  writeFileSync(
    file,
    [
      '[2026-08-10 14:01:00 TP0] Load weight begin.',
      `${prefix}[2026-08-10 14:01:30 TP0] Load weight end.`,
      RULE_FIXTURES.nixl_bootstrap_thread_dead![0],
    ].join('\n') + '\n',
  );
  const r = replayFiles({ files: [file], packs: ['nixl'], timeline: false });
  expect(r.events.map((e) => e.rule)).toEqual(['nixl_bootstrap_thread_dead']);
  return r.events[0]!.stamp;
}

describe('the stamp before an unstamped line', () => {
  it('is read within the first 160 characters of each line, multi-byte ones counted as one', () => {
    // 100 characters of 3 bytes each: the stamp starts at byte 301 but at character 102.
    expect(stampOfDeath('中'.repeat(100) + ' ')).toBe('2026-08-10 14:01:30');
    // Past the 160th character: that line has no stamp, the line before it does.
    expect(stampOfDeath('中'.repeat(170) + ' ')).toBe('2026-08-10 14:01:00');
  });
});
