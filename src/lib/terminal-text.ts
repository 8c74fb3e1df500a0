// Text from engines and logs (response bodies, log lines, model output) shown where a terminal may render it:
// `/probe?debug=true` read with curl, `wedgewatch replay` and `incidents` output. A raw ESC there is a command
// to the operator's terminal — OSC 0 retitles the window, OSC 52 writes the clipboard, CSI moves the cursor
// and erases what was printed (issue 24 #14). Control characters are shown as escapes instead; newlines and
// tabs stay, and so does CR before LF (a CRLF log), but a lone CR, which returns to the start of the line and
// lets the rest overwrite it, is shown. Bidi overrides are shown too: they reorder what a reader sees.

// One character per match and a one-character lookahead: linear in the text.
const CONTROLS =
  // eslint-disable-next-line no-control-regex -- matching control characters is this module's job
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

function escapeOne(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character a terminal would act on shown as `\xNN` / `\uNNNN`. */
export function visibleControls(text: string): string {
  return text.replace(CONTROLS, escapeOne);
}
