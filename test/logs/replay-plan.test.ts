// replay's plan per file (src/commands/replay.ts planFiles, planNotes): with --pack, the file's engine is told from
// its lines only where the warning can name one whose pack is not run; with every engine's pack named nothing is
// read for it (a fixed cost of every replay that names them, as bench:ingest-compare does) and nothing is warned.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planFiles, planNotes } from '../../src/commands/replay.js';
import { LOG_PACKS } from '../../src/config/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-replay-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const vllmLog = join(dir, 'vllm.log');
writeFileSync(
  vllmLog,
  Array.from(
    { length: 20 },
    (_, i) =>
      `(EngineCore_DP0 pid=41) INFO 08-10 14:00:${String(i).padStart(2, '0')} [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s`,
  ).join('\n') + '\n',
);

describe('replay plan with --pack', () => {
  it('tells the engine and warns when its pack is not named', () => {
    const [plan] = planFiles([vllmLog], { pack: ['sglang'] });
    expect(plan!.guess?.engine).toBe('vllm');
    expect(planNotes(vllmLog, plan!).join('\n')).toContain(`${vllmLog} reads like vllm`);
  });

  it('reads nothing for the engine when every engine’s pack is named (no warning could name one)', () => {
    const [plan] = planFiles([vllmLog], { pack: [...LOG_PACKS] });
    expect(plan!.guess).toBeUndefined();
    expect(planNotes(vllmLog, plan!)).toEqual([
      `replay: ${vllmLog}: --pack; packs ${plan!.packs.join(', ')}`,
    ]);
    // A file that cannot be read is not opened for it either (the replay itself reports it).
    expect(planFiles([join(dir, 'missing.log')], { pack: [...LOG_PACKS] })[0]!.guess).toBeUndefined();
  });
});
