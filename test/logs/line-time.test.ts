// Acceptance (issue 27, item 5): the stamps engines and their libraries print are read, and an unstamped line
// takes the previous stamp (replay's timeline then has it: `caught` no longer depends on a line's own stamp).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayFiles } from '../../src/commands/replay-files.js';
import { lineTimeNear, stampText, stampToMs } from '../../src/sources/logs/line-time.js';

const at = (line: string, year = 2026) => stampToMs(stampText(line)!, year, true);

describe('line stamps', () => {
  it('reads SGLang, vLLM, glog/absl, torch, ISO 8601 with zones and Rust tracing stamps', () => {
    expect(at('[2026-08-10 14:09:40 DP1 TP1] Decode batch')).toBe(Date.UTC(2026, 7, 10, 14, 9, 40));
    expect(at('(EngineCore_DP0 pid=4) ERROR 08-10 14:09:40 [core.py:710] x')).toBe(
      Date.UTC(2026, 7, 10, 14, 9, 40),
    );
    expect(at('E1129 14:09:40.123456 4242 some_file.cpp:42] boom')).toBe(
      Date.UTC(2026, 10, 29, 14, 9, 40, 123),
    );
    expect(at('[rank1]:[E1129 14:09:40.426415540 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught')).toBe(
      Date.UTC(2026, 10, 29, 14, 9, 40, 426),
    );
    expect(at('2026-08-10T14:09:40.5+02:00 INFO x')).toBe(Date.UTC(2026, 7, 10, 12, 9, 40, 500));
    expect(at('2026-08-10T14:09:40.123456Z  ERROR smg::router: panicked')).toBe(
      Date.UTC(2026, 7, 10, 14, 9, 40, 123),
    );
    expect(stampText('no stamp here, only 12:00')).toBeUndefined();
  });

  it('a yearless stamp read early in January from late December is last year', () => {
    const now = Date.UTC(2027, 0, 2);
    expect(lineTimeNear('ERROR 12-31 23:59:00 [core.py:1] x', now, true)).toBe(
      Date.UTC(2026, 11, 31, 23, 59),
    );
  });

  it('an unstamped line (a stderr traceback) takes the stamp before it and is on the timeline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-line-time-'));
    const file = join(dir, 'prefill.log');
    writeFileSync(
      file,
      [
        'E0810 14:09:40.123456 4242 nixl_agent.cpp:42] a glog line',
        'Exception in thread Thread-3 (bootstrap_thread):',
        'Traceback (most recent call last):',
        "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
        '',
      ].join('\n'),
    );
    const r = replayFiles({ files: [file], packs: ['nixl', 'python'], timeline: true });
    const year = r.events[0]!.time;
    expect(r.events.map((e) => e.rule)).toEqual(['nixl_bootstrap_thread_dead']);
    expect(new Date(year).toISOString().slice(5, 19)).toBe('08-10T14:09:40');
    expect(r.timeline!.caught).toBe(true);
  });
});
