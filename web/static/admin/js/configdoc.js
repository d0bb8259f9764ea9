// The one config object that the form and the JSON view both edit. The
// JSON view replaces it when its text parses; the form changes it in
// place. Each change is announced with its source, so a view does not
// redraw itself under the user's cursor. While the JSON text does not
// parse there is no config: the form shows the last one read-only, since
// an edit of it would rewrite the text and erase what was typed since.

/** @typedef {(string|number)[]} Path a location in the config: keys and array indexes */
/** @typedef {'json'|'form'|'structure'|'load'} Source who changed the config: 'structure' is the form adding or removing something */
/** @typedef {(source: Source) => void} Listener */
/** @typedef {{message: string, line: number}} SyntaxProblem why and where the JSON text does not parse */

/**
 * @typedef {object} ConfigDoc
 * @property {() => any} get the config, or undefined while the JSON does not parse
 * @property {() => any} last the config as the JSON last parsed, for showing while it does not
 * @property {() => SyntaxProblem|null} broken why the JSON does not parse (null when it does)
 * @property {(config: any, source: Source) => void} replace
 * @property {(problem: SyntaxProblem) => void} break marks the JSON as not parsing
 * @property {(path: Path, value: any, source?: Source) => void} edit sets (or, with undefined, removes) the value at path; nothing while the JSON does not parse
 * @property {(fn: Listener) => void} subscribe
 */

/**
 * configDoc holds a config and tells subscribers of every change.
 * @param {any} initial
 * @returns {ConfigDoc}
 */
export function configDoc(initial) {
  let config = initial;
  /** @type {SyntaxProblem|null} */
  let brokenBy = null;
  /** @type {Set<Listener>} */
  const listeners = new Set();
  const emit = (/** @type {Source} */ source) => listeners.forEach((fn) => fn(source));
  return {
    get: () => (brokenBy ? undefined : config),
    last: () => config,
    broken: () => brokenBy,
    replace(next, source) {
      config = next;
      brokenBy = null;
      emit(source);
    },
    break(problem) {
      brokenBy = problem;
      emit('json');
    },
    edit(path, value, source = 'form') {
      if (brokenBy) return;
      if (config === undefined || config === null || typeof config !== 'object') config = {};
      setIn(config, path, value);
      emit(source);
    },
    subscribe: (fn) => { listeners.add(fn); },
  };
}

/**
 * getIn reads the value at path, or undefined.
 * @param {any} obj
 * @param {Path} path
 */
export function getIn(obj, path) {
  return path.reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), obj);
}

/**
 * setIn sets the value at path, creating objects on the way. undefined
 * removes an object member (and then objects it leaves empty, so clearing
 * a field does not leave "llm": {} behind) or an array element.
 * @param {any} obj
 * @param {Path} path
 * @param {any} value
 */
export function setIn(obj, path, value) {
  const parents = [obj];
  let o = obj;
  for (const k of path.slice(0, -1)) {
    if (o[k] === null || typeof o[k] !== 'object') {
      if (value === undefined) return; // nothing there to remove
      o[k] = {};
    }
    o = o[k];
    parents.push(o);
  }
  const last = path[path.length - 1];
  if (value !== undefined) {
    o[last] = value;
    return;
  }
  if (Array.isArray(o)) o.splice(Number(last), 1);
  else delete o[last];
  for (let i = parents.length - 1; i > 0; i--) {
    const p = parents[i];
    if (Array.isArray(p) || Object.keys(p).length || Array.isArray(parents[i - 1])) break;
    delete parents[i - 1][path[i - 1]];
  }
}

/**
 * pointerOf writes a path as a JSON pointer (RFC 6901).
 * @param {Path} path
 */
export function pointerOf(path) {
  return path.map((k) => '/' + String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
