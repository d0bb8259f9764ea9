// lineOf finds where a JSON pointer points in a config's text, so a
// validation problem can name its line and the editor can jump there.

/**
 * lineOf returns the 1-based line of the value at pointer in text (for an
 * object member, the line of its key), or of its nearest ancestor that
 * exists: a missing required field points into its parent. text must be
 * valid JSON; 0 means it could not be read.
 */
export function lineOf(text, pointer) {
  const want = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const starts = new Map(); // JSON of a path -> offset where its value (or key) starts
  let i = 0;

  const space = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const string = () => {
    let out = '';
    for (i++; i < text.length && text[i] !== '"'; i++) {
      if (text[i] === '\\') i++; // an escape; keys with escapes match approximately
      out += text[i];
    }
    i++;
    return out;
  };
  const value = (path, at) => {
    space();
    starts.set(JSON.stringify(path), at === undefined ? i : at);
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      space();
      for (let n = 0; i < text.length && text[i] !== close; n++) {
        space();
        if (c === '{') {
          const keyAt = i;
          const key = string();
          space();
          i++; // the colon
          value([...path, key], keyAt);
        } else {
          value([...path, String(n)]);
        }
        space();
        if (text[i] === ',') i++;
      }
      i++;
    } else if (c === '"') {
      string();
    } else {
      while (i < text.length && !',]} \t\r\n'.includes(text[i])) i++;
    }
  };

  value([]);
  for (let n = want.length; n >= 0; n--) {
    const at = starts.get(JSON.stringify(want.slice(0, n)));
    if (at !== undefined) return text.slice(0, at).split('\n').length;
  }
  return 0;
}
