// What confirms a critical log line: a completion that got no first token within confirmAfter of the line (or of
// its own start, if later). A slow stream is not a wedge: its first token came, so the engine serves, and a prompt
// that wrote a fake traceback into the log must not be "confirmed" by a busy engine (issue 24). state.ts (hangs
// and finished runs) and the verdict's symptoms (verdict/symptoms.ts, hangs) judge with this one test, so the two
// always agree.

/**
 * Whether a run that started at `startedAt` (unix ms) and got its first token `firstTokenMs` after that (undefined:
 * none yet, or none ever) had no first token within `confirmAfter` of the line at `lineTime`, as of `now`.
 */
export function noFirstTokenWithin(
  startedAt: number,
  firstTokenMs: number | undefined,
  lineTime: number,
  now: number,
  confirmAfter: number,
): boolean {
  const deadline = Math.max(startedAt, lineTime) + confirmAfter;
  if (now < deadline) return false;
  return firstTokenMs === undefined || startedAt + firstTokenMs > deadline;
}
