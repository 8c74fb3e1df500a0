// A JSON log's engine lines are read from the records' messages (scanner.ts viewOf): a multi-rank SGLang log written
// as JSON records gives replay the events, verdict timeline and per-rank gauges the plain log gives, on the timeline
// path and the daemon's (last line per rank of each chunk) alike; a message without a stamp of its own takes the
// record's time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatMetrics, replayFiles } from '../../src/commands/replay-files.js';
import { LOG_PACKS } from '../../src/config/schema.js';
import type { EngineLine } from '../../src/sources/logs/engine-lines.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import { ChunkScanner, type StructuredOptions } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-json-engine-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const stamp = (s: number) =>
  `2026-02-27 15:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;

/** Four DP ranks printing decode batches for two minutes, rank 3 stalling after 60 s, then a thread death. */
function plainLog(): string[] {
  const lines: string[] = [];
  for (let s = 0; s < 120; s++) {
    for (let dp = 0; dp < 4; dp++) {
      for (let k = 0; k < 3; k++) {
        const gen = dp === 3 && s >= 60 ? '0.00' : `${100 + dp * 10 + k}.50`;
        lines.push(
          `[${stamp(s)} DP${dp} TP${dp}] Decode batch, #running-req: ${10 + dp}, #token: ${1000 + s}, token usage: 0.${dp + 1}0, cuda graph: True, gen throughput (token/s): ${gen}, #queue-req: ${dp + k}, `,
        );
      }
    }
    if (s % 17 === 0) lines.push(`[${stamp(s)}] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK`);
  }
  lines.push(...RULE_FIXTURES.nixl_bootstrap_thread_dead![0]!.split('\n'));
  return lines;
}

const asJson = (lines: string[]) => {
  let time = '';
  return lines.map((l) => {
    const m = /^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)/.exec(l);
    if (m) time = `${m[1]}T${m[2]}Z`;
    return JSON.stringify({ time, level: 'INFO', message: l });
  });
};

async function replay(file: string, format: 'plain' | 'json', timeline: boolean) {
  const r = replayFiles({ files: [file], packs: [...LOG_PACKS], format, timeline, service: 'engine' });
  return {
    events: r.events.map((e) => `${e.lineNo} ${e.rule} ${JSON.stringify(e.fields)}`),
    timeline: r.timeline?.entries.map((t) => `${t.at} ${t.text}`),
    metrics: (await formatMetrics(r.registry)).split('\n').filter((l) => l.startsWith('wedgewatch_engine')),
  };
}

describe('JSON records: engine lines from the message', () => {
  for (const timeline of [true, false]) {
    it(`replay (timeline ${timeline}) gives the plain log's events, timeline and per-rank gauges`, async () => {
      const plain = join(dir, 'plain.log');
      const json = join(dir, 'json.log');
      const lines = plainLog();
      writeFileSync(plain, `${lines.join('\n')}\n`);
      writeFileSync(json, `${asJson(lines).join('\n')}\n`);
      const a = await replay(plain, 'plain', timeline);
      const b = await replay(json, 'json', timeline);
      expect(a.events.length).toBeGreaterThan(0);
      expect(b.events).toEqual(a.events);
      expect(b.timeline).toEqual(a.timeline);
      // Every rank's gauges, as the plain log has them (a record's rank is in its message's prefix).
      expect(a.metrics.filter((l) => l.includes('rank="3"')).length).toBeGreaterThan(0);
      expect(b.metrics).toEqual(a.metrics);
    });
  }

  it('the daemon path reads each rank from the message, and a message without a stamp takes the record time', () => {
    const seen: EngineLine[] = [];
    const structured: StructuredOptions = { format: 'json' };
    const s = new ChunkScanner(
      compileRuleSet(['sglang'], []),
      65_536,
      { match: () => {}, engine: (l) => seen.push(l), truncated: () => {} },
      0,
      false,
      {},
      structured,
    );
    const batch = (dp: number) =>
      `Decode batch, #running-req: ${dp + 1}, #token: 5, token usage: 0.10, gen throughput (token/s): 1.00, #queue-req: 0`;
    const text = [
      ...[0, 1, 2].map((dp) =>
        JSON.stringify({ time: 'x', message: `[2026-02-27 15:01:0${dp} DP${dp} TP${dp}] ${batch(dp)}` }),
      ),
      // A JSON formatter's message without the logger's prefix: the record's time field dates it.
      JSON.stringify({ timestamp: '2026-02-27T15:02:00Z', message: `${batch(7)}` }),
    ].join('\n');
    const buf = Buffer.from(`${text}\n`);
    s.feed(buf, buf.length);
    s.flush();
    // The last line of each rank in the chunk (gauges keep the last value): rank 0's is the unprefixed record.
    expect(seen.map((l) => [l.rank, l.values.running, l.values.queued, l.stamp])).toEqual([
      ['1', 2, 0, '2026-02-27 15:01:01'],
      ['2', 3, 0, '2026-02-27 15:01:02'],
      ['0', 8, 0, '2026-02-27T15:02:00Z'],
    ]);
  });
});
