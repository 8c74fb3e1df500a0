// `run`, `check` and `replay` load only what they run: the simulator, verify and replay code stay out of the daemon's
// memory. Checked on the static import graph of the sources (dynamic import() is what keeps them out).
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FORMAT_NAMES } from '../../src/commands/replay.js';
import { LOG_FORMATS, LOG_PACKS } from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Files reached from `entry` through static value imports (`import type` and `import()` do not load code). */
function staticGraph(entry: string): Map<string, string> {
  const via = new Map<string, string>([[entry, '']]);
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /^(?:import|export)\s+(?!type\b)([^'";]*?)\s*from\s+'(\.[^']+)'|^import\s+'(\.[^']+)'/gm,
    )) {
      const spec = m[2] ?? m[3]!;
      // Only type names in braces (`import { type A, type B }`) load nothing either.
      const names = m[1]?.match(/^\{([^}]*)\}$/s)?.[1];
      if (names && names.split(',').every((n) => n.trim() === '' || /^type\s/.test(n.trim()))) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (!via.has(target)) {
        via.set(target, file);
        todo.push(target);
      }
    }
  }
  return via;
}

function chain(via: Map<string, string>, file: string): string {
  const out = [relative(SRC, file)];
  for (let f = via.get(file); f; f = via.get(f)) out.unshift(relative(SRC, f));
  return out.join(' → ');
}

const HEAVY = [
  /^sim\//,
  /^verify\//,
  /^commands\/(sim|demo|verify|replay|replay-files|replay-timeline)\.ts$/,
];

describe('lazy command loading', () => {
  it('cli.ts imports no command statically', () => {
    const reached = [...staticGraph(join(SRC, 'cli.ts')).keys()].map((f) => relative(SRC, f));
    expect(reached.filter((f) => f.startsWith('commands/'))).toEqual([]);
  });

  it.each(['run', 'check'])('%s reaches no simulator, verify or replay code', (name) => {
    const via = staticGraph(join(SRC, 'commands', `${name}.ts`));
    const heavy = [...via.keys()].filter((f) => HEAVY.some((re) => re.test(relative(SRC, f))));
    expect(heavy.map((f) => chain(via, f))).toEqual([]);
    // The walk itself works: the daemon is reached from run.
    if (name === 'run') expect(via.has(join(SRC, 'daemon.ts'))).toBe(true);
  });

  it('replay loads neither the config loader (yaml) nor the logger unless --rules is given', () => {
    const via = staticGraph(join(SRC, 'commands', 'replay.ts'));
    const heavy = [...via.keys()].filter((f) => /^(config\/load|lib\/logger)\.ts$/.test(relative(SRC, f)));
    expect(heavy.map((f) => chain(via, f))).toEqual([]);
    expect(via.has(join(SRC, 'sources', 'logs', 'rules', 'matcher.ts'))).toBe(true);
  });

  it('replay loads no config schema (zod) at all: its timeline takes the detect defaults from a plain module', () => {
    const via = staticGraph(join(SRC, 'commands', 'replay.ts'));
    const heavy = [...via.keys()].filter((f) => /^config\/schema\.ts$/.test(relative(SRC, f)));
    expect(heavy.map((f) => chain(via, f))).toEqual([]);
    expect(via.has(join(SRC, 'commands', 'replay-timeline.ts'))).toBe(true);
  });

  it('the pack registry lists the packs in LOG_PACKS order (rule order is taken from it); replay knows every log format', () => {
    expect(Object.keys(PACKS)).toEqual([...LOG_PACKS]);
    expect([...FORMAT_NAMES]).toEqual([...LOG_FORMATS]);
  });
});
