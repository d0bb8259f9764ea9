// The ways to add sources to a knowledge base, one tab each: files
// (dropped, or chosen with the file picker, which keyboards reach), a web
// page, a sitemap, a typed text, and questions with their answers typed
// in a small table. A refusal shows at the field it names.

import { api, upload } from './api.js';
import { h, mount, field, notice, busy } from './dom.js';
import { showProblems, clearProblems, at } from './problems.js';

/** The formats the indexer reads (docs/knowledge.md, "Indexing"). */
const ACCEPT = '.md,.markdown,.txt,.html,.htm,.csv,.jsonl,.ndjson,.json,.pdf,.docx,text/*,application/pdf';

/** How often a page is fetched again: [value, words]. */
const REFRESH = [['', 'Never: read it once'], ['1h', 'Every hour'], ['6h', 'Every 6 hours'], ['24h', 'Every day'], ['168h', 'Every week']];

/**
 * addSources draws the tabs. sourcesPath: the base's sources route;
 * known(): the ids of the sources listed now, to tell a new source from
 * content the base already holds; added(): read the list again.
 * @param {string} sourcesPath
 * @param {() => Set<string>} known
 * @param {() => Promise<void>} added
 */
export function addSources(sourcesPath, known, added) {
  const out = h('div', { class: 'add-result', 'aria-live': 'polite' });
  /** said tells what became of a new source. */
  const said = (/** @type {any} */ src, /** @type {boolean} */ existed) => (existed
    ? `“${src.title || src.url}” is already in this knowledge base.`
    : `Added “${src.title || src.url}”: it is being read now; its status below changes when it is ready.`);
  const json = async (/** @type {HTMLFormElement} */ form, /** @type {any} */ body) => {
    const before = known();
    clearProblems(form);
    const src = await api('POST', sourcesPath, body);
    out.replaceChildren(notice(said(src, before.has(src.id))));
    form.reset();
    await added();
  };
  const panels = [
    ['files', 'Files', filesPanel(sourcesPath, known, added)],
    ['url', 'Web page', urlPanel('url', json)],
    ['sitemap', 'Sitemap', urlPanel('sitemap', json)],
    ['text', 'Text', textPanel(json)],
    ['qa', 'Questions and answers', qaPanel(json)],
  ];
  const tabs = panels.map(([id, label], i) => h('button', {
    type: 'button', class: 'tab', role: 'tab', id: `add-${id}-tab`, 'aria-controls': `add-${id}`, 'aria-selected': String(i === 0),
    tabindex: i === 0 ? '0' : '-1', onclick: () => show(i),
    onkeydown: (/** @type {KeyboardEvent} */ e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (!step) return;
      e.preventDefault();
      show((i + step + panels.length) % panels.length);
      /** @type {HTMLElement} */ (tabs[(i + step + panels.length) % panels.length]).focus();
    },
  }, label));
  const bodies = panels.map(([id, , body], i) => h('div', { role: 'tabpanel', id: `add-${id}`, 'aria-labelledby': `add-${id}-tab`, hidden: i !== 0 }, body));
  const show = (/** @type {number} */ n) => {
    tabs.forEach((t, i) => { t.setAttribute('aria-selected', String(i === n)); t.tabIndex = i === n ? 0 : -1; });
    bodies.forEach((b, i) => { b.hidden = i !== n; });
    out.replaceChildren();
  };
  return h('div', { class: 'add-sources' }, h('div', { class: 'tabs source-tabs', role: 'tablist', 'aria-label': 'Kind of source' }, tabs), out, bodies);
}

/** tagsField is the optional tags of a new source, comma-separated. */
function tagsField() {
  const input = h('input', { name: 'tags', placeholder: 'billing, returns' });
  return at('/tags', field('Tags', input, 'Optional, separated by commas. A search, or a bot, can keep to sources with a tag.'));
}

/** tagsOf reads a form's tags field as a list. */
function tagsOf(/** @type {HTMLFormElement} */ form) {
  const input = /** @type {HTMLInputElement} */ (form.elements.namedItem('tags'));
  return input.value.split(',').map((t) => t.trim()).filter(Boolean);
}

/**
 * filesPanel uploads each file dropped on it or chosen with its picker,
 * one request each, and says what became of every one.
 * @param {string} sourcesPath
 * @param {() => Set<string>} known
 * @param {() => Promise<void>} added
 */
function filesPanel(sourcesPath, known, added) {
  const picker = h('input', { type: 'file', name: 'file', multiple: true, accept: ACCEPT });
  const results = h('ul', { class: 'upload-results', 'aria-live': 'polite' });
  const form = h('form', { class: 'stack', onsubmit: (/** @type {Event} */ e) => e.preventDefault() });
  const send = async (/** @type {File[]} */ files) => {
    clearProblems(form);
    const tags = tagsOf(form).join(',');
    mount(results);
    for (const file of files) {
      const line = h('li', null, `${file.name}: uploading…`);
      results.append(line);
      const body = new FormData();
      body.append('file', file, file.name);
      if (tags) body.append('tags', tags);
      try {
        const before = known();
        const src = await upload(sourcesPath, body);
        line.className = 'ok';
        line.textContent = before.has(src.id) ? `${file.name}: already in this knowledge base.` : `${file.name}: added; it is being read now.`;
      } catch (err) {
        line.className = 'bad';
        // A tag problem belongs to the tags field; others to the file.
        if ((err.details || []).some((/** @type {any} */ d) => (d.pointer || '').startsWith('/tags'))) {
          showProblems(form, err);
          line.textContent = `${file.name}: not added, see the tags.`;
        } else {
          line.textContent = `${file.name}: not added: ${[err.message, ...(err.details || []).map((/** @type {any} */ d) => d.message)].join('; ')}`;
        }
      }
    }
    picker.value = '';
    await added();
  };
  picker.addEventListener('change', () => { if (picker.files && picker.files.length) send(Array.from(picker.files)); });
  const zone = h('div', { class: 'dropzone' },
    h('p', null, h('strong', null, 'Drop files here'), ' or ',
      h('label', { class: 'picker' }, h('span', null, 'choose files'), picker)),
    h('small', null, 'Markdown, plain text, HTML, CSV or JSON Lines of questions and answers, Word (DOCX) and PDF with selectable text; up to 50 MB each.'));
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    const files = Array.from(e.dataTransfer ? e.dataTransfer.files : []);
    if (files.length) send(files);
  });
  form.append(at('/file', h('div', { class: 'field' }, zone)), tagsField(), results);
  return form;
}

/**
 * urlPanel adds a web page (kind "url") or a sitemap.
 * @param {'url'|'sitemap'} kind
 * @param {(form: HTMLFormElement, body: any) => Promise<void>} json
 */
function urlPanel(kind, json) {
  const url = h('input', { name: kind, type: 'url', required: true,
    placeholder: kind === 'url' ? 'https://help.example.com/faq' : 'https://help.example.com/sitemap.xml' });
  const refresh = h('select', { name: 'refresh' }, REFRESH.map(([v, words]) => h('option', { value: v }, words)));
  const form = h('form', {
    class: 'stack',
    onsubmit: (/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      const body = { [kind]: url.value.trim(), tags: tagsOf(form) };
      if (refresh.value) body.refresh = refresh.value;
      busy(/** @type {HTMLButtonElement} */ (e.submitter), () => json(form, body)).catch((err) => showProblems(form, err));
    },
  },
  kind === 'sitemap' ? h('p', { class: 'alert warn' }, 'Sitemaps are kept but not read yet: for now, add each page as a web page.') : null,
  h('div', { class: 'row-form' },
    at('/' + kind, field(kind === 'url' ? 'Page address' : 'Sitemap address', url,
      kind === 'url' ? 'The page is read as it is now, its text cut into chunks.' : 'Every page the sitemap lists.')),
    at('/refresh', field('Read again', refresh, 'How often to read it again, so changes reach the bots.')),
    tagsField()),
  h('div', null, h('button', { type: 'submit' }, kind === 'url' ? 'Add page' : 'Add sitemap')));
  return form;
}

/**
 * textPanel adds a typed text with its title.
 * @param {(form: HTMLFormElement, body: any) => Promise<void>} json
 */
function textPanel(json) {
  const title = h('input', { name: 'title', maxlength: 500, placeholder: 'Refunds' });
  const text = h('textarea', { name: 'text', rows: 6, required: true, placeholder: 'Refunds take five business days from the day we receive the parcel.' });
  const form = h('form', {
    class: 'stack',
    onsubmit: (/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      busy(/** @type {HTMLButtonElement} */ (e.submitter), () => json(form, { title: title.value, text: text.value, tags: tagsOf(form) }))
        .catch((err) => showProblems(form, err));
    },
  },
  at('/title', field('Title', title, 'Shown with the answers found in it.')),
  at('/text', field('Text', text, 'Plain text or Markdown; headings (# Like this) start sections.')),
  tagsField(),
  h('div', null, h('button', { type: 'submit' }, 'Add text')));
  return form;
}

/**
 * qaPanel adds questions with their answers, typed in rows; each pair
 * becomes one chunk.
 * @param {(form: HTMLFormElement, body: any) => Promise<void>} json
 */
function qaPanel(json) {
  const rows = h('tbody');
  const renumber = () => Array.from(rows.children).forEach((tr, i) => {
    tr.setAttribute('data-pointer', `/qa/${i}`);
    const [q, a] = tr.querySelectorAll('td.cell');
    q.setAttribute('data-pointer', `/qa/${i}/question`);
    a.setAttribute('data-pointer', `/qa/${i}/answer`);
    q.querySelector('textarea')?.setAttribute('aria-label', `Question ${i + 1}`);
    a.querySelector('textarea')?.setAttribute('aria-label', `Answer ${i + 1}`);
  });
  const row = () => {
    const tr = h('tr', { class: 'qa-pair' },
      h('td', { class: 'cell' }, h('textarea', { name: 'question', rows: 2, placeholder: 'Do you ship abroad?' })),
      h('td', { class: 'cell' }, h('textarea', { name: 'answer', rows: 2, placeholder: 'Yes, to every EU country.' })),
      h('td', null, h('button', {
        type: 'button', class: 'small ghost', 'aria-label': 'Remove this pair',
        onclick: () => { if (rows.children.length > 1) { tr.remove(); renumber(); } },
      }, '×')));
    rows.append(tr);
    renumber();
    return tr;
  };
  row();
  const form = h('form', {
    class: 'stack',
    onsubmit: (/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      const qa = Array.from(rows.children).map((tr) => {
        const [q, a] = /** @type {NodeListOf<HTMLTextAreaElement>} */ (tr.querySelectorAll('textarea'));
        return { question: q.value.trim(), answer: a.value.trim() };
      });
      busy(/** @type {HTMLButtonElement} */ (e.submitter), async () => {
        await json(form, { qa, tags: tagsOf(form) });
        mount(rows);
        row();
      }).catch((err) => showProblems(form, err));
    },
  },
  h('div', { class: 'field', 'data-pointer': '/qa' },
    h('div', { class: 'table-wrap' }, h('table', { class: 'params qa' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Question'), h('th', { scope: 'col' }, 'Answer'), h('th', null))), rows)),
    h('div', null, h('button', { type: 'button', class: 'small ghost', onclick: () => row().querySelector('textarea')?.focus() }, '+ Add a pair')),
    h('small', null, 'Each question is found with its answer; a bot quotes the answer.')),
  tagsField(),
  h('div', null, h('button', { type: 'submit' }, 'Add questions')));
  return form;
}
