// Value-level redaction: secrets come from the environment and files, so they can surface anywhere
// (an error message quoting a header, a debug timeline, a log line the engine wrote, a watched env file).
// Everything that leaves the process goes through this one layer: HTTP responses (an onSend hook in
// server/app.ts), the event journal (detect/journal.ts), the daemon's own log (logger.ts).

export const REDACTED = '<secret>';

/**
 * Credentials recognised by shape, for tokens the config never named (a log line quoting a client's header):
 * `Bearer <token>` / `Basic <base64>` as in an Authorization header, and `key=value` pairs whose key says secret.
 */
const CREDENTIAL_SHAPES: Array<[RegExp, string]> = [
  // A token has a digit somewhere ("Basic authentication" is prose, not a credential).
  [/\b(Bearer|Basic)(\s+)(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{8,}/g, `$1$2${REDACTED}`],
  // A value has a letter and a digit: SGLang's `#token: 123456` batch field is a count, and
  // "bearerToken: environment variable … is not set" is prose.
  [
    /\b([A-Za-z0-9_-]*(?:api[_-]?key|token|secret|password|passwd)["']?\s*[=:]\s*["']?)(?=[^\s"'&,;}<]*[A-Za-z])(?=[^\s"'&,;}<]*[0-9])[^\s"'&,;}<]{6,}/gi,
    `$1${REDACTED}`,
  ],
];

export class Redactor {
  private secrets: string[] = [];
  private readonly sources = new Map<string, string[]>();
  private gen = 0;

  /** Changes whenever the secrets do: text redacted once and kept (the /metrics series) is stale after that. */
  get generation(): number {
    return this.gen;
  }

  /** Replaces the config's secrets (every config load). */
  set(secrets: Iterable<string>): void {
    this.setSource('config', secrets);
  }

  /** Replaces the secrets of one named source (the config, a watched env file, …); others are kept. */
  setSource(source: string, secrets: Iterable<string>): void {
    this.sources.set(source, [...secrets]);
    // Longest first, so a token that contains another is replaced whole.
    // Log lines are redacted after pino serialised them, so a secret holding `"` or `\` appears there
    // JSON-escaped: match that form too.
    const all = new Set<string>();
    for (const list of this.sources.values()) {
      for (const s of list) {
        all.add(s);
        all.add(JSON.stringify(s).slice(1, -1));
      }
    }
    this.secrets = [...all].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
    this.gen++;
  }

  /** Drops a named source's secrets. */
  dropSource(source: string): void {
    if (this.sources.delete(source)) this.setSource('config', this.sources.get('config') ?? []);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    for (const [re, to] of CREDENTIAL_SHAPES) {
      re.lastIndex = 0;
      if (re.test(out)) {
        re.lastIndex = 0;
        out = out.replace(re, to);
      }
    }
    return out;
  }
}

/** One process-wide redactor, fed by every config load; the logger and HTTP outputs consult it. */
export const redactor = new Redactor();
