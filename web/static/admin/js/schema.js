// The agent config's JSON Schema as this server serves it
// (GET /v1/schemas/agent-config): the form's hints and the JSON view's
// completion both read it, so neither repeats what the schema says.

/** @typedef {{[key: string]: any}} Schema */

/** @type {Promise<Schema|null>|null} */
let loading = null;

/**
 * agentSchema fetches the schema once per page; null when it cannot be had
 * (the editors then work without hints).
 * @returns {Promise<Schema|null>}
 */
export function agentSchema() {
  if (!loading) {
    loading = fetch('/v1/schemas/agent-config', { credentials: 'same-origin' })
      .then((res) => (res.ok ? res.json() : null))
      .catch(() => null);
  }
  return loading;
}

/**
 * schemaAt walks the schema along a path of keys and indexes, following
 * local $refs; null where the schema says nothing.
 * @param {Schema|null} root
 * @param {(string|number)[]} path
 * @returns {Schema|null}
 */
export function schemaAt(root, path) {
  let s = resolve(root, root);
  for (const k of path) {
    if (!s) return null;
    if (typeof k === 'number' || /^\d+$/.test(String(k))) {
      s = resolve(root, Array.isArray(s.items) ? s.items[Number(k)] : s.items);
    } else {
      const props = s.properties || {};
      s = resolve(root, k in props ? props[k] : typeof s.additionalProperties === 'object' ? s.additionalProperties : null);
    }
  }
  return s;
}

/**
 * resolve follows a local "$ref" ("#/definitions/x").
 * @param {Schema|null} root
 * @param {Schema|null|undefined} s
 * @returns {Schema|null}
 */
function resolve(root, s) {
  for (let i = 0; s && s.$ref && i < 8; i++) {
    const ref = /** @type {string} */ (s.$ref);
    if (!ref.startsWith('#/')) return null;
    s = ref.slice(2).split('/').reduce((/** @type {any} */ o, k) => (o ? o[k.replace(/~1/g, '/').replace(/~0/g, '~')] : null), root);
  }
  return s || null;
}
