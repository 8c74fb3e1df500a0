// `wedgewatch replay --format cri` on a captured pod log: the kubelet's wrapper is removed before the rules
// run, a split line is joined, and the runtime's time stamps each event.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';
import { runCli } from '../helpers/cli.js';
import { criBytes, criTime } from './wrapped-lines.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ww-replay-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 1, 27, 15, 1, 50);

/** A prefill pod's log: batch lines on stdout, a 40 KiB line split by the runtime, the thread death on stderr. */
function podLog(): { bytes: Buffer; deathLine: number } {
  const parts: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    parts.push(
      criBytes(
        `[2026-02-27 15:01:${String(i).padStart(2, '0')} TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0, `,
        T0 + i,
      ),
    );
  }
  parts.push(criBytes(`[2026-02-27 15:01:50 TP0] server_args=${'x'.repeat(40_000)}`, T0 + 30));
  // The file's line number: the 40 KiB line took three lines of the file (P, P, F).
  const deathLine = parts.reduce((n, b) => n + b.toString('latin1').split('\n').length - 1, 0) + 1;
  const death = RULE_FIXTURES.nixl_bootstrap_thread_dead![0]!.split('\n');
  death.forEach((l, i) => parts.push(criBytes(l, T0 + 40 + i, 'stderr')));
  return { bytes: Buffer.concat(parts), deathLine };
}

describe('replay --format', () => {
  it('cri: reads a captured pod log as the engine wrote it', async () => {
    const { bytes, deathLine } = podLog();
    expect(deathLine).toBe(24);
    const f = join(dir, '0.log');
    writeFileSync(f, bytes);
    const r = await runCli(['replay', '--format', 'cri', '--service', 'prefill', f]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${criTime(T0 + 40)}  critical nixl_bootstrap_thread_dead  ${f}:${deathLine}`);
    // Lines are the engine's: 20 batch lines, one joined long line, the 9 traceback lines.
    expect(r.stdout).toMatch(/^wedgewatch_log_lines_total\{target="replay",service="prefill"\} 30$/m);
    expect(r.stderr).toMatch(/replay: 30 lines/);

    // Read as plain text, every part is a line of its own and the split line is never whole.
    const plain = await runCli(['replay', '--format', 'plain', '--service', 'prefill', f]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(/replay: 32 lines/);
  });

  it('auto decides per file; an unknown format is a usage error', async () => {
    const { bytes } = podLog();
    const f = join(dir, '0.log');
    writeFileSync(f, bytes);
    const r = await runCli(['replay', '--format', 'auto', f]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('nixl_bootstrap_thread_dead');
    const bad = await runCli(['replay', '--format', 'xml', f]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are plain, cri, docker, json, logfmt, auto/);
  });
});
