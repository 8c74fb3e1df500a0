// The layout is the data flow (docs/decisions.md, "Issue 25 (layout)"): sources → core → outputs, wired by the
// composition root, driven by commands. Checked on every import of every file under src/, read with the TypeScript
// parser: `import type`, `export type` and imports whose every name is `type` load nothing and are type-level;
// everything else (static or dynamic import(), re-exports, side-effect imports) loads code and is value-level.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

interface Edge {
  from: string;
  /** src-relative path of a .ts file, or the specifier of a package or node built-in (external). */
  to: string;
  value: boolean;
  external?: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every relative import of `file`, as src-relative paths of .ts files. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const out: Edge[] = [];
  const add = (spec: string, value: boolean) => {
    if (!spec.startsWith('.')) {
      out.push({ from: relative(SRC, file), to: spec, value, external: true });
      return;
    }
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    out.push({ from: relative(SRC, file), to: relative(SRC, target), value });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (c.name === undefined &&
            c.namedBindings !== undefined &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.length > 0 &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, !typeOnly);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier.text, !typeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      add(node.arguments[0].text, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const lit = node.argument.literal;
      if (ts.isStringLiteral(lit)) add(lit.text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const FILES = sourceFiles(SRC).map((f) => relative(SRC, f));
const ALL = sourceFiles(SRC).flatMap(importsOf);
const EDGES = ALL.filter((e) => !e.external);

/** A top-level unit: a directory under src/ or a file at its root. */
const unit = (f: string) => f.split('/')[0]!;
/** sources/ and outputs/ hold one unit per subdirectory (sources/logs, outputs/server, …). */
const subunit = (f: string) => {
  const [top, sub] = f.split('/');
  return (top === 'sources' || top === 'outputs') && f.split('/').length > 2 ? `${top}/${sub}` : unit(f);
};
/**
 * A folder as the layout names it (docs/design.md "Layout"): sources/, outputs/ and core/ hold one unit per
 * subfolder (core's root files are one unit); the composition root (daemon, runtime, watchdog) is one unit; every
 * other root file (the cli entry, the metrics contract, version, node flags) is its own leaf.
 */
const folder = (f: string) => {
  const parts = f.split('/');
  if (parts.length === 1) return ['daemon.ts', 'runtime.ts', 'watchdog.ts'].includes(f) ? 'root' : f;
  if (['sources', 'outputs', 'core'].includes(parts[0]!) && parts.length > 2)
    return `${parts[0]}/${parts[1]}`;
  return parts[0]!;
};
const inside = (f: string, dir: string) => f.startsWith(`${dir}/`);
const show = (e: Edge) => `${e.from} → ${e.to}${e.value ? '' : ' (type)'}`;

/**
 * Strongly connected components of more than one unit in the graph `unitOf` induces: value edges only, or with
 * `types` every edge (a type import is still a dependency a reader must follow).
 */
function cycles(unitOf: (f: string) => string, edges: Edge[] = EDGES, types = false): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if ((!e.value && !types) || unitOf(e.from) === unitOf(e.to)) continue;
    const s = next.get(unitOf(e.from)) ?? new Set<string>();
    s.add(unitOf(e.to));
    next.set(unitOf(e.from), s);
  }
  // Tarjan's algorithm, iteration over a bounded node set (each node is visited once).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let i = 0;
  const strong = (v: string) => {
    index.set(v, i);
    low.set(v, i);
    i++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of new Set([...FILES, ...edges.flatMap((e) => [e.from, e.to])].map(unitOf)))
    if (!index.has(v)) strong(v);
  return out;
}

describe('layout: imports go one way (commands → root → outputs/sources → core)', () => {
  it('reads the imports it checks (the parser sees value and type imports, static and dynamic)', () => {
    expect(FILES.length).toBeGreaterThan(150);
    const has = (from: string, to: string, value: boolean) =>
      EDGES.some((e) => e.from === from && e.to === to && e.value === value);
    // A dynamic import (cli.ts loads each command lazily), a value import and a type-only one.
    expect(has('cli.ts', 'commands/run.ts', true)).toBe(true);
    expect(has('runtime.ts', 'watchdog.ts', true)).toBe(true);
    expect(has('sources/probes/runner.ts', 'metrics.ts', false)).toBe(true);
  });

  it('the pure core value-imports nothing outside core/ (types from anywhere are erased)', () => {
    const bad = EDGES.filter((e) => inside(e.from, 'core') && e.value && !inside(e.to, 'core'));
    expect(bad.map(show)).toEqual([]);
  });

  it('the pure core loads no package and no node built-in (no I/O, no clock of its own)', () => {
    const bad = ALL.filter((e) => inside(e.from, 'core') && e.value && e.external);
    expect(bad.map(show)).toEqual([]);
    // The check sees packages: the root does load them.
    expect(ALL.some((e) => e.from === 'metrics.ts' && e.to === 'prom-client' && e.value)).toBe(true);
  });

  it('lib/ is leaf utilities: it value-imports only lib/', () => {
    const bad = EDGES.filter((e) => inside(e.from, 'lib') && e.value && !inside(e.to, 'lib'));
    expect(bad.map(show)).toEqual([]);
  });

  it('sources never import outputs, the composition root or commands; outputs never import commands', () => {
    const ROOT_SHELL = ['cli.ts', 'daemon.ts', 'runtime.ts', 'watchdog.ts'];
    const bad = EDGES.filter(
      (e) =>
        (inside(e.from, 'sources') &&
          (inside(e.to, 'outputs') || inside(e.to, 'commands') || ROOT_SHELL.includes(e.to))) ||
        (inside(e.from, 'outputs') && inside(e.to, 'commands')),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('nothing imports a command but cli.ts (and other commands)', () => {
    const bad = EDGES.filter(
      (e) => inside(e.to, 'commands') && !inside(e.from, 'commands') && e.from !== 'cli.ts',
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('no value-level cycle between top-level units (src/* directories and root files)', () => {
    expect(cycles(unit)).toEqual([]);
  });

  it('no value-level cycle between the units of sources/ and outputs/ either', () => {
    expect(cycles(subunit)).toEqual([]);
  });

  it('no folder cycle even counting type imports (config → core, outputs → sources → config, never back)', () => {
    expect(cycles(folder, EDGES, true)).toEqual([]);
  });

  it('the folder check sees a cycle made of type imports alone', () => {
    const typeOnly: Edge[] = [
      { from: 'config/a.ts', to: 'sources/probes/b.ts', value: false },
      { from: 'sources/probes/b.ts', to: 'config/a.ts', value: false },
    ];
    expect(cycles(folder, typeOnly, true)).toEqual([['config', 'sources/probes']]);
    expect(cycles(folder, typeOnly, false)).toEqual([]);
  });
});
