// Issue 15 item 5: `--version` in the Prometheus layout, and build_info with revision and branch.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

it('prints --version as Prometheus does, with the Node.js version in place of Go’s', async () => {
  const res = await runCli(['--version']);
  expect(res.code).toBe(0);
  const info = JSON.parse(readFileSync(new URL('../../dist/build-info.json', import.meta.url), 'utf8')) as {
    branch: string;
    revision: string;
  };
  const lines = res.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe(
    `wedgewatch, version ${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version} (branch: ${info.branch}, revision: ${info.revision})`,
  );
  expect(info.revision).toMatch(/^[0-9a-f]{40}$/);
  expect(lines[1]).toMatch(/^ {2}build user: {7}\S+@\S+$/);
  expect(lines[2]).toMatch(/^ {2}build date: {7}\d{8}-\d\d:\d\d:\d\d$/);
  expect(lines[3]).toBe(`  node version:     ${process.version}`);
  expect(lines[4]).toBe(`  platform:         ${process.platform}/${process.arch}`);
});
