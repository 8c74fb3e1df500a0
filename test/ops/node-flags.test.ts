// The daemon's node flags: the systemd unit, the container image and bench:steady run it the same way, so the
// figures in README's performance table are those of what ships.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

/** The words between the node binary and dist/cli.js. */
function flagsBefore(argv: string[]): string[] {
  const node = argv.findIndex((a) => /(^|\/)node$/.test(a));
  const script = argv.findIndex((a) => /(^|\/)dist\/cli\.js$/.test(a));
  expect(node).toBeGreaterThanOrEqual(0);
  expect(script).toBeGreaterThan(node);
  return argv.slice(node + 1, script);
}

describe('node flags of the daemon', () => {
  const unit = /^ExecStart=(.*)$/m.exec(read('systemd/wedgewatch.service'))![1]!.split(/\s+/);
  const entry = JSON.parse(/^ENTRYPOINT\s+(\[.*\])$/m.exec(read('Dockerfile'))![1]!) as string[];
  const bench = /^const SHIPPED_NODE_ARGS =\s+'([^']*)';$/m.exec(read('bench/steady.mjs'))![1]!.split(' ');

  it('keep the heap close to what is live (1 MB semi-spaces, old space grown by 30%), wasm unoptimized and bytecode kept', () => {
    expect(flagsBefore(unit)).toEqual([
      '--max-semi-space-size=1',
      '--heap-growing-percent=30',
      '--liftoff-only',
      '--no-flush-bytecode',
    ]);
  });

  it('are flags this node accepts (an unknown V8 flag is a start-up error)', () => {
    const r = spawnSync(process.execPath, [...flagsBefore(unit), '-e', '0'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('are the same in the systemd unit, the container image and bench:steady', () => {
    expect(flagsBefore(entry)).toEqual(flagsBefore(unit));
    expect(bench).toEqual(flagsBefore(unit));
  });
});
