// The two test lanes (test/lanes.ts): every test file is in exactly one, the vitest projects are the rule's lanes,
// the real-engine lane stays out of both, and the rule sees a process however deep the helper that starts it.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';
import { e2eReason, laneOf, lanes, mocksModules, OWN_LANES, ROOT, testFiles } from '../lanes.js';

/** Every *.test.ts under test/, by walking the tree here rather than trusting the rule's own walk. */
function everyTestFile(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? everyTestFile(join(dir, e.name))
      : e.name.endsWith('.test.ts')
        ? [relative(ROOT, join(dir, e.name))]
        : [],
  );
}

describe('test lanes (issue 39 item 2)', () => {
  it('every test file outside test/real is in exactly one lane, and test/real in none', () => {
    const { fast, e2e } = lanes();
    const own = (f: string) => OWN_LANES.some((d) => f.startsWith(`test/${d}/`));
    const all = everyTestFile().filter((f) => !own(f));
    expect([...fast, ...e2e].sort()).toEqual(all.sort());
    expect(fast.filter((f) => e2e.includes(f))).toEqual([]);
    expect([...fast, ...e2e].filter(own)).toEqual([]);
    expect(fast.length).toBeGreaterThan(50);
    expect(e2e.length).toBeGreaterThan(30);
  });

  it('the vitest projects are the rule’s lanes: `fast` (shared modules) and `fast-mocks` together, and `e2e`', () => {
    type Project = { test: { name: string; include: string[]; isolate?: boolean } };
    const projects = (config.test?.projects ?? []) as Project[];
    const byName = Object.fromEntries(projects.map((p) => [p.test.name, p.test]));
    const { fast, e2e } = lanes();
    expect(Object.keys(byName).sort()).toEqual(['e2e', 'fast', 'fast-mocks']);
    expect([...byName.fast!.include, ...byName['fast-mocks']!.include].sort()).toEqual([...fast].sort());
    expect([...byName.e2e!.include].sort()).toEqual([...e2e].sort());
    // The shared-module project holds no file that mocks a module (a mock there would not take), and it does share.
    expect(byName.fast!.include.filter(mocksModules)).toEqual([]);
    expect(byName['fast-mocks']!.include).toContain('test/logs/state-store.test.ts');
    expect(byName.fast!.isolate).toBe(false);
  });

  it('a process started through a helper, a simulator, the bundle: each puts a file in e2e, with the chain', () => {
    // Through two test-local modules: help.test.ts → helpers/cli.ts (which runs dist/cli.js in a child).
    expect(e2eReason(resolve(ROOT, 'test/cli/help.test.ts'))).toMatch(/→ test\/helpers\/cli\.ts/);
    // The simulators' servers, through the detector's harness.
    expect(e2eReason(resolve(ROOT, 'test/detect/sim-faults.test.ts'))).toMatch(/src\/sim\/index\.js/);
    // A forked child from dist/ named in a string, not an import.
    expect(e2eReason(resolve(ROOT, 'test/config/load-in-child.test.ts'))).toMatch(/dist\//);
    // Real Prometheus and Alertmanager; Chromium.
    expect(laneOf('test/ops/e2e.test.ts')).toBe('e2e');
    expect(laneOf('test/web/status-strip-browser.test.ts')).toBe('e2e');
  });

  it('the pure core, the detector on the virtual clock and a quick helper (openssl for a certificate) stay fast', () => {
    expect(laneOf('test/detect/inflight.test.ts')).toBe('fast');
    expect(laneOf('test/core/verdict-ranking.test.ts')).toBe('fast');
    // web/security.test.ts imports test/web/helpers.ts → test/helpers/tls.ts, which says `// lane: fast`.
    expect(laneOf('test/web/security.test.ts')).toBe('fast');
    expect(testFiles()).toContain('test/ops/lanes.test.ts');
  });
});
