// dist/cli.js is the esbuild bundle (scripts/bundle.mjs), and it is what `run` executes: its chunks carry the
// dependencies, so loading the daemon resolves no file under node_modules and none of the chunks of the commands
// run does not need (sim, verify, replay, demo). Module resolution is watched with a module.register hook.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file: and node: URLs the ESM loader resolves while `wedgewatch ...args` runs. */
function resolved(args: string[]): string[] {
  const hook = join(dir, 'hook.mjs');
  const resolver = `export async function resolve(s, c, next) {
    const r = await next(s, c);
    console.log('RESOLVED ' + r.url);
    return r;
  }`;
  writeFileSync(
    hook,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)});\n`,
  );
  const r = spawnSync(process.execPath, ['--import', hook, CLI, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return [...r.stdout.matchAll(/^RESOLVED (\S+)$/gm)].map((m) => m[1]!);
}

describe('the shipped CLI bundle', () => {
  it('dist/cli.js is the bundle, not tsc output', () => {
    const text = readFileSync(CLI, 'utf8');
    expect(text).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(text).toContain('createRequire');
    expect(text).not.toMatch(/from ['"]commander['"]/);
  });

  it('`run` loads only dist chunks and node built-ins: no node_modules file, no other command', () => {
    const urls = resolved(['run', '--help']);
    const files = urls.filter((u) => u.startsWith('file:'));
    // The walk saw the run command's chunk, so the check below has something to check.
    expect(files.some((u) => /\/dist\/run-[A-Z0-9]{8}\.js$/.test(u))).toBe(true);
    expect(files.filter((u) => u.includes('/node_modules/'))).toEqual([]);
    expect(files.filter((u) => !/\/dist\/[\w-]+\.js$/.test(u))).toEqual([]);
    expect(
      files.filter((u) => /\/dist\/(sim|verify|replay|demo|incidents)-[A-Z0-9]{8}\.js$/.test(u)),
    ).toEqual([]);
    expect(urls.filter((u) => !u.startsWith('file:') && !u.startsWith('node:'))).toEqual([]);
  });
});
