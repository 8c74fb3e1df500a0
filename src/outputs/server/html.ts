// HTML built by a tagged template that escapes every interpolated value unless it is already SafeHtml. Log
// lines, diagnoses and error texts come from engines and remote servers: escaping by default means a
// forgotten call cannot become an injection.

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

function render(v: unknown): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === undefined || v === null || v === false) return '';
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** A query-string URL; the caller interpolates it into an attribute through html``, which escapes it. */
export function urlWithQuery(path: string, params: Record<string, string>): string {
  return `${path}?${new URLSearchParams(params).toString()}`;
}
