// A clean first install: `npm ci` on the Node we support prints no EBADENGINE warning. Resolved from the
// lockfile alone (--dry-run in a scratch copy), so it costs seconds and leaves node_modules alone.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-npm-ci-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm ci', () => {
  it('installs the locked tree with no EBADENGINE warning', async () => {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(dir, f));
    const out = await new Promise<{ code: number; text: string }>((resolve) => {
      execFile(
        'npm',
        ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel', 'warn'],
        {
          cwd: dir,
          timeout: 120_000,
          maxBuffer: 16 << 20,
          env: { ...process.env, npm_config_engine_strict: 'false' },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, text: stdout + stderr }),
      );
    });
    expect(out.code, out.text).toBe(0);
    // It did resolve the tree, fastify's test-injection dependency (which pulls cookie) included.
    expect(out.text).toMatch(/^add light-my-request /m);
    expect(out.text).toMatch(/^add cookie /m);
    expect(out.text).not.toContain('EBADENGINE');
  }, 150_000);
});
