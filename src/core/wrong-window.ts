// Wrong answers by window (issue 26): a slot of an answer-checking probe (canary, structured) is `wrong_output`
// once WRONG_ANSWERS of its last WRONG_WINDOW answers were wrong, and stays so until WRONG_WINDOW clean answers
// in a row. A streak forgot a wrong answer at the next pass: kv_corruption at rate 0.5 read `ok` a minute after
// `wrong_output`, and the alert's 5-minute `for:` held about 14 % of the time. docs/decisions.md ("Wrong answers
// by window") has the binomial arithmetic behind the two numbers and the alert's `for: 0s`; bench/wrong-window.mjs
// measures them through this core at the example cadence.
import type { ProbeResultClass } from './signals.js';
import type { SlotMemory } from './memory.js';

/**
 * Wrong answers among the last WRONG_WINDOW that make the slot `wrong_output`. One: at the example cadence (a canary
 * every 30 s) a 10 % wrong rate gives about 24 answers in 10 minutes, and two wrong among them come only 71 % of
 * the time even with no scrape or evaluation delay; one comes 92 % of the time.
 */
export const WRONG_ANSWERS = 1;

/**
 * Answers the window holds, and clean answers in a row that end `wrong_output`. 40 (20 minutes at 30 s): at a 10 %
 * wrong rate 40 clean in a row come once in about 13 hours of canary runs (so one incident stays one incident),
 * where 20 came within the hour two times in three.
 */
export const WRONG_WINDOW = 40;

/**
 * Or this long of clean answers in a row, whichever comes first: the canary's WRONG_WINDOW answers at the example's
 * 30 s. A slot that answers less often (structured every 2 m, the tool-call matrix every 90 s) held its label 40
 * runs, 60–80 minutes after the fault ended (reasoning_garbage at the example cadence: not back to ok in 25 min).
 */
export const WRONG_HOLD_MS = 20 * 60_000;

/** The run's answer as the window counts it: 1 wrong, 0 clean; a run that gave no answer (a timeout) is neither. */
function answerOf(result: ProbeResultClass): 0 | 1 | undefined {
  if (result === 'wrong_output') return 1;
  if (result === 'ok') return 0;
  return undefined;
}

/**
 * Adds a finished completion run to its slot's window (slots.ts calls it). The window starts at the slot's first
 * wrong answer and ends when the slot clears: the clean answers before it are zeros that change no count, so a
 * slot that never answered wrong (every chat slot) keeps nothing.
 */
export function noteAnswer(
  slot: SlotMemory,
  result: ProbeResultClass,
  error: string | undefined,
  at: number,
): void {
  const a = answerOf(result);
  if (a === 0) slot.answeredRight = true;
  if (a === undefined || (a === 0 && slot.answers === undefined)) return;
  if (a === 1) {
    slot.lastWrong = error;
    slot.cleanSince = undefined;
  } else slot.cleanSince ??= at;
  const window = [...(slot.answers ?? []), a].slice(-WRONG_WINDOW);
  const wrong = window.reduce<number>((n, x) => n + x, 0);
  if (wrong >= WRONG_ANSWERS) slot.wrongHeld = true;
  // WRONG_WINDOW clean answers since the last wrong one, or WRONG_HOLD_MS of them.
  const cleanFor = slot.cleanSince !== undefined ? at - slot.cleanSince : 0;
  if ((window.length === WRONG_WINDOW && wrong === 0) || cleanFor >= WRONG_HOLD_MS) {
    slot.wrongHeld = false;
    slot.answers = undefined;
    slot.lastWrong = undefined;
    slot.cleanSince = undefined;
  } else slot.answers = window;
}

/** The slot is `wrong_output` now. */
export function wrongHeld(slot: SlotMemory): boolean {
  return slot.wrongHeld === true;
}

/** Wrong answers in the slot's current window (0 once the window has cleared, or before its first wrong answer). */
export function wrongAnswers(slot: SlotMemory): number {
  return (slot.answers ?? []).reduce<number>((n, x) => n + x, 0);
}

/**
 * The cause text: the last wrong answer as the probe quoted it (expected and got). The cause is written at the
 * transition, so it names no running tally that would be stale a run later.
 */
export function wrongCause(slot: SlotMemory, label: string): string {
  return `${label}: ${slot.lastWrong ?? 'wrong output'}; holds until ${WRONG_WINDOW} clean answers in a row or ${WRONG_HOLD_MS / 60_000} minutes of them`;
}
