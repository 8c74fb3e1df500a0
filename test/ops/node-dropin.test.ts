// The opt-in drop-in for node evidence (issue 42, systemd/wedgewatch.service.d/node-evidence.conf): systemd reads it
// beside the unit and finds nothing wrong, it adds CAP_SYS_PTRACE and what seeing other users' processes needs, and
// nothing else — every other line of the unit's hardening stays.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireBinary, ROOT, run, UNIT } from './tools.js';

const DROPIN = `${ROOT}systemd/wedgewatch.service.d/node-evidence.conf`;
const settings = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => l.trim());

describe('node evidence drop-in', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-dropin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function install(dropin: string): string {
    const node = requireBinary('node');
    const unit = join(dir, 'wedgewatch.service');
    const text = readFileSync(UNIT, 'utf8');
    writeFileSync(
      unit,
      node === '/usr/bin/node' ? text : text.replace('ExecStart=/usr/bin/node ', `ExecStart=${node} `),
    );
    mkdirSync(join(dir, 'wedgewatch.service.d'), { recursive: true });
    writeFileSync(join(dir, 'wedgewatch.service.d', 'node-evidence.conf'), dropin);
    return unit;
  }

  it('systemd-analyze verify reads the unit with it and prints nothing; a bad key in it would be reported', async () => {
    const ok = await run('systemd-analyze', ['verify', install(readFileSync(DROPIN, 'utf8'))]);
    expect(ok.stdout + ok.stderr).toBe('');
    const bad = await run('systemd-analyze', [
      'verify',
      install(readFileSync(DROPIN, 'utf8') + 'AmbientCapability=CAP_SYS_ADMIN\n'),
    ]);
    expect(bad.stdout + bad.stderr).toContain("Unknown key 'AmbientCapability'");
  });

  it('adds CAP_SYS_PTRACE, /proc visibility and the two syscalls py-spy needs, and loosens nothing else', () => {
    expect(settings(readFileSync(DROPIN, 'utf8')).sort()).toEqual(
      [
        'AmbientCapabilities=CAP_SYS_PTRACE',
        'CapabilityBoundingSet=CAP_SYS_PTRACE',
        'ProcSubset=all',
        'ProtectProc=default',
        'SystemCallFilter=ptrace process_vm_readv',
      ].sort(),
    );
    // The unit itself keeps its hardening: the drop-in is the only place these are relaxed.
    const unit = settings(readFileSync(UNIT, 'utf8'));
    for (const line of [
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'CapabilityBoundingSet=',
      'ProtectProc=invisible',
    ])
      expect(unit).toContain(line);
  });

  it('systemd-analyze security rates the unit with the drop-in at most 2.5 (1.6 without it)', async () => {
    const res = await run('systemd-analyze', [
      'security',
      '--offline=true',
      install(readFileSync(DROPIN, 'utf8')),
    ]);
    const level = Number(/Overall exposure level for wedgewatch\.service: ([\d.]+)/.exec(res.stdout)?.[1]);
    // 1.6 without it (test/ops/checks.test.ts); the capability and /proc visibility cost under one point.
    expect(level).toBeLessThanOrEqual(2.5);
  });
});
