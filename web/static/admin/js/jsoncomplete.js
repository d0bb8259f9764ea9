// Schema-aware completion for the JSON view: from the text before the
// cursor it works out where in the config the cursor is (a tolerant scan,
// since the text being typed is rarely valid JSON), then offers the field
// names the schema allows there, with their descriptions, or the values
// an enum or a boolean allows.

import { schemaAt } from './schema.js';

/**
 * @typedef {object} Frame one open object or array before the cursor
 * @property {'obj'|'arr'} type
 * @property {string|null} key the member being written (objects)
 * @property {number} index the element being written (arrays)
 * @property {boolean} expectingKey the next string is a key (objects)
 * @property {Set<string>} keys the keys written so far (objects)
 */

/**
 * @typedef {object} Place where the cursor is
 * @property {(string|number)[]} path of the object or array the cursor is in
 * @property {'key'|'value'} want a key of that object, or a value
 * @property {number} from where the completed word starts (its quote, if any)
 * @property {Set<string>} keys keys the object already has
 */

/**
 * placeAt scans text up to pos.
 * @param {string} text
 * @param {number} pos
 * @returns {Place|null} null outside any object or array
 */
export function placeAt(text, pos) {
  /** @type {Frame[]} */
  const stack = [];
  let stringStart = -1; // the open quote of an unterminated string at pos
  for (let i = 0; i < pos; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; j < pos && text[j] !== '"'; j++) {
        if (text[j] === '\\') j++;
        s += text[j];
      }
      if (j >= pos) {
        stringStart = i;
        break;
      }
      if (top && top.type === 'obj' && top.expectingKey) {
        top.key = s;
        top.keys.add(s);
      }
      i = j;
    } else if (c === '{' || c === '[') {
      stack.push({ type: c === '{' ? 'obj' : 'arr', key: null, index: 0, expectingKey: c === '{', keys: new Set() });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ':' && top && top.type === 'obj') {
      top.expectingKey = false;
    } else if (c === ',' && top) {
      if (top.type === 'obj') top.expectingKey = true;
      else top.index++;
    }
  }
  const top = stack[stack.length - 1];
  if (!top) return null;
  const path = stack.slice(0, -1).map((f) => (f.type === 'obj' ? /** @type {string} */ (f.key) : f.index));
  let from = stringStart >= 0 ? stringStart : pos;
  if (stringStart < 0) while (from > 0 && /[\w-]/.test(text[from - 1])) from--; // a bare word: true, fal…
  if (top.type === 'arr') return { path: [...path, top.index], want: 'value', from, keys: new Set() };
  if (top.expectingKey) return { path, want: 'key', from, keys: top.keys };
  return { path: [...path, /** @type {string} */ (top.key)], want: 'value', from, keys: new Set() };
}

/**
 * schemaCompletion is a CodeMirror completion source over the schema.
 * @param {() => import('./schema.js').Schema|null} schema
 */
export function schemaCompletion(schema) {
  /** @param {any} ctx CodeMirror's CompletionContext */
  return (ctx) => {
    const text = ctx.state.doc.sliceString(0, ctx.pos);
    const place = placeAt(text, ctx.pos);
    const s = place && schemaAt(schema(), place.path);
    if (!place || !s) return null;
    if (place.from === ctx.pos && !ctx.explicit) return null; // only while typing a word, or on Ctrl-Space
    const after = ctx.state.doc.sliceString(ctx.pos, ctx.pos + 40);
    const options = place.want === 'key' ? keyOptions(s, place, after) : valueOptions(s);
    // A string being typed ends in the quote the editor closed it with;
    // the completion replaces that too.
    const to = text[place.from] === '"' && after.startsWith('"') ? ctx.pos + 1 : ctx.pos;
    return options.length ? { from: place.from, to, options, validFor: /^"?[\w-]*"?$/ } : null;
  };
}

/**
 * keyOptions offers the members the object's schema has and it lacks.
 * @param {import('./schema.js').Schema} s
 * @param {Place} place
 * @param {string} after the text after the cursor
 */
function keyOptions(s, place, after) {
  const colon = /^"?\s*:/.test(after); // the key is already followed by its colon
  return Object.entries(s.properties || {})
    .filter(([k]) => !place.keys.has(k))
    .map(([k, p]) => ({ label: `"${k}"`, type: 'property', info: p.description || undefined, apply: colon ? `"${k}"` : `"${k}": ` }));
}

/**
 * valueOptions offers the values an enum, a boolean or a type allows.
 * @param {import('./schema.js').Schema} s
 */
function valueOptions(s) {
  if (Array.isArray(s.enum)) return s.enum.map((/** @type {any} */ v) => ({ label: JSON.stringify(v), type: 'enum', info: s.description || undefined }));
  const types = Array.isArray(s.type) ? s.type : [s.type];
  /** @type {{label: string, type: string}[]} */
  const out = [];
  if (types.includes('boolean')) out.push({ label: 'true', type: 'keyword' }, { label: 'false', type: 'keyword' });
  if (types.includes('object')) out.push({ label: '{}', type: 'keyword' });
  if (types.includes('array')) out.push({ label: '[]', type: 'keyword' });
  return out;
}
