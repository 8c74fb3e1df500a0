// Whether a text is the start of some valid JSON value: what a reply cut off at max_tokens looks like when the
// engine was doing its job. The structured probe blames a truncation on its maxTokens only then; a cut that is not
// a prefix of any JSON was broken before it was cut (issue 28: a grammar-truncated JSON is not a setting).

type Expect = 'value' | 'key' | 'colon' | 'comma_or_end';

/** True when `text` (whitespace around it allowed) can be completed into one JSON value. */
export function isJsonPrefix(text: string): boolean {
  const stack: ('{' | '[')[] = [];
  let expect: Expect = 'value';
  let done = false;
  let i = 0;
  const n = text.length;
  const ws = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t';
  const afterValue = () => {
    if (stack.length === 0) done = true;
    expect = 'comma_or_end';
  };
  while (i < n) {
    const c = text[i]!;
    if (ws(c)) {
      i++;
      continue;
    }
    if (done) return false;
    if (expect === 'value' || expect === 'key') {
      if (c === '"') {
        // A string: to its closing quote, or to the end (a prefix).
        i++;
        while (i < n && text[i] !== '"') {
          if (text[i] === '\\') {
            i++;
            if (i < n && !'"\\/bfnrtu'.includes(text[i]!)) return false;
          } else if (text.charCodeAt(i) < 0x20) return false;
          i++;
        }
        if (i >= n) return true;
        i++;
        if (expect === 'key') expect = 'colon';
        else afterValue();
        continue;
      }
      if (expect === 'key') {
        if (c === '}' && text.slice(0, i).trimEnd().endsWith('{')) {
          stack.pop();
          i++;
          afterValue();
          continue;
        }
        return false;
      }
      if (c === '{' || c === '[') {
        stack.push(c);
        i++;
        expect = c === '{' ? 'key' : 'value';
        continue;
      }
      if (c === ']' && stack[stack.length - 1] === '[' && text.slice(0, i).trimEnd().endsWith('[')) {
        stack.pop();
        i++;
        afterValue();
        continue;
      }
      const lit =
        /^(?:-?(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][+-]?\d*)?|-|t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?)/.exec(
          text.slice(i),
        );
      if (!lit || lit[0] === '') return false;
      i += lit[0].length;
      if (i >= n) return true;
      // A literal cut short inside the text (`tru,`) is no prefix.
      if (/^[tfn]/.test(lit[0]) && !['true', 'false', 'null'].includes(lit[0])) return false;
      afterValue();
      continue;
    }
    if (expect === 'colon') {
      if (c !== ':') return false;
      i++;
      expect = 'value';
      continue;
    }
    // comma_or_end
    const top = stack[stack.length - 1];
    if (c === ',' && top !== undefined) {
      i++;
      expect = top === '{' ? 'key' : 'value';
      continue;
    }
    if ((c === '}' && top === '{') || (c === ']' && top === '[')) {
      stack.pop();
      i++;
      afterValue();
      continue;
    }
    return false;
  }
  return true;
}
