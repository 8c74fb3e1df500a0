// Deterministic config mutations for the fuzz test: a seeded PRNG and a handful of structural and textual
// mutation operators. Nothing here produces a host other than 127.0.0.1 on purpose; the test still checks.

export { mulberry32 } from '../../src/sim/prng.js';

type Rng = () => number;
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/** Values that are wrong in interesting ways: types, units, ranges, regexes, env refs, names. */
const POOL: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1,
  0.5,
  Number.POSITIVE_INFINITY,
  65536,
  4097,
  '',
  ' ',
  'x',
  '0s',
  '-5s',
  '500ms',
  '1h30m',
  '15',
  '5 minutes',
  '1e3s',
  '999999999999h',
  '${WW_FUZZ_UNSET}',
  '${WW_FUZZ_SET}',
  '$$literal',
  '(',
  '[a-',
  '(?<x>a)\\d+',
  '*/5 * * * * *',
  'not a cron',
  'http://127.0.0.1:1',
  'ftp://127.0.0.1/',
  'http://',
  'not a url',
  'chat',
  'health',
  'fresh',
  'sideways',
  'a name with spaces',
  'dup',
  '/health',
  'health',
  'ünïcødé',
  'x'.repeat(300),
  [],
  [1, 2],
  ['fresh', 'fresh'],
  {},
  { name: 'dup' },
];

const URL_KEYS = new Set(['url', 'metrics']);

interface Slot {
  parent: Json[] | { [k: string]: Json };
  key: string | number;
}

function slots(node: Json, out: Slot[] = []): Slot[] {
  if (Array.isArray(node)) {
    node.forEach((v, i) => {
      out.push({ parent: node, key: i });
      slots(v, out);
    });
  } else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      out.push({ parent: node, key: k });
      slots(v, out);
    }
  }
  return out;
}

function get(s: Slot): Json {
  return (s.parent as Record<string | number, Json>)[s.key]!;
}

function set(s: Slot, v: Json): void {
  (s.parent as Record<string | number, Json>)[s.key] = v;
}

function mutateString(rng: Rng, s: string): string {
  const i = Math.floor(rng() * (s.length + 1));
  switch (Math.floor(rng() * 4)) {
    case 0:
      return s.slice(0, i) + s.slice(i + 1);
    case 1:
      return s.slice(0, i) + pick(rng, ['(', ')', '$', '{', '*', ' ', '0', 'm', 'é', '\\']) + s.slice(i);
    case 2:
      return s.slice(0, i);
    default:
      return s + s;
  }
}

/** One structural mutation, in place. */
export function mutateTree(rng: Rng, root: { [k: string]: Json }): string {
  const all = slots(root);
  if (all.length === 0) return 'nothing to mutate';
  const s = pick(rng, all);
  const cur = get(s);
  const op = Math.floor(rng() * 8);
  switch (op) {
    case 0:
      if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 1);
      else delete s.parent[s.key as string];
      return `delete ${String(s.key)}`;
    case 1:
    case 2:
      set(s, structuredClone(pick(rng, POOL)));
      return `replace ${String(s.key)}`;
    case 3:
      if (typeof cur === 'string' && !(typeof s.key === 'string' && URL_KEYS.has(s.key))) {
        set(s, mutateString(rng, cur));
        return `edit string ${String(s.key)}`;
      }
      set(s, typeof cur === 'number' ? String(cur) : typeof cur === 'string' ? 42 : 'str');
      return `retype ${String(s.key)}`;
    case 4:
      if (cur !== null && typeof cur === 'object' && !Array.isArray(cur)) {
        cur[pick(rng, ['extra', 'Name', 'timeOut', 'every'])] = structuredClone(pick(rng, POOL));
        return `add key under ${String(s.key)}`;
      }
      set(s, structuredClone(pick(rng, POOL)));
      return `replace ${String(s.key)}`;
    case 5:
      if (Array.isArray(cur) && cur.length > 0) {
        cur.push(structuredClone(cur[Math.floor(rng() * cur.length)]!));
        return `duplicate item in ${String(s.key)}`;
      }
      set(s, []);
      return `empty ${String(s.key)}`;
    case 6:
      if (typeof cur === 'number') {
        set(s, pick(rng, [0, -cur, cur * 1000, cur + 0.5, Number.MAX_SAFE_INTEGER]));
        return `number ${String(s.key)}`;
      }
      set(s, null);
      return `null ${String(s.key)}`;
    default:
      if (!Array.isArray(s.parent) && typeof s.key === 'string') {
        const v = s.parent[s.key]!;
        delete s.parent[s.key];
        s.parent[mutateString(rng, s.key)] = v;
        return `rename key ${s.key}`;
      }
      set(s, structuredClone(pick(rng, POOL)));
      return `replace ${String(s.key)}`;
  }
}

/** A textual mutation of the YAML (syntax errors, truncation), avoiding lines that hold URLs. */
export function mutateText(rng: Rng, text: string): string {
  const lines = text.split('\n');
  const candidates = lines.map((l, i) => i).filter((i) => !/https?:|ftp:/.test(lines[i]!));
  const i = pick(rng, candidates);
  switch (Math.floor(rng() * 5)) {
    case 0:
      return lines.slice(0, i).join('\n');
    case 1:
      lines[i] = `  ${lines[i]}`;
      return lines.join('\n');
    case 2:
      lines[i] = lines[i]! + pick(rng, [': x', ' {', ' [', ' "', '\t', ' &a', ' *nope', ' # c', ' !!binary']);
      return lines.join('\n');
    case 3:
      lines.splice(i, 0, lines[i]!);
      return lines.join('\n');
    default:
      lines[i] = mutateString(rng, lines[i]!);
      return lines.join('\n');
  }
}
