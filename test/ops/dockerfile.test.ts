// The container recipe: multi-stage, production dependencies only, non-root, the daemon's command, and a
// Node major that matches package.json `engines`. (No image is built here: the file's properties are read.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

interface Stage {
  image: string;
  name?: string;
  lines: string[];
}

/** Instructions by stage (comments dropped, continuation lines joined). */
export function stages(text: string): Stage[] {
  const out: Stage[] = [];
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const l of lines) {
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(l);
    if (from) out.push({ image: from[1]!, name: from[2], lines: [] });
    else out.at(-1)?.lines.push(l);
  }
  return out;
}

const json = (l: string, kw: string) => JSON.parse(l.slice(kw.length).trim()) as string[];

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const all = stages(text);
  const final = all.at(-1)!;

  it('is multi-stage on the Node major of package.json engines', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    const engines = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    const major = /(\d+)/.exec(engines)![1];
    for (const s of all) expect(s.image, `FROM ${s.image}`).toMatch(new RegExp(`^node:${major}(?:[.-]|$)`));
  });

  it('ships production dependencies only, from a stage that installed them with --omit=dev', () => {
    const copies = final.lines.filter((l) => /^COPY\s+--from=/.test(l));
    const modules = copies.find((l) => /node_modules/.test(l));
    expect(modules, 'node_modules comes from another stage').toBeDefined();
    const from = /--from=(\S+)/.exec(modules!)![1];
    const stage = all.find((s) => s.name === from)!;
    expect(stage.lines.some((l) => /^RUN .*npm ci\b.*--omit=dev/.test(l))).toBe(true);
    expect(stage.lines.some((l) => /^RUN .*npm (ci|install)\b(?!.*--omit=dev)/.test(l))).toBe(false);
    // Nothing in the final stage installs packages or copies the sources or tests.
    expect(final.lines.filter((l) => /^RUN\b/.test(l))).toEqual([]);
    expect(final.lines.some((l) => /^COPY\s+(?!--from).*\b(src|test|node_modules)\b/.test(l))).toBe(false);
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toEqual(expect.arrayContaining(['node_modules', 'dist', 'test']));
  });

  it('runs as a non-root user', () => {
    const users = final.lines.filter((l) => /^USER\s/.test(l));
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.split(/\s+/)[1]!;
    expect(user.split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it('runs `dist/cli.js run --config /etc/wedgewatch/wedgewatch.yaml`', () => {
    const entry = json(
      final.lines.find((l) => l.startsWith('ENTRYPOINT'))!,
      'ENTRYPOINT',
    );
    const cmd = json(
      final.lines.find((l) => l.startsWith('CMD'))!,
      'CMD',
    );
    const argv = [...entry, ...cmd];
    expect(argv[0]).toBe('node');
    // Node flags (test/ops/node-flags.test.ts) sit between node and the script.
    const script = argv.findIndex((a) => /(^|\/)dist\/cli\.js$/.test(a));
    expect(script).toBeGreaterThan(0);
    expect(argv.slice(1, script).every((a) => a.startsWith('--'))).toBe(true);
    expect(argv.slice(script + 1)).toEqual(['run', '--config', '/etc/wedgewatch/wedgewatch.yaml']);
    expect(final.lines).toContain('EXPOSE 9787');
  });

  it('the parser reads what it checks', () => {
    const s = stages('FROM node:20 AS a\nRUN x \\\n  y\n# c\nFROM node:20-slim\nUSER node\n');
    expect(s).toEqual([
      { image: 'node:20', name: 'a', lines: ['RUN x    y'] },
      { image: 'node:20-slim', name: undefined, lines: ['USER node'] },
    ]);
  });
});
