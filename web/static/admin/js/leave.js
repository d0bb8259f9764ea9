// Unsaved work and leaving a page. A view that holds edits names them with
// guardLeaving; the admin UI's own navigation (a link, the back button)
// asks before dropping them (app.js calls mayLeave), and closing or
// reloading the tab gets the browser's warning.

/** @type {() => boolean} */
let unsaved = () => false;

/**
 * guardLeaving makes the current page ask before it is left while
 * hasEdits() is true; the next page starts unguarded (app.js).
 * @param {() => boolean} hasEdits
 */
export function guardLeaving(hasEdits) {
  unsaved = hasEdits;
}

/** unguard drops the guard of the page being left. */
export function unguard() {
  unsaved = () => false;
}

/** mayLeave is true when the page has no unsaved edits or the person agrees to lose them. */
export function mayLeave() {
  return !unsaved() || confirm('This page has unsaved edits. Leave it and lose them?');
}

window.addEventListener('beforeunload', (e) => {
  if (unsaved()) e.preventDefault();
});
