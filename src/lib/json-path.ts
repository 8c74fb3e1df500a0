// The JSON-path subset of the serverinfo probe's expectations: enough to name a field of llama.cpp's /slots
// (an array), vLLM's /load or SGLang's /get_server_info, and nothing that needs a query language.
//   $                 the whole document
//   .name  ['name']   an object's member (a name with other characters is written in brackets)
//   [2]               an array's element, counted from 0
//   [*]  .*           every element of an array, every member value of an object
// Filters, slices, recursive descent (`..`) and negative indexes are not supported: a path that uses them is a
// config error, not a silent mismatch.

export type PathSegment =
  { kind: 'member'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

export class JsonPathError extends Error {
  constructor(path: string, why: string) {
    super(`invalid JSON path ${JSON.stringify(path)}: ${why}`);
    this.name = 'JsonPathError';
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*/;
const MAX_PATH_LENGTH = 256;

/** Parses a path such as `$.slots[*].state` or `$[0].id`; throws JsonPathError naming what is wrong. */
export function parseJsonPath(path: string): PathSegment[] {
  if (path.length > MAX_PATH_LENGTH)
    throw new JsonPathError(path, `longer than ${MAX_PATH_LENGTH} characters`);
  if (!path.startsWith('$')) throw new JsonPathError(path, 'must start with $');
  const out: PathSegment[] = [];
  let i = 1;
  const fail = (why: string): never => {
    throw new JsonPathError(path, `${why} at character ${i + 1}`);
  };
  while (i < path.length) {
    const c = path[i]!;
    if (c === '.') {
      if (path[i + 1] === '.') fail('recursive descent (..) is not supported');
      if (path[i + 1] === '*') {
        out.push({ kind: 'wildcard' });
        i += 2;
        continue;
      }
      const m = NAME.exec(path.slice(i + 1));
      if (!m) fail('expected a member name after "."');
      out.push({ kind: 'member', name: m![0] });
      i += 1 + m![0].length;
    } else if (c === '[') {
      const close = path.indexOf(']', i);
      if (close === -1) fail('"[" without "]"');
      const inner = path.slice(i + 1, close).trim();
      if (inner === '*') out.push({ kind: 'wildcard' });
      else if (/^\d{1,9}$/.test(inner)) out.push({ kind: 'index', index: Number(inner) });
      else if (/^'[^'\\]*'$/.test(inner) || /^"[^"\\]*"$/.test(inner))
        out.push({ kind: 'member', name: inner.slice(1, -1) });
      else
        fail(
          `unsupported selector [${inner}] (use [N], [*] or ['name']; filters, slices and negative indexes are not supported)`,
        );
      i = close + 1;
    } else {
      fail(`unexpected ${JSON.stringify(c)}`);
    }
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every value the path selects in `doc` (none when a member or index is missing). */
export function selectJsonPath(doc: unknown, segments: readonly PathSegment[]): unknown[] {
  let current: unknown[] = [doc];
  for (const seg of segments) {
    const next: unknown[] = [];
    for (const v of current) {
      if (seg.kind === 'member') {
        if (isObject(v) && Object.hasOwn(v, seg.name)) next.push(v[seg.name]);
      } else if (seg.kind === 'index') {
        if (Array.isArray(v) && seg.index < v.length) next.push(v[seg.index]);
      } else if (Array.isArray(v)) {
        next.push(...(v as unknown[]));
      } else if (isObject(v)) {
        next.push(...Object.values(v));
      }
    }
    current = next;
  }
  return current;
}
