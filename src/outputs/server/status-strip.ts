// The state strip's data: a target's states over a window, rebuilt on each render from the event journal (its
// transitions and diagnosis changes, on disk and refilled on start) and the watchdog's current verdict. Memory is
// the journal's own ring (2000 events); what it no longer holds is drawn as "no history", never guessed.
import type { JournalEvent } from '../journal/journal.js';
import { INCIDENT_ID } from '../incidents/bundle.js';
import { TARGET_STATES, type TargetStateName } from '../../core/vocabulary.js';

/** A state the strip draws: the target's, or none known (before the journal's oldest event, a daemon restart). */
export type StripState = TargetStateName | 'no_history';

export interface StripSegment {
  from: number;
  to: number;
  state: StripState;
  diagnosis?: string;
  cause?: string;
}

export type StripMarkKind = 'diagnosis' | 'critical' | 'remediation' | 'bundle';

export interface StripMark {
  time: number;
  kind: StripMarkKind;
  text: string;
  /** A captured incident bundle's page. */
  href?: string;
}

export interface StripView {
  from: number;
  to: number;
  segments: StripSegment[];
  marks: StripMark[];
}

export interface StripInput {
  /** The target's journal events, oldest first. */
  events: JournalEvent[];
  /** When the journal's oldest event (any target's) was written; undefined for an empty journal. */
  coveredFrom: number | undefined;
  current: { state: TargetStateName; since: number; diagnosis?: string; cause?: string };
  from: number;
  to: number;
}

/** Remediation results that ran something (the others are decisions not to: cooldown, cap, pause). */
const RAN = new Set(['success', 'failure', 'timeout', 'interrupted', 'dry_run']);

function targetState(v: unknown): TargetStateName | undefined {
  return (TARGET_STATES as readonly unknown[]).includes(v) ? (v as TargetStateName) : undefined;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

export function buildStrip(input: StripInput): StripView {
  const { events, from, to } = input;
  // No verdict yet has no start either: it is as of now.
  const current = {
    ...input.current,
    since: Number.isFinite(input.current.since) ? input.current.since : to,
  };
  const segments: StripSegment[] = [];
  const firstTransition = events.find((e) => e.type === 'transition');
  const start = input.coveredFrom ?? current.since;
  let cur: StripSegment = {
    from: start,
    to: start,
    state: firstTransition ? (targetState(firstTransition.data?.from) ?? 'no_history') : 'no_history',
  };
  let lastSeen = start;
  const close = (at: number, next: Omit<StripSegment, 'from' | 'to'>) => {
    segments.push({ ...cur, to: at });
    cur = { ...next, from: at, to: at };
  };
  for (const e of events) {
    if (e.type === 'transition') {
      const was = targetState(e.data?.from);
      const now = targetState(e.data?.to);
      if (now === undefined) continue;
      // The journal did not see this state begin (the daemon was restarted, or events were lost): from the last
      // event it holds until this one, the state is not known.
      if (was !== undefined && was !== cur.state && cur.state !== 'no_history') {
        close(lastSeen, { state: 'no_history' });
      }
      close(e.time, { state: now, diagnosis: str(e.data?.diagnosis), cause: str(e.data?.cause) });
    } else if (e.type === 'diagnosis' && targetState(e.data?.state) === cur.state) {
      close(e.time, { state: cur.state, diagnosis: str(e.data?.to), cause: str(e.data?.cause) });
    }
    lastSeen = e.time;
  }
  // The verdict is the truth for now; a journal that missed its start shows the gap.
  if (cur.state !== current.state) {
    const at = Math.max(current.since, lastSeen);
    if (current.since > lastSeen) close(lastSeen, { state: 'no_history' });
    close(at, { state: current.state });
  }
  cur.diagnosis = current.diagnosis ?? cur.diagnosis;
  cur.cause = current.cause ?? cur.cause;
  segments.push({ ...cur, to });

  const clipped: StripSegment[] = [];
  // The window's start before the journal's reach is no history.
  if (segments[0]!.from > from) clipped.push({ from, to: segments[0]!.from, state: 'no_history' });
  for (const s of segments) {
    const a = Math.max(s.from, from);
    const b = Math.min(s.to, to);
    if (b <= a) continue;
    const prev = clipped.at(-1);
    if (prev && prev.state === s.state && prev.diagnosis === s.diagnosis && prev.to === a) prev.to = b;
    else clipped.push({ ...s, from: a, to: b });
  }
  return { from, to, segments: clipped, marks: marks(events, from, to) };
}

function marks(events: JournalEvent[], from: number, to: number): StripMark[] {
  const out: StripMark[] = [];
  for (const e of events) {
    if (e.time < from || e.time > to) continue;
    switch (e.type) {
      case 'diagnosis':
        out.push({ time: e.time, kind: 'diagnosis', text: e.summary });
        break;
      case 'critical_confirmed':
        out.push({ time: e.time, kind: 'critical', text: e.summary });
        break;
      case 'remediation':
        if (RAN.has(String(e.data?.result))) out.push({ time: e.time, kind: 'remediation', text: e.summary });
        break;
      case 'incident': {
        const id = str(e.data?.id);
        if (id !== undefined && INCIDENT_ID.test(id))
          out.push({ time: e.time, kind: 'bundle', text: e.summary, href: `/api/incidents/${id}` });
        break;
      }
    }
  }
  return out;
}
