// docs/design.md is a checked map: every repository path it writes in backticks exists (a placeholder such as
// `src/sim/faults/<fault>.ts` needs its folder), every "`NAME` in `file`" names something that file declares,
// every `docs/design.md#anchor` the code cites is a heading of it, and no comment cites a document outside the
// repository (the draft design and the reference notes the code once pointed at are not shipped with it).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DESIGN = readFileSync(join(ROOT, 'docs/design.md'), 'utf8');

const exists = (p: string) => existsSync(join(ROOT, p));

/** A path written in the design document, if it exists in this checkout. */
function resolve(path: string): string[] {
  return exists(path) ? [path] : [];
}

/** Backticked repository paths in the document, with a placeholder (`<kind>.ts`) cut back to its folder. */
function documentedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(
    /`((?:src|test|docs|alerts|dashboards|examples|bench|scripts|deploy)\/[^`\s]*)`/g,
  )) {
    let p = m[1]!.replace(/#.*$/, '');
    if (p.includes('<')) p = p.slice(0, p.indexOf('<'));
    out.add(p);
  }
  return [...out];
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return out;
}

function filesUnder(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .map((f) => join(abs, f))
    .filter((f) => statSync(f).isFile() && /\.(ts|mts|mjs|js|json|ya?ml|sh)$/.test(f));
}

const CODE = ['src', 'test', 'bench', 'scripts', 'alerts', 'deploy', 'systemd', 'examples'].flatMap(
  filesUnder,
);
const SELF = fileURLToPath(import.meta.url);

describe('docs/design.md', () => {
  it('finds paths and anchors the way GitHub renders them', () => {
    expect(documentedPaths('`src/a.ts`, `src/sim/faults/<f>.ts`, `docs/design.md#x`, `watchdog.ts`')).toEqual(
      ['src/a.ts', 'src/sim/faults/', 'docs/design.md'],
    );
    expect([...anchors('## A probe kind\n### `wedges_total` and 2. Evidence\n')]).toEqual([
      'a-probe-kind',
      'wedges_total-and-2-evidence',
    ]);
  });

  it('names only paths that exist', () => {
    const paths = documentedPaths(DESIGN);
    expect(paths.length).toBeGreaterThan(30);
    expect(paths.filter((p) => resolve(p).length === 0)).toEqual([]);
  });

  it('names registries and types that the named file declares', () => {
    const claims = [...DESIGN.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)` in `(src\/[^`]+)`/g)];
    expect(claims.length).toBeGreaterThanOrEqual(8);
    const wrong = claims.filter(([, name, path]) => {
      const files = resolve(path!).filter((f) => statSync(join(ROOT, f)).isFile());
      const declares = new RegExp(`\\b(?:const|type|interface|class|function)\\s+${name}\\b`);
      return !files.some((f) => declares.test(readFileSync(join(ROOT, f), 'utf8')));
    });
    expect(wrong.map(([claim]) => claim)).toEqual([]);
  });

  it('has every anchor the code cites', () => {
    const have = anchors(DESIGN);
    const cited: string[] = [];
    for (const f of CODE.filter((c) => c !== SELF)) {
      for (const m of readFileSync(f, 'utf8').matchAll(/docs\/design\.md#([\w-]+)/g)) {
        if (!have.has(m[1]!)) cited.push(`${relative(ROOT, f)}: #${m[1]}`);
      }
    }
    expect(cited).toEqual([]);
  });
});

describe('citations', () => {
  it('no code, test or bench file cites a document outside the repository', () => {
    // Built from parts so that this file does not match itself.
    const outside = new RegExp(
      [
        'DESIGN' + '\\.md',
        '\\.\\./' + 'shared',
        'shared/' + 'reference',
        'engine-' + 'signals\\.md',
        'tool' + 'chain\\.md',
      ].join('|'),
    );
    const hits = CODE.filter((f) => f !== SELF).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (outside.test(line) ? [`${relative(ROOT, f)}:${i + 1}`] : [])),
    );
    expect(hits).toEqual([]);
  });

  it('README links the design document in the repository', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('(docs/design.md)');
    expect(readme).not.toMatch(/\.\.\/shared\//);
  });
});
