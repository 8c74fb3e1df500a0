// Every relative link in README.md and docs/*.md resolves: the file exists, and a `#fragment` names a heading of
// it (GitHub's anchor for the heading, or an explicit <a id/name>). The README is a front page that sends readers
// into docs/; a link that rots sends them nowhere.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Anchors a markdown file offers: its headings (numbered -1, -2 when repeated) and explicit ids. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!.replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

/** Relative links of a markdown file, outside code blocks and code spans: [text](target). */
export function links(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const plain = line.replace(/`[^`]*`/g, '');
    for (const m of plain.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      out.push(target);
    }
  }
  return out;
}

function problems(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const bad: string[] = [];
  for (const link of links(text)) {
    const [path, fragment] = link.split('#') as [string, string | undefined];
    const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
    if (!existsSync(target)) {
      bad.push(`${file}: ${link}: no such file`);
      continue;
    }
    if (fragment === undefined || fragment === '') continue;
    if (statSync(target).isDirectory() || !target.endsWith('.md')) {
      bad.push(`${file}: ${link}: a fragment on a file that is not markdown`);
      continue;
    }
    if (!anchors(readFileSync(target, 'utf8')).has(fragment))
      bad.push(`${file}: ${link}: no heading #${fragment} in ${relative(ROOT, target)}`);
  }
  return bad;
}

describe('docs links', () => {
  it('every relative link in README.md and docs/ resolves to a file and, with a fragment, to its heading', () => {
    expect(DOCS.flatMap(problems)).toEqual([]);
  });

  it('finds a broken file link and a broken anchor (the check itself can fail)', () => {
    expect(links('see [a](docs/nope.md) and `[b](docs/x.md)` and [c](https://x.org/y)')).toEqual([
      'docs/nope.md',
    ]);
    expect(anchors('# Where logs come from\n## `verify`: the gate\n## A\n## A\n```\n# not\n```')).toEqual(
      new Set(['where-logs-come-from', 'verify-the-gate', 'a', 'a-1']),
    );
  });

  it('the README is a front page: under 300 lines, every docs page reachable from it', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(300);
    const linked = new Set(links(readme).map((l) => l.split('#')[0]));
    const unlinked = DOCS.filter((d) => d !== 'README.md' && !linked.has(d));
    expect(unlinked).toEqual([]);
  });
});
