// Issue 24 finding 3: a stop drains in-flight probes, so the supervisors must wait longer than the daemon's own
// shutdown deadline, or their SIGKILL is the very cut the drain avoids (an engine abort per completion in flight).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { SHUTDOWN_GRACE_MS } from '../../src/outputs/remediate/remediator.js';
import {
  SHUTDOWN_AFTER_DRAIN_MS,
  SHUTDOWN_DRAIN_MAX_MS,
  shutdownDeadlineMs,
  shutdownDrainMs,
} from '../../src/shutdown-budget.js';

/** Past the daemon's deadline: its exit and the supervisor's noticing it. */
const MARGIN_MS = 5_000;
const LONGEST_STOP_MS = SHUTDOWN_DRAIN_MAX_MS + SHUTDOWN_AFTER_DRAIN_MS;

function seconds(text: string): number {
  const m = /^(\d+)(s|min)?$/.exec(text.trim());
  if (!m) throw new Error(`not a duration in seconds: ${text}`);
  return Number(m[1]) * (m[2] === 'min' ? 60 : 1);
}

describe('stop budget', () => {
  it("the systemd unit's TimeoutStopSec covers the longest drain plus the rest of the stop", () => {
    const unit = readFileSync('systemd/wedgewatch.service', 'utf8');
    const values = [...unit.matchAll(/^TimeoutStopSec=(.+)$/gm)].map((m) => m[1]!);
    expect(values).toHaveLength(1);
    expect(seconds(values[0]!) * 1000).toBeGreaterThanOrEqual(LONGEST_STOP_MS + MARGIN_MS);
    expect(unit).not.toMatch(/^TimeoutSec=/m);
  });

  it("the DaemonSet's terminationGracePeriodSeconds covers it too", () => {
    const ds = parse(readFileSync('deploy/kubernetes/daemonset.yaml', 'utf8')) as {
      spec: { template: { spec: { terminationGracePeriodSeconds?: number } } };
    };
    const grace = ds.spec.template.spec.terminationGracePeriodSeconds;
    expect(grace).toBeTypeOf('number');
    expect(grace! * 1000).toBeGreaterThanOrEqual(LONGEST_STOP_MS + MARGIN_MS);
  });

  it('the part after the drain covers the remediation grace', () => {
    expect(SHUTDOWN_AFTER_DRAIN_MS).toBeGreaterThan(SHUTDOWN_GRACE_MS);
  });

  it('a config drains for its longest probe timeout, capped', () => {
    const cfg = (timeouts: string[]) =>
      parseConfigText(
        `targets:
  - name: t
    endpoints: [{ name: e, url: "http://127.0.0.1:1" }]
    probes:
${timeouts.map((t, i) => `      - { name: p${i}, kind: chat, every: 10s, timeout: ${t} }`).join('\n')}
`,
        'x.yaml',
        {},
      ).config;
    expect(shutdownDrainMs(cfg(['3s', '45s']))).toBe(45_000);
    expect(shutdownDrainMs(cfg(['2m']))).toBe(120_000);
    expect(shutdownDrainMs(cfg(['10m']))).toBe(SHUTDOWN_DRAIN_MAX_MS);
    expect(shutdownDeadlineMs(cfg(['30s']))).toBe(30_000 + SHUTDOWN_AFTER_DRAIN_MS);
  });

  it.each(readdirSync('examples').filter((f) => f.endsWith('.yaml')))(
    'every probe of examples/%s finishes within the drain (none is cut at shutdown)',
    (file) => {
      const path = join('examples', file);
      const { config } = parseConfigText(readFileSync(path, 'utf8'), path, {});
      for (const t of config.targets)
        for (const p of t.probes)
          expect(p.timeout, `${t.name}/${p.name}`).toBeLessThanOrEqual(SHUTDOWN_DRAIN_MAX_MS);
    },
  );
});
