// The events journal's entries as a union keyed by `type`: each type's `data` is declared once here, so the
// writers (the watchdog shell, remediation, incident capture) and the readers (the status page and strip, incident
// bundles, the demo's timeline, a restart's log resume) agree at compile time. The names come from the vocabulary
// (JOURNAL_EVENT_TYPES); a compile-time check below keeps the two the same set.
//
// The detector's events carry what the core's DetectEvent carries (src/core/memory.ts) minus its clock; remediation
// and incident data are declared here rather than imported from their outputs, because those outputs import the
// journal (folders import one way).
import type { DetectEvent } from '../../core/memory.js';
import { JOURNAL_EVENT_TYPES, type JournalEventType } from '../../core/vocabulary.js';

type Detected<T extends DetectEvent['type']> = Omit<Extract<DetectEvent, { type: T }>, 'type' | 'at'>;

/** What each type of journal event carries in `data`. */
export interface JournalData {
  transition: Detected<'transition'>;
  diagnosis: Detected<'diagnosis'>;
  /** `ref` marks the log line it came from, so a restart that reads the line again knows it is journaled. */
  critical_log: Detected<'critical_log'> & { ref?: string };
  critical_confirmed: Detected<'critical_confirmed'>;
  critical_unconfirmed: Detected<'critical_unconfirmed'>;
  probe_failing: Detected<'probe_failing'>;
  probe_recovered: Detected<'probe_recovered'>;
  engine_stalled: Detected<'engine_stalled'>;
  engine_progress: Detected<'engine_progress'>;
  engine_crawling: Detected<'engine_crawling'>;
  rank_stalled: Detected<'rank_stalled'>;
  node: Detected<'node'>;
  confirm: { reason: string };
  remediation: {
    action: string;
    argv: string[];
    result: RemediationResult;
    diagnosis: string;
    durationMs?: number;
    code?: number | null;
    output?: string;
  };
  remediation_pause: { paused: boolean };
  file_change: { path: string; hash: string | null; diff?: string };
  drain: DrainData;
  undrain: DrainData;
  incident: {
    result: string;
    id?: string;
    dir?: string;
    files: number;
    bytes: number;
    durationMs: number;
    detail?: string;
  };
}

/** A backend taken out of (drain) or put back into (undrain) a gateway's rotation, or the attempt to. */
export interface DrainData {
  backend: string;
  pool?: string;
  result: 'success' | 'failure' | 'dry_run' | 'capped';
  worker: string;
  gateway: string;
  /** The verdict that moved it. */
  state: string;
  diagnosis: string | null;
}

/** What one run of the remediation command came to (src/outputs/remediate/remediator.ts records it). */
export type RemediationResult =
  'success' | 'failure' | 'timeout' | 'interrupted' | 'dry_run' | 'cooldown' | 'capped' | 'paused';

// The vocabulary's names and this table's keys are one set: a new type is a row in both or a compile error.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_TYPES: Same<JournalEventType, keyof JournalData> = true;
void SAME_TYPES;

interface Envelope {
  /** Order of appending, unique per journal file. */
  seq: number;
  /** Unix ms. */
  time: number;
  target: string;
  summary: string;
}

/** A journal entry this version writes. */
export type KnownJournalEvent = {
  [T in JournalEventType]: Envelope & { type: T; data: JournalData[T] };
}[JournalEventType];

/**
 * An entry read back from a file written by another version, of a type this one does not know: kept (history is
 * not lost across an upgrade) under `unknown`, its own type and data as they were.
 */
export interface UnknownJournalEvent extends Envelope {
  type: 'unknown';
  data: { type: string; data?: unknown };
}

export type JournalEvent = KnownJournalEvent | UnknownJournalEvent;

/** What a writer hands the journal: one known entry without its sequence number. */
export type NewJournalEvent = {
  [T in JournalEventType]: Omit<Envelope, 'seq'> & { type: T; data: JournalData[T] };
}[JournalEventType];

/** The entries of one type. */
export type JournalEventOf<T extends JournalEventType> = Extract<KnownJournalEvent, { type: T }>;

const KNOWN: ReadonlySet<string> = new Set(JOURNAL_EVENT_TYPES);

/** An entry parsed from a journal file, as this version reads it (undefined for a line that is not an entry). */
export function readJournalEntry(v: unknown): JournalEvent | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Record<string, unknown>;
  if (typeof e.seq !== 'number' || typeof e.time !== 'number') return undefined;
  const envelope: Envelope = {
    seq: e.seq,
    time: e.time,
    target: typeof e.target === 'string' ? e.target : '',
    summary: typeof e.summary === 'string' ? e.summary : '',
  };
  const type = typeof e.type === 'string' ? e.type : '';
  // Written by this program: a known type's data is what this table says (the file is ours, in stateDir).
  if (KNOWN.has(type)) return { ...envelope, type, data: e.data ?? {} } as KnownJournalEvent;
  return { ...envelope, type: 'unknown', data: { type, data: e.data } };
}
