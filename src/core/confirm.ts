// What confirms a critical log line: a completion that got no first token within confirmAfter of the line (or of
// its own start, if later), while the engine showed no sign of serving in that time. A slow stream is not a wedge:
// its first token came, so the engine serves, and a prompt that wrote a fake traceback into the log must not be
// "confirmed" by a busy engine (issue 24). Nor is a long wait for a first token on a loaded engine (issue 37 item 1:
// first tokens in 6–9 s, every completion still finishing in 14–17 s, a fake thread death "confirmed", wedged, a
// bundle and a remediation): while the run waited, other completions got tokens or finished, or the engine's own
// token and finish counters moved (TargetMemory.servingAt), and that is queueing, not a wedge. state.ts (hangs and
// finished runs) and the verdict's symptoms (verdict/symptoms.ts, hangs) judge with this one test, so the two
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

/**
 * noFirstTokenWithin, and the engine is not serving: its last sign of serving (`servingAt`, TargetMemory) is older
 * than `confirmAfter`, or no later than the later of the line and the run's start. Evidence from before the line says
 * nothing about it (a thread that dies mid-traffic leaves completions that finished just before); evidence from right
 * after it holds the confirmation off for `confirmAfter` (the last requests past the broken stage still finish), so a
 * wedge is confirmed `confirmAfter` after the engine last moved, and a loaded engine, whose completions keep moving,
 * is never confirmed by a slow first token.
 */
export function confirmsLine(
  startedAt: number,
  firstTokenMs: number | undefined,
  lineTime: number,
  now: number,
  confirmAfter: number,
  servingAt: number | undefined,
): boolean {
  if (!noFirstTokenWithin(startedAt, firstTokenMs, lineTime, now, confirmAfter)) return false;
  return !servedSince(servingAt, Math.max(startedAt, lineTime), now, confirmAfter);
}

/** Whether the engine served after the line and within `confirmAfter` of `now` (confirmsLine's counter-evidence). */
export function servedSince(
  servingAt: number | undefined,
  since: number,
  now: number,
  confirmAfter: number,
): boolean {
  return servingAt !== undefined && servingAt > Math.max(since, now - confirmAfter);
}

/**
 * The earliest time after `now` at which confirmsLine could turn true for a run in flight, judged on what is known
 * now (undefined: none can, or not later than now): its deadline, and `confirmAfter` past the engine's last sign of
 * serving when that came after the line. The shell ticks the reducer then (issue 37: waiting for the next periodic
 * tick added up to 1 s to traceback → wedged); a wrong guess costs one tick, never a verdict.
 */
export function confirmDueAt(
  startedAt: number,
  firstTokenMs: number | undefined,
  lineTime: number,
  now: number,
  confirmAfter: number,
  servingAt: number | undefined,
): number | undefined {
  const since = Math.max(startedAt, lineTime);
  const deadline = since + confirmAfter;
  // Its first token came within confirmAfter: this run never confirms the line.
  if (firstTokenMs !== undefined && startedAt + firstTokenMs <= deadline) return undefined;
  const due =
    servingAt !== undefined && servingAt > since ? Math.max(deadline, servingAt + confirmAfter) : deadline;
  return due > now ? due : undefined;
}
