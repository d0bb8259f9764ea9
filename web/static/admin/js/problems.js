// An API refusal shown where it belongs: each {pointer, message} detail
// under the field marked with that JSON pointer (data-pointer), like the
// form editor's, and whatever has no field in a box at the form's top.

import { h, errorBox } from './dom.js';

/**
 * clearProblems removes what showProblems added to root.
 * @param {Element} root
 */
export function clearProblems(root) {
  for (const el of root.querySelectorAll('.invalid')) el.classList.remove('invalid');
  for (const el of root.querySelectorAll('small.field-problem, .problems-box')) el.remove();
  for (const el of root.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

/**
 * showProblems marks the fields of root that err's details point at (or
 * their nearest marked ancestor, "/qa/0" for "/qa/0/answer") and puts the
 * error's message, with the details no field took, first in root. The
 * first marked control takes the focus, so a keyboard user lands on it.
 * @param {HTMLElement} root
 * @param {any} err an ApiError or any Error
 */
export function showProblems(root, err) {
  clearProblems(root);
  const rest = [];
  let first = null;
  for (const d of err.details || []) {
    const el = fieldAt(root, d.pointer || '');
    if (!el) {
      rest.push(d);
      continue;
    }
    el.classList.add('invalid');
    el.append(h('small', { class: 'field-problem' }, d.message));
    const control = el.matches('input, select, textarea') ? el : el.querySelector('input, select, textarea');
    if (control) control.setAttribute('aria-invalid', 'true');
    first = first || control;
  }
  // When every problem is at its field, the box says where to look
  // instead of repeating one of them out of context.
  const marked = (err.details || []).length - rest.length;
  const message = marked && !rest.length ? `${marked === 1 ? 'One field needs' : `${marked} fields need`} a change: see below.` : err.message || String(err);
  const box = errorBox({ message, details: rest });
  box.classList.add('problems-box');
  root.prepend(box);
  if (first) /** @type {HTMLElement} */ (first).focus();
}

/**
 * fieldAt finds the element marked with pointer or its nearest ancestor
 * pointer; null when none is in root.
 * @param {Element} root
 * @param {string} pointer
 */
function fieldAt(root, pointer) {
  for (let p = pointer; p !== ''; p = p.slice(0, p.lastIndexOf('/'))) {
    const el = root.querySelector(`[data-pointer="${CSS.escape(p)}"]`);
    if (el) return /** @type {HTMLElement} */ (el);
  }
  return null;
}

/**
 * at marks a field (from dom.js field()) with the JSON pointer of what it
 * edits.
 * @param {string} pointer
 * @param {HTMLElement} el
 */
export function at(pointer, el) {
  el.dataset.pointer = pointer;
  return el;
}
