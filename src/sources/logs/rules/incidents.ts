// Incident grouping, the matcher's collaborator: rules sharing an incident key within INCIDENT_WINDOW_MS of the
// incident's last member describe one incident (one event; the others are its members, counted and listed), and
// the final exception of its traceback chain is its root cause. A start-up line ends every open incident.
import { processKey } from '../loggers.js';
import type { CompiledRule } from './compile.js';

/** One match folded into an incident: what the incident's event lists as its members. */
export interface IncidentMember {
  rule: string;
  /** 1-based line number of the member's (first) line. */
  lineNo: number;
  /** Unix ms of the line (its own stamp, the last stamp before it, or the read time). */
  time: number;
  /** The member's first line, capped at MEMBER_LINE_KEEP characters. */
  line: string;
  /** The process or rank prefix of the line (loggers.ts processKey), '' when it names none. */
  process: string;
}

/**
 * The lines of one incident (rules sharing an incident key within the time window): the event is raised once, for
 * the first decisive member, and this object grows while the incident is open (members, absorbed, root cause), so
 * whatever keeps the event (replay, the bundle, the status page's events) shows the whole chain.
 */
export interface Incident {
  key: string;
  /** The first MAX_MEMBERS members, the event's own first. */
  members: IncidentMember[];
  /** Members beyond the event's own (every one counted, kept or not). */
  absorbed: number;
  /** The final exception of the last traceback in the chain: `RuntimeError`, `CUDA error: …`. */
  rootCause?: { exception: string; message: string; rule: string };
  /** Fields of the members, the event's own first, then the others' in order (a traceback's exception last wins). */
  fields: Record<string, string>;
  start: number;
  last: number;
}

/** How long after an incident's last member a line of the same incident still belongs to it. */
export const INCIDENT_WINDOW_MS = 30_000;
/** Members an incident keeps (each one is counted, kept or not). */
export const MAX_MEMBERS = 20;
const MEMBER_LINE_KEEP = 300;
/** Open incidents kept per matcher (keys are pack incident keys, times process prefixes: few). */
const MAX_INCIDENTS = 256;
/**
 * Lines a chain head without a root cause (`Subprocess … crashed`, printed by another process before the dying one's
 * traceback) waits for a traceback record of its incident to begin; the record then runs to its own end. Past it, or
 * when the input ends or goes quiet (finish), the event goes out as it is.
 */
export const ROOT_CAUSE_WAIT_LINES = 50;

/** A member's line, where it is and when. */
export interface MemberLine {
  rule: CompiledRule;
  line: string;
  lineNo: number;
  time: number;
  fields: Record<string, string>;
}

/** The open incidents of one matcher, by scope. */
export class Incidents {
  /** Open incidents by scope key (incident key, plus the process prefix for process-scoped rules). */
  private readonly open = new Map<string, Incident>();
  /** Incident keys a traceback record (a `follows` rule whose header alone is decisive) can give a root cause. */
  private readonly recordKeys: Set<string>;

  constructor(
    rules: readonly CompiledRule[],
    private readonly window = INCIDENT_WINDOW_MS,
  ) {
    this.recordKeys = new Set(
      rules.flatMap((r) => (r.follows && r.emitUnclosed && r.incident !== undefined ? [r.incident] : [])),
    );
  }

  /** The scope a rule's incident is kept under: its key, or its key per process for process-scoped rules. */
  scope(rule: CompiledRule, line: string): string {
    return rule.incidentScope === 'process' ? `${rule.incident}\u0000${processKey(line)}` : rule.incident!;
  }

  /** The incident open under `scope` at `time`, if its last member is within the window. */
  openAt(scope: string, time: number): Incident | undefined {
    const inc = this.open.get(scope);
    if (inc === undefined) return undefined;
    if (time - inc.last > this.window || time < inc.start - this.window) {
      this.open.delete(scope);
      return undefined;
    }
    return inc;
  }

  /** A new incident under `scope`, `m` its first member (it replaces one open there). */
  start(scope: string, m: MemberLine): Incident {
    const inc: Incident = {
      key: m.rule.incident!,
      members: [member(m)],
      absorbed: 0,
      fields: { ...m.fields },
      start: m.time,
      last: m.time,
    };
    setRootCause(inc, m.rule, m.fields);
    this.open.delete(scope);
    this.open.set(scope, inc);
    if (this.open.size > MAX_INCIDENTS) this.open.delete(this.open.keys().next().value!);
    return inc;
  }

  /** `m` is a member of the open incident `inc`. */
  join(inc: Incident, m: MemberLine): void {
    inc.absorbed++;
    if (inc.members.length < MAX_MEMBERS) inc.members.push(member(m));
    inc.last = Math.max(inc.last, m.time);
    for (const [k, v] of Object.entries(m.fields)) if (!(k in inc.fields)) inc.fields[k] = v;
    setRootCause(inc, m.rule, m.fields);
  }

  /** A start-up line (the server ready, a new engine): the deaths before it are over. */
  end(): void {
    this.open.clear();
  }

  /**
   * Whether the event of a rule's incident waits for its root cause: a chain head printed before the dying
   * process's traceback (issue 27), when a traceback record of its incident can still name it.
   */
  waitsForRootCause(rule: CompiledRule, inc: Incident | undefined): boolean {
    return inc !== undefined && inc.rootCause === undefined && this.recordKeys.has(rule.incident!);
  }
}

function member({ rule, line, lineNo, time }: MemberLine): IncidentMember {
  const nl = line.indexOf('\n');
  const first = nl < 0 ? line : line.slice(0, nl);
  return {
    rule: rule.name,
    lineNo,
    time,
    line: first.length > MEMBER_LINE_KEEP ? first.slice(0, MEMBER_LINE_KEEP) : first,
    process: processKey(first),
  };
}

/** An exception in a member's fields is the incident's root cause; a traceback's final one wins over others. */
export function setRootCause(
  inc: Incident,
  rule: CompiledRule,
  fields: Record<string, string>,
  traceback = false,
): void {
  const exception = fields.exception;
  if (exception === undefined) return;
  if (inc.rootCause !== undefined && !traceback) return;
  inc.rootCause = { exception, message: fields.message ?? '', rule: rule.name };
}
