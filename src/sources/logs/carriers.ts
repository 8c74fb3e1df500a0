// Records that carry user text unquoted, over as many lines as the user likes. request-echo.ts guards lines
// that quote a prompt; these engines print model output (which the user steers) or a user's grammar raw, in an
// f-string or a %s, so a raw newline in it starts a line that looks exactly like an engine's own (issue 24:
// a tool call whose argument held a traceback paged on-call). Such a record opens on its first line (the known
// call site) and runs to its real end, whatever lines it contains; no built-in rule sees any of its lines.
//
// Where the end is printed by the engine after the user text (the f-string's tail), the user can print that tail
// too (issue 37 item 1): the record ends at the LAST tail-shaped line before the engine's next record (or a quiet
// period), never the first. Lines after a tail are held, not scanned: another tail-shaped line makes them the
// user's (dropped with the record); the engine's next record, a quiet period or the caps make them the engine's
// (scanned then, in order: a thread's stderr traceback after the real end still raises its event). Every carrier
// is bounded by the engine's next record in every format (a structured record ends its carrier: the user cannot
// start a JSON line) and by a quiet period; past MAX_CARRIER_LINES or MAX_CARRIER_BYTES (a cut-off, counted) a
// tail carrier ends at the engine's next record whether or not a tail came. Held lines are bounded (MAX_HELD_*).
// A line the scanner cut is never a tail (its end is gone, and a cut can leave user text ending tail-shaped).
// A tail-shaped line ends nothing unless it fits the text before it (json-error-tail.ts: SGLang's tail is str() of
// the JSONDecodeError CPython raised on exactly that text, so it names that text's first error): a fake tail then a
// forged record prefix stays inside the record. What is left to the user: a tail naming the very error CPython
// raises on the text (computed by the model), or a line the scanner cut, then an engine record's prefix, ends the
// record there; that is why a log line alone never pages (confirm.ts; the alert rules page only once a probe
// confirmed a line).
import { escapeRegExp } from '../../lib/regex.js';
import { JsonErrorTail } from './json-error-tail.js';
import { PACKS } from './packs/index.js';
import { MAX_PREFIX, prefixAllows } from './request-echo.js';

/** How a carrier record ends. */
export type CarrierEnd =
  /**
   * At the last line (the header's own included) this test accepts before the next line that starts a record of
   * the engine's logger (`record`), or before a quiet period; that line is still the carrier's.
   */
  | {
      kind: 'tail';
      test: (line: string) => boolean;
      record: RegExp;
      /**
       * A tail-shaped line ends the record only if it fits the text carried before it (json-error-tail.ts: the
       * error CPython raises on that text). Checked while the record is within its caps and no line was cut.
       */
      fits?: 'cpython_json_error';
    }
  /** Before the first line that does not start with the header's logger prefix, exactly (vLLM repeats it). */
  | { kind: 'same_prefix' }
  /** Before the first line that starts a new record of the engine's logger (its prefix, not quoted). */
  | { kind: 'next_record'; record: RegExp };

export interface Carrier {
  name: string;
  /** Upstream call site(s) at a commit. */
  upstream: string;
  /** A literal every header contains (the chunk prefilter must flag the header line). */
  literal: string;
  /** The header; it must start within the line's logger prefix (request-echo.ts prefixAllows). */
  open: RegExp;
  end: CarrierEnd;
  /**
   * Built-in rules that may match the header line itself (every other line of the record, and every other rule, is
   * shielded). Such a rule matches the engine's words only: its logger's prefix right before it, and a pattern that
   * ends where the user text begins or at the end of a message that holds none.
   */
  raises?: readonly string[];
}

/**
 * Lines a carrier record may span before it is cut off from its tail: past it, the record ends at the engine's next
 * record (or a quiet period) whether or not a tail came. A tool
 * call's output is a few hundred lines; an engine whose tail never shows must not blind every rule for long (issue 37
 * item 2: 50,000 lines was 22 s of a thread death unseen). Past the cap the lines are still not scanned: a cap that
 * let the rest of the record be read would let any output longer than it print a thread death (2,500 of them).
 */
export const MAX_CARRIER_LINES = 2_000;
/** Bytes a carrier record may span before it is cut off from its tail. */
export const MAX_CARRIER_BYTES = 256 * 1024;

/**
 * Lines (and bytes) held after a tail at most: past it they are dropped with the record (a stretch this long after a
 * tail-shaped line, with no record of the engine's, is the model's) and holding starts again from the line.
 */
export const MAX_HELD_LINES = 2_000;
export const MAX_HELD_BYTES = 256 * 1024;

/** Why a carrier record stopped short of its end. */
export type CarrierCut = 'lines' | 'bytes';

// CPython Lib/json/decoder.py JSONDecodeError.__init__ (3.5 → 3.13): `'%s: line %d column %d (char %d)' % (msg,
// lineno, colno, pos)` is how str(e) ends. Anchored at the end and free of unbounded repeats before a literal, so
// one test is linear in the line.
const JSON_ERROR_END = /: line \d+ column \d+ \(char \d+\)\s*$/;
const JSON_TAIL = 'JSON parse error: ';

// SGLang's logger prefix, `[%(asctime)s{prefix}] ` (python/sglang/srt/utils/common.py configure_logger): every
// record of the engine starts with it; continuation lines of a multi-line message do not.
// The part after the time varies (` DP0 TP0 EP0`, ` PP1`, milliseconds); bounded, so the test stays linear.
const SGLANG_RECORD = /\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]\n]{0,80}\] /;

const OWN: readonly Carrier[] = [
  // sgl-project/sglang python/sglang/srt/function_call/mistral_detector.py:77 @ a343daaf (and
  // base_format_detector.py / json_array_parser.py, llama32_detector.py raw_decode loop @ 01c3e438):
  // `logger.warning(f"Failed to parse JSON part: {json_array_str}, JSON parse error: {str(e)}")`. A raw newline
  // inside a JSON string is exactly what makes json.loads fail, so the text is multi-line whenever this prints.
  // Older llama32_detector.py printed the tail as its own record: `logger.warning(f"JSON parse error: {str(e)}")`.
  {
    name: 'sglang_failed_json_part',
    upstream:
      'sglang function_call/mistral_detector.py:77 @ a343daaf, llama32_detector.py detect_and_parse @ 01c3e438',
    literal: 'Failed to parse JSON part: ',
    open: /Failed to parse JSON part: /,
    end: {
      kind: 'tail',
      test: (l) => l.includes(JSON_TAIL) && JSON_ERROR_END.test(l),
      record: SGLANG_RECORD,
      fits: 'cpython_json_error',
    },
  },
  // sgl-project/sglang python/sglang/srt/function_call/base_format_detector.py parse_base_json @ 00a35ca8:
  // `logger.warning(f"Model attempted to call undefined function: {name}")`: the name is the model's, decoded
  // from JSON (so `\n` in it is a raw newline), and nothing follows it.
  {
    name: 'sglang_undefined_function',
    upstream: 'sglang function_call/base_format_detector.py parse_base_json @ 00a35ca8',
    literal: 'Model attempted to call undefined function: ',
    open: /Model attempted to call undefined function: /,
    end: { kind: 'next_record', record: SGLANG_RECORD },
  },
  // sgl-project/sglang python/sglang/srt/constrained/xgrammar_backend.py XGrammarGrammar.accept_token @ 65cf1ed0:
  // `raise ValueError(f"Tokens not accepted: {token}\nAccepted tokens: {…}\nKey string: {self.key_string}")`; the
  // key string is the request's regex / EBNF / JSON schema, raw (an EBNF grammar is multi-line by nature), printed
  // at the end of the scheduler's traceback (`Scheduler hit an exception:`, a real event raised on its header).
  // sgl-project/sglang python/sglang/srt/constrained/xgrammar_backend.py dispatch_json/_ebnf/_regex/_structural_tag:
  // `logging.error(f"Hit invalid json_schema: {key_string=}, {e=}")` @ 65cf1ed0 (the grammar as a repr, one line) and,
  // older, `logging.warning(f"Skip invalid json_schema: json_schema={key_string}, {e=}")` (raw: a multi-line schema or
  // EBNF grammar runs over lines of its own); llguidance_backend.py _from_serialized `Hit invalid grammar:
  // {serialized_grammar=}, {e=}` @ 2397abe3 (older `"Hit invalid grammar: %s, %s"`, raw). The request's grammar is the
  // user's: the record runs to the next record of the engine, and only the grammar rule sees its header.
  {
    name: 'sglang_invalid_grammar',
    upstream:
      'sglang constrained/xgrammar_backend.py dispatch_* @ 65cf1ed0 (and older), llguidance_backend.py _from_serialized @ 2397abe3',
    literal: ' invalid ',
    open: /(?:Hit|Skip) invalid (?:json_schema|ebnf|regex|structural_tag|grammar): /,
    end: { kind: 'next_record', record: SGLANG_RECORD },
    raises: ['sglang_grammar_invalid'],
  },
  {
    name: 'sglang_grammar_key_string',
    upstream: 'sglang constrained/xgrammar_backend.py XGrammarGrammar.accept_token @ 65cf1ed0',
    literal: 'Key string: ',
    open: /Key string: /,
    end: { kind: 'next_record', record: SGLANG_RECORD },
  },
  // vllm-project/vllm vllm/entrypoints/openai/tool_parsers/*_tool_parser.py (0.6 → 2026-08): `logger.debug(
  // "model_output: %s", model_output)` (step3, qwen3coder, seed_oss, …) and `logger.exception("Error in
  // extracting tool call from response.")` whose traceback can quote the output (SyntaxError from ast.parse in
  // pythonic parsers). vLLM's NewLineFormatter (vllm/logging_utils/formatter.py) repeats the record's prefix
  // `LEVEL MM-DD HH:MM:SS [file.py:N] ` on every line of a message, so a continuation line of model output reads
  // as an engine line; the record is every line that starts with the header's prefix exactly.
  {
    name: 'vllm_tool_parser',
    upstream:
      'vllm entrypoints/openai/tool_parsers/*_tool_parser.py, logging_utils/formatter.py NewLineFormatter',
    literal: '_tool_parser.py:',
    open: /\[[\w./-]*_tool_parser\.py:\d+\] /,
    end: { kind: 'same_prefix' },
    raises: ['vllm_tool_parser_error'],
  },
];

/** Every carrier: SGLang's and vLLM's above, and those the packs of the other engines declare (issue 40). */
export const CARRIERS: readonly Carrier[] = [
  ...OWN,
  ...Object.values(PACKS).flatMap((p) => p.carriers ?? []),
];

/** What an open carrier makes of the next line (OpenCarrier.takes). */
export type CarrierStep =
  /** The record's (user text): shielded. */
  | 'take'
  /** A tail-shaped line: the record's, and every line held since the last one was the user's too. */
  | 'tail'
  /** After a tail: the record's or the engine's, known at the record's real end; kept until then. */
  | 'hold'
  /** Held too much: the lines held so far go with the record, this line is held from now. */
  | 'rehold'
  /** Not the record's: it ended before this line (held lines are the engine's). */
  | 'end'
  /**
   * Past a cap: the record is cut off from its tail before this line; it ends at the engine's next record from now
   * on, tail or not. Ask again for this line's step.
   */
  | CarrierCut;

/** How a line reached the matcher: a structured record's head or continuation, or a plain line. */
export interface CarrierLine {
  /** The line is part of a structured record's message (JSON, logfmt); `head` when it is its first. */
  rec?: { head: boolean } | undefined;
  /** The scanner cut the line at maxLineBytes. */
  cut?: boolean;
}

/** An open carrier record. */
export class OpenCarrier {
  private lines = 1;
  private bytes: number;
  /** A tail-shaped line (or a cut line, which may have been one) went by: the record may have ended there. */
  private mayHaveEnded: boolean;
  /** Past a cap: the next record ends it, tail or not. */
  private capped = false;
  private heldLines = 0;
  private heldBytes = 0;
  /** The carried text, to check a tail-shaped line against (undefined once it cannot: capped, or a line cut). */
  private text: JsonErrorTail | undefined;

  private constructor(
    readonly carrier: Carrier,
    /** Where on the header line the user text may begin (after the carrier's match). */
    readonly userFrom: number,
    /** The header line up to the end of the carrier's match (vLLM's per-line prefix), digits as `\d+`. */
    private readonly prefix: RegExp,
    /** Opened on a line of a structured record: the record is its message, and ends where that does. */
    private readonly structured: boolean,
    header: string,
    cut: boolean,
  ) {
    this.bytes = header.length;
    const end = carrier.end;
    if (end.kind === 'tail' && end.fits !== undefined && !cut && !structured) {
      this.text = new JsonErrorTail(header.slice(userFrom));
    }
    this.mayHaveEnded =
      end.kind === 'tail' && (cut || (end.test(header) && (this.text?.fits(header, userFrom) ?? true)));
  }

  /** The carrier whose header this line is, opened; undefined when it is none. */
  static open(line: string, how: CarrierLine = {}): OpenCarrier | undefined {
    for (const c of CARRIERS) {
      if (!line.includes(c.literal)) continue;
      const m = c.open.exec(line);
      if (!m || m.index > MAX_PREFIX || !prefixAllows(line, m.index)) continue;
      // Digits vary line to line where a container runtime stamps each line (CRI, journald); the words do not.
      const prefix = escapeRegExp(line.slice(0, m.index + m[0].length)).replace(/\d+/g, '\\d+');
      return new OpenCarrier(
        c,
        m.index + m[0].length,
        new RegExp(`^${prefix}`),
        how.rec !== undefined,
        line,
        how.cut === true,
      );
    }
    return undefined;
  }

  /** What the record makes of `line`, the next line of the file (see CarrierStep). */
  takes(line: string, how: CarrierLine = {}): CarrierStep {
    if (!this.capped) {
      this.lines++;
      this.bytes += line.length + 1;
      const cap =
        this.lines > MAX_CARRIER_LINES ? 'lines' : this.bytes > MAX_CARRIER_BYTES ? 'bytes' : undefined;
      if (cap !== undefined) {
        this.capped = true;
        this.text = undefined;
        return cap;
      }
    }
    // A structured record is one line of the file: the next record (or a plain line) is the engine's.
    if (this.structured) return how.rec !== undefined && !how.rec.head ? 'take' : 'end';
    const end = this.carrier.end;
    switch (end.kind) {
      case 'tail': {
        // Its end is gone when the scanner cut it: it may have been the tail (held lines before it go with the
        // record), and it is never one by itself.
        // A tail-shaped line the carried text refutes (it names an error CPython does not raise on the text) is
        // the model's: an ordinary line of the record.
        const tail = how.cut !== true && end.test(line) && (this.text?.fits(line) ?? true);
        if (how.cut === true) this.text = undefined;
        else this.text?.add(line);
        if (how.cut === true || tail) {
          this.mayHaveEnded = true;
          this.heldLines = this.heldBytes = 0;
          return 'tail';
        }
        if (!this.mayHaveEnded) return this.capped && startsRecord(end.record, line) ? 'end' : 'take';
        if (startsRecord(end.record, line)) return 'end';
        this.heldLines++;
        this.heldBytes += line.length + 1;
        if (this.heldLines <= MAX_HELD_LINES && this.heldBytes <= MAX_HELD_BYTES) return 'hold';
        this.heldLines = 1;
        this.heldBytes = line.length + 1;
        return 'rehold';
      }
      case 'same_prefix':
        return this.prefix.test(line) ? 'take' : 'end';
      case 'next_record':
        return startsRecord(end.record, line) ? 'end' : 'take';
    }
  }
}

/** Whether `line` starts a record of a logger whose record prefix `record` matches (within its prefix). */
function startsRecord(record: RegExp, line: string): boolean {
  const m = record.exec(line.length > MAX_PREFIX + 128 ? line.slice(0, MAX_PREFIX + 128) : line);
  return m !== null && m.index <= MAX_PREFIX && prefixAllows(line, m.index);
}
