// Value-level redaction: secrets come from the environment and files, so they can surface anywhere
// (an error message quoting a header, a debug timeline). Everything that leaves the process goes through this.

export const REDACTED = '<secret>';

export class Redactor {
  private secrets: string[] = [];

  set(secrets: Iterable<string>): void {
    // Longest first, so a token that contains another is replaced whole.
    // Log lines are redacted after pino serialised them, so a secret holding `"` or `\` appears there
    // JSON-escaped: match that form too.
    const all = new Set<string>();
    for (const s of secrets) {
      all.add(s);
      all.add(JSON.stringify(s).slice(1, -1));
    }
    this.secrets = [...all].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }
}

/** One process-wide redactor, fed by every config load; the logger and HTTP outputs consult it. */
export const redactor = new Redactor();
