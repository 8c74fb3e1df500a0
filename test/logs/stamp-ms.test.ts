// stampMs reads SGLang's `YYYY-MM-DD HH:MM:SS` by position (the stamp of most lines of a log) and must give what
// line-time.ts stampToMs gives every stamp: checked on seeded random stamps of that length, valid and not.
import { describe, expect, it } from 'vitest';
import { stampMs } from '../../src/sources/logs/engine-lines.js';
import { stampToMs } from '../../src/sources/logs/line-time.js';
import { mulberry32 } from '../../src/sim/prng.js';

describe('stampMs', () => {
  it("agrees with stampToMs on 19-character stamps, SGLang's and others", () => {
    const rnd = mulberry32(19);
    const digit = () => String(Math.floor(rnd() * 10));
    const chars = ['-', ':', ' ', 'T', 'x', '0', '9', '/'];
    let sglang = 0;
    for (let n = 0; n < 5000; n++) {
      let s = `${digit()}${digit()}${digit()}${digit()}-${digit()}${digit()}-${digit()}${digit()} ${digit()}${digit()}:${digit()}${digit()}:${digit()}${digit()}`;
      if (rnd() < 0.3) {
        const i = Math.floor(rnd() * s.length);
        s = s.slice(0, i) + chars[Math.floor(rnd() * chars.length)]! + s.slice(i + 1);
      } else sglang++;
      expect(Object.is(stampMs(s, 2026), stampToMs(s, 2026, true)), s).toBe(true);
    }
    expect(sglang).toBeGreaterThan(3000);
    expect(stampMs('2026-07-10 12:00:01', 1970)).toBe(Date.UTC(2026, 6, 10, 12, 0, 1));
  });
});
