// The real-engine lane's plumbing (issue 38), checked without the engine: a cold cache fails loudly with the command
// that warms it, and the config the lane and the bench give the daemon (examples/llamacpp.yaml pointed at a local
// server) is one the daemon accepts. The lane itself is `npm run test:real` (test/real).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  exampleConfig,
  RANDOM_MODEL_ANSWER_KINDS,
  RANDOM_MODEL_TOOL_CELLS,
} from '../../scripts/real-llama/harness.mjs';
import { CLI } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ww-real-fixture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the real llama-server fixture', () => {
  it('a cold cache: --check fails and names the command that warms it', () => {
    const r = spawnSync(process.execPath, ['scripts/real-llama/fixture.mjs', '--check'], {
      cwd: ROOT,
      env: { ...process.env, WEDGEWATCH_CACHE: join(dir, 'empty-cache') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('node scripts/real-llama/fixture.mjs');
    expect(r.stderr).toContain(join(dir, 'empty-cache', 'llama-server-'));
  });

  it("the lane's config is the example's probes pointed at the server, and the daemon accepts it", () => {
    const text = exampleConfig({
      url: 'http://127.0.0.1:18999',
      logFile: join(dir, 'llama-server.log'),
      stateDir: join(dir, 'state'),
    });
    const t = parse(text).targets[0];
    expect(t.endpoints.map((e: { url: string }) => e.url)).toEqual(['http://127.0.0.1:18999']);
    expect(t.probes.map((p: { kind: string }) => p.kind)).toEqual(
      expect.arrayContaining(['chat', 'toolcall', 'health', 'serverinfo']),
    );
    // A random model cannot pass the canary or the answer-checking kinds: they are left out (harness.mjs).
    for (const kind of ['canary', ...RANDOM_MODEL_ANSWER_KINDS]) {
      expect(t.probes.some((p: { kind: string }) => p.kind === kind)).toBe(false);
    }
    expect(t.probes.find((p: { kind: string }) => p.kind === 'toolcall').cells).toEqual([
      ...RANDOM_MODEL_TOOL_CELLS,
    ]);
    expect(t.logs[0].path).toBe(join(dir, 'llama-server.log'));
    expect(t.remediate.dryRun).toBe(true);
    const file = join(dir, 'c.yaml');
    writeFileSync(file, text);
    const r = spawnSync(process.execPath, [CLI, 'check', '--config', file], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.stdout + r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
  });
});
