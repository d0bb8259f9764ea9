// Where a JSON text stops parsing, as a line a person can find. Browsers
// word JSON.parse's errors differently, and Chromium's "Unexpected token"
// names no position at all, so when the message gives no line a small
// scanner finds the first character JSON does not allow.

/**
 * syntaxError parses text and returns null when it is JSON, else the
 * parser's message and the 1-based line of the error.
 * @param {string} text
 * @returns {{message: string, line: number}|null}
 */
export function syntaxError(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    const message = /** @type {Error} */ (err).message;
    const line = message.match(/line (\d+)/);
    return { message, line: line ? Number(line[1]) : lineAt(text, stopsAt(text)) };
  }
}

/**
 * lineAt is the 1-based line of offset in text.
 * @param {string} text
 * @param {number} offset
 */
function lineAt(text, offset) {
  return text.slice(0, offset).split('\n').length;
}

/**
 * stopsAt returns the offset of the first character that makes text not
 * JSON (text.length when it ends too soon).
 * @param {string} text
 */
function stopsAt(text) {
  let i = 0;
  const fail = () => { throw i; };
  const space = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const literal = (/** @type {string} */ word) => {
    for (const c of word) if (text[i++] !== c) { i--; fail(); }
  };
  const string = () => {
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = () => {
    const m = text.slice(i).match(/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/);
    if (!m) fail();
    i += /** @type {RegExpMatchArray} */ (m)[0].length;
  };
  /** @param {string} close @param {() => void} item */
  const list = (close, item) => {
    i++;
    space();
    if (text[i] === close) { i++; return; }
    for (;;) {
      item();
      space();
      if (text[i] === close) { i++; return; }
      if (text[i] !== ',') fail();
      i++;
    }
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === '{') list('}', () => { space(); if (text[i] !== '"') fail(); string(); space(); if (text[i] !== ':') fail(); i++; value(); });
    else if (c === '[') list(']', value);
    else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else number();
  };
  try {
    value();
    space();
    return i < text.length ? i : text.length;
  } catch (at) {
    return Math.min(Number(at), text.length);
  }
}
