// Patterns more than one pack uses.

// The exception line that ends a traceback (the matcher requires it to carry the header's prefix).
// Linear (issue 24): the name starts a run of name characters (tried once per run, not at every character of it),
// and once `: ` is seen the message runs to the line's end, so no start position scans the rest and then fails.
export const EXCEPTION_LINE = String.raw`(?<![\w.])(?<exception>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))(?:: ?(?<message>.*\S)?)?\s*$`;
