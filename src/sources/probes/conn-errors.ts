// What a request's error says about its connection: read by the runner (connect_error, the detector's "refused")
// and by the tool-call matrix, whose cells each open their own request and fail on their own.

/** The first error code on the error or its causes (undici wraps the socket's error). */
export function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e !== null && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Codes that mean no connection was made, whatever the socket state says. */
const NO_CONNECTION = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error says no connection was made (refused, unresolved, unreachable, connect timeout). */
export function noConnection(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && NO_CONNECTION.has(code);
}
