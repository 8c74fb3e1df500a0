// Which rules' literals occur in a line, in one pass over it (the matcher's first cut: only those rules run).
import type { CompiledRule } from './compile.js';

/** Literal hits a line may have before LiteralIndex stops listing them and asks each rule (bounds hostile lines). */
const MAX_LITERAL_HITS = 32;
/** Bits of the table of literals' first three characters. */
const TRIGRAM_BITS = 16;

const trigram = (a: number, b: number, c: number): number =>
  (((a * 31 + b) * 31 + c) ^ (a << 7)) & ((1 << TRIGRAM_BITS) - 1);

/** Distinct literal tables kept for reuse (most recently asked last); a table in use stays alive in its indexes. */
export const LITERAL_TABLES_KEPT = 16;

/**
 * The part of a LiteralIndex that depends on its rules' literals only, read and never written after it is built:
 * per trigram hash, 1 + the index in `buckets` of the literals starting with such a trigram (0: none), and the
 * literals of each hash with the rules that name them.
 */
export interface LiteralTable {
  readonly starts: Int32Array;
  readonly buckets: readonly (readonly { lit: string; rules: readonly number[] }[])[];
  readonly any: boolean;
}

/**
 * Tables by their rules' literal lists (rule order included: the table names rules by index). Every followed file
 * compiles its own rule set (watcher.ts), and `starts` is 256 KiB: 50 targets' prefill and decode logs held 100
 * equal copies, 25 MB (bench:steady, docs/decisions.md). Bounded: LITERAL_TABLES_KEPT, the least recently asked
 * dropped first; a dropped table lives on in the indexes that use it and is only built again for the next index.
 */
const tables = new Map<string, LiteralTable>();

/** How many tables are kept for reuse (tests). */
export const literalTablesKept = (): number => tables.size;

/** The table of `rules`' literals: the one already built for equal lists, or a new one. */
export function literalTable(rules: readonly CompiledRule[]): LiteralTable {
  const key = JSON.stringify(rules.map((r) => r.literals));
  const had = tables.get(key);
  if (had !== undefined) {
    tables.delete(key);
    tables.set(key, had);
    return had;
  }
  const built = buildTable(rules);
  tables.set(key, built);
  if (tables.size > LITERAL_TABLES_KEPT) tables.delete(tables.keys().next().value!);
  return built;
}

function buildTable(rules: readonly CompiledRule[]): LiteralTable {
  const byLit = new Map<string, number[]>();
  rules.forEach((r, i) => {
    for (const l of r.literals ?? []) {
      const list = byLit.get(l) ?? [];
      if (!list.includes(i)) list.push(i);
      byLit.set(l, list);
    }
  });
  const starts = new Int32Array(1 << TRIGRAM_BITS);
  const buckets: { lit: string; rules: number[] }[][] = [];
  for (const [lit, ids] of byLit) {
    // compileOne keeps only literals of three characters or more.
    const h = trigram(lit.charCodeAt(0), lit.charCodeAt(1), lit.charCodeAt(2));
    if (starts[h] === 0) starts[h] = buckets.push([]);
    buckets[starts[h]! - 1]!.push({ lit, rules: ids });
  }
  return { starts, buckets, any: byLit.size > 0 };
}

/**
 * Which rules' literals occur in a line, found in one pass: a table of every literal's first three characters
 * (hashed) says at which positions one may start, and only the literals of that hash are compared there (bucketed by
 * the hash, not by the first character: with 191 literals a line's `E`, `S` or `P` found up to 19 candidates to
 * compare, and this loop was the matcher's largest cost on replay's lines).
 * Asking each of a hundred-odd rules whether its literals occur (an `includes` per literal per rule) was most of the
 * matcher's time on a line; a regex over the literals cost ~10 ms to compile in every process. Either way a rule is
 * a candidate exactly when one of its literals occurs in the line (rules without literals always are).
 * The table is shared by every index over equal literal lists (literalTable); what a line marks is the index's own.
 */
export class LiteralIndex {
  /** Shared with every index over equal literal lists: never written. */
  readonly table: LiteralTable;
  /** 1 for the rules the last line named, and always for rules without literals. */
  private readonly hit: Uint8Array;
  /** The rules with literals the last line named (their `hit` is cleared from here, not by a walk of all rules). */
  private readonly named: number[] = [];
  /** Rules without literals (always candidates), and every rule (the answer when no rule has literals). */
  private readonly unconditional: number[] = [];
  private readonly all: number[];
  private readonly order: number[] = [];
  private readonly always = (_: number): boolean => true;
  private readonly marked = (ri: number): boolean => this.hit[ri] === 1;

  constructor(private readonly rules: readonly CompiledRule[]) {
    this.table = literalTable(rules);
    this.hit = new Uint8Array(rules.length);
    rules.forEach((r, i) => {
      if (r.literals === null) {
        this.hit[i] = 1;
        this.unconditional.push(i);
      }
    });
    this.all = rules.map((_, i) => i);
  }

  /** A predicate over rule indexes: whether the rule may match `line` (valid until the next call). */
  candidates(line: string): (ri: number) => boolean {
    if (!this.table.any) return this.always;
    this.mark(line);
    return this.marked;
  }

  /** The indexes of the rules that may match `line`, ascending: candidates' yes, listed (valid until the next call). */
  list(line: string): readonly number[] {
    if (!this.table.any) return this.all;
    this.mark(line);
    const named = this.named;
    if (named.length === 0) return this.unconditional;
    const order = this.order;
    order.length = 0;
    for (const ri of this.unconditional) order.push(ri);
    for (const ri of named) order.push(ri);
    return order.sort(ascending);
  }

  private mark(line: string): void {
    const hit = this.hit;
    const named = this.named;
    for (const ri of named) hit[ri] = 0;
    named.length = 0;
    const { starts, buckets } = this.table;
    let hits = 0;
    let a = line.charCodeAt(0);
    let b = line.charCodeAt(1);
    for (let at = 0; at + 2 < line.length; at++) {
      const c = line.charCodeAt(at + 2);
      const k = starts[trigram(a, b, c)]!;
      if (k !== 0) {
        if (++hits > MAX_LITERAL_HITS) {
          this.askEach(line);
          break;
        }
        for (const e of buckets[k - 1]!) {
          if (!line.startsWith(e.lit, at)) continue;
          for (const ri of e.rules) {
            if (hit[ri] === 1) continue;
            hit[ri] = 1;
            named.push(ri);
          }
        }
      }
      a = b;
      b = c;
    }
  }

  /**
   * A line full of literals (user text): each rule is asked, as the includes of old did. A method of its own: its
   * closure over `line` inside mark's loop made `line` a context variable there, and the loop a third slower.
   */
  private askEach(line: string): void {
    const rules = this.rules;
    for (let i = 0; i < rules.length; i++) {
      const lits = rules[i]!.literals;
      if (this.hit[i] === 0 && lits !== null && lits.some((l) => line.includes(l))) {
        this.hit[i] = 1;
        this.named.push(i);
      }
    }
  }
}

const ascending = (x: number, y: number): number => x - y;
