// Regex plumbing for log rules: turn on V8's linear-time fallback so a catastrophic user pattern cannot
// stall the event loop, validate user patterns against it, and pull out the literals the prefilter needs.
import v8 from 'node:v8';

// Why flags and not a regex library: V8 ships a linear-time (automaton) engine. With
// `--enable-experimental-regexp-engine-on-excessive-backtracks` a pattern runs on the fast backtracking
// engine until it has backtracked too much on one input, then V8 reruns it on the linear engine. That keeps
// the normal case fast and bounds the pathological one (`(a+)+$` on a 50 KB line: ~50 ms instead of
// forever). The fallback only exists for patterns the linear engine can express, so user patterns with
// lookaround or backreferences are rejected at load (see validateUserPattern). The second flag lets us
// ask V8 that question directly with the `l` flag.
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
v8.setFlagsFromString('--enable-experimental-regexp-engine');

/** An error message when a user pattern is invalid or could backtrack without bound; undefined when fine. */
export function validateUserPattern(source: string): string | undefined {
  try {
    new RegExp(source);
  } catch (err) {
    return `invalid regular expression: ${(err as Error).message}`;
  }
  try {
    // eslint-disable-next-line no-invalid-regexp -- `l` (linear) exists once the V8 flag above is set
    new RegExp(source, 'l');
  } catch {
    return (
      'this pattern cannot run in linear time (lookahead, lookbehind and backreferences are not allowed ' +
      'in user rules, because a pathological line could then stall the watcher)'
    );
  }
  return undefined;
}

const CLASS_ESCAPES = new Set([...'dDwWsSbBnrtfv0123456789kpPuxc']);

/**
 * Literal strings of which at least one occurs in every line the pattern matches, or null when none can
 * be proven (the rule then runs on every line). Conservative: only top-level text outside groups and
 * classes counts, and a top-level `|` yields one literal per branch.
 */
export function requiredLiterals(source: string): string[] | null {
  const branches = splitTopLevel(source);
  const out: string[] = [];
  for (const b of branches) {
    const lit = longestLiteral(b);
    if (lit === null) return null;
    out.push(lit);
  }
  return out;
}

/**
 * The first index from `from` at which `stop(c, depth)` holds, outside escapes and character classes; `depth` is the
 * group depth after `c`. src.length when there is none.
 */
function scanTopLevel(src: string, from: number, stop: (c: string, depth: number) => boolean): number {
  let depth = 0;
  let inClass = false;
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    if (stop(c, depth)) return i;
  }
  return src.length;
}

function splitTopLevel(src: string): string[] {
  const parts: string[] = [];
  for (let start = 0; ;) {
    const bar = scanTopLevel(src, start, (c, depth) => c === '|' && depth === 0);
    parts.push(src.slice(start, bar));
    if (bar >= src.length) return parts;
    start = bar + 1;
  }
}

function longestLiteral(src: string): string | null {
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    let atom: string | null = null; // a literal char, or null for a non-literal atom
    let next = i + 1;
    if (c === '\\') {
      const e = src[i + 1] ?? '';
      next = i + 2;
      atom = CLASS_ESCAPES.has(e) ? null : e;
    } else if (c === '[') {
      let j = i + 1;
      while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1;
      next = j + 1;
    } else if (c === '(') {
      next = scanTopLevel(src, i, (d, depth) => d === ')' && depth === 0) + 1;
    } else if ('.^$'.includes(c)) {
      atom = null;
    } else {
      atom = c;
    }
    // A quantifier after the atom decides whether it is required.
    const q = src[next];
    let optional = false;
    let repeated = false;
    if (q === '*' || q === '?') {
      optional = true;
      next++;
    } else if (q === '+') {
      repeated = true;
      next++;
    } else if (q === '{') {
      const m = /^\{(\d+)(,\d*)?\}/.exec(src.slice(next));
      if (m) {
        optional = m[1] === '0';
        repeated = true;
        next += m[0].length;
      }
    }
    if (src[next] === '?' && (optional || repeated)) next++; // lazy
    if (atom === null || optional) end();
    else {
      run += atom;
      if (repeated) end();
    }
    i = next;
  }
  end();
  return best.length >= 3 ? best : null;
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
