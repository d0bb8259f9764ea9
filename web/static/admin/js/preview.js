// The preview chat: talk to any saved version before it goes live, or
// restart it on the editor's draft in one click (which saves the draft as
// a new, unpublished version: a conversation runs a version). Each reply
// says how long it took and its tokens; the sources it cites are listed
// under it. Replies stream over server-sent events; tool calls, their results,
// confirmations and client tool requests are drawn as they happen. The
// bot's text is Markdown, drawn by the renderer the widget uses, so the
// preview shows a reply as visitors will see it.

import '/markdown.js';
import { stream, api, tenantPath } from './api.js';
import { h, mount, json, busy } from './dom.js';

const { renderInto } = globalThis.Parley.markdown;

/** markdown draws text (all of the reply so far) into el, in one step. */
function markdown(el, text) {
  el.dataset.text = text;
  return renderInto(el, text);
}

/**
 * citeLink is where a citation points: its URL with the locator's place in
 * it (#page=3 for a PDF page, a heading's #anchor); '' without an http(s)
 * URL or a signed link to an uploaded file of this server
 * (/v1/knowledge/files/...). The widget links its footnotes the same way.
 * @param {{url?: string, locator?: string}} c
 */
function citeLink(c) {
  const url = c.url || '';
  if (url.startsWith('/v1/knowledge/files/')) return url;
  if (!/^https?:\/\//i.test(url)) return '';
  if (url.includes('#')) return url;
  for (const part of (c.locator || '').split(', ')) {
    if (part.startsWith('#')) return url + part;
    const page = /^pp?\. (\d+)/.exec(part);
    if (page) return url + '#page=' + page[1];
  }
  return url;
}

/**
 * cite shows citation c ({n, source, title, url, locator}) as a footnote
 * under the reply in el, once per number.
 * @param {HTMLElement} el
 * @param {{n: number, source: string, title: string, url?: string, locator?: string}} c
 */
function cite(el, c) {
  let list = el.nextElementSibling;
  if (!list || !list.classList.contains('sources')) {
    list = h('ol', { class: 'sources', 'aria-label': 'Sources' });
    el.after(list);
  }
  const n = String(Number(c.n));
  if (list.querySelector(`[data-n="${n}"]`)) return;
  const href = citeLink(c);
  const name = `[${n}] ${c.title || c.source}`;
  list.append(h('li', { 'data-n': n },
    href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, name) : h('span', null, name),
    c.locator ? h('span', { class: 'where' }, c.locator) : null));
}

/**
 * previewChat returns {el, setVersions, use} for bot slug of tenant.
 * tryDraft saves the editor's draft as a version and returns it.
 * @param {string} tenant
 * @param {string} slug
 * @param {() => Promise<{number: number}>} [tryDraft]
 */
export function previewChat(tenant, slug, tryDraft) {
  const select = h('select', { 'aria-label': 'Version to preview', onchange: () => reset() });
  const log = h('div', { class: 'chat-log', role: 'log', 'aria-live': 'polite' });
  const input = h('input', { type: 'text', name: 'message', placeholder: 'Say something to the bot…', autocomplete: 'off', 'aria-label': 'Message' });
  const send = h('button', { type: 'submit' }, 'Send');
  // stop shows while a reply streams: it stops the reply, keeping its text.
  const stop = h('button', { type: 'button', class: 'ghost', hidden: true, onclick: () => {
    stop.disabled = true;
    api('POST', tenantPath(tenant, 'dialogs', dialog.id, 'cancel'), {}).catch((err) => {
      stop.disabled = false;
      add(h('div', { class: 'msg error', role: 'alert' }, err.message));
    });
  } }, 'Stop');
  let dialog = null;
  let bubble = null; // the assistant reply being streamed
  let calls = {}; // tool call id -> its element
  let thought = null; // the <pre> of the model's thinking being streamed
  let started = 0; // when the turn being streamed was sent

  const add = (node) => {
    log.append(node);
    log.scrollTop = log.scrollHeight;
    return node;
  };
  const say = (who, text) => add(who === 'bot' ? markdown(h('div', { class: 'msg bot' }), text) : h('div', { class: 'msg ' + who }, text));
  const meta = (text) => add(h('div', { class: 'meta' }, text));

  function reset() {
    dialog = null;
    bubble = null;
    thought = null;
    calls = {};
    mount(log, h('div', { class: 'meta' }, `New conversation with version ${select.value || '—'}.`));
  }

  async function ensureDialog() {
    if (dialog) return dialog;
    dialog = await api('POST', tenantPath(tenant, 'bots', slug, 'dialogs'), { version: Number(select.value), user_id: 'admin-preview' });
    if (dialog.greeting) say('bot', dialog.greeting);
    return dialog;
  }

  const onEvent = (type, ev) => {
    switch (type) {
      case 'thinking_delta':
        // Extended thinking (llm.thinking_budget), folded away: it is for
        // the bot's author, not part of the answer.
        if (!thought) {
          thought = h('pre', null, '');
          add(h('details', { class: 'tool thinking' }, h('summary', null, 'Thinking'), thought));
        }
        thought.textContent += ev.text;
        break;
      case 'text_delta':
        thought = null;
        if (!bubble) bubble = say('bot', '');
        markdown(bubble, bubble.dataset.text + ev.text);
        log.scrollTop = log.scrollHeight;
        break;
      case 'citation':
        // A marker [n] of the streaming reply has just appeared.
        if (bubble) cite(bubble, ev);
        break;
      case 'tool_call':
        bubble = null;
        thought = null;
        calls[ev.id] = add(h('details', { class: 'tool' },
          h('summary', null, h('span', { class: 'tool-name' }, ev.name), ' called'),
          h('pre', null, json(ev.arguments))));
        break;
      case 'tool_result': {
        const el = calls[ev.id] || add(h('details', { class: 'tool' }, h('summary', null, ev.name)));
        el.classList.add(ev.is_error ? 'failed' : 'ok');
        el.querySelector('summary').append(` · ${ev.is_error ? 'failed' : 'done'} in ${ev.duration_ms} ms`);
        el.append(h('pre', null, json(ev.content)));
        break;
      }
      case 'confirmation_request':
        bubble = null;
        add(confirmation(ev));
        break;
      case 'client_tool_request':
        bubble = null;
        add(clientTools(ev.calls));
        break;
      case 'provider_switch':
        meta(`Switched model: ${ev.from} → ${ev.to}`);
        break;
      case 'error':
        add(h('div', { class: 'msg error', role: 'alert' }, ev.message));
        break;
      case 'done':
        bubble = null;
        if (ev.stop_reason === 'paused') meta('Waiting for the answer above to continue.');
        else if (ev.stop_reason && ev.stop_reason !== 'completed') meta(`Stopped: ${ev.stop_reason.replace(/_/g, ' ')}`);
        meta(`${ev.turns} turn${ev.turns === 1 ? '' : 's'} · ${took(performance.now() - started)} · ${ev.usage.input_tokens} in / ${ev.usage.output_tokens} out tokens`);
        break;
    }
  };

  // turn posts to a turn route and streams its events into the log.
  async function turn(path, body) {
    send.disabled = true;
    started = performance.now();
    stop.hidden = false;
    stop.disabled = false;
    const typing = add(h('div', { class: 'typing', 'aria-label': 'The bot is typing' }, h('span'), h('span'), h('span')));
    try {
      const queued = await stream(tenantPath(tenant, 'dialogs', dialog.id, path), body, (type, ev) => {
        typing.remove();
        onEvent(type, ev);
      });
      if (queued) meta('Queued behind the reply in progress.');
    } catch (err) {
      add(h('div', { class: 'msg error', role: 'alert' }, err.message));
    } finally {
      typing.remove();
      bubble = null;
      send.disabled = false;
      stop.hidden = true;
    }
  }

  function confirmation(ev) {
    const box = h('div', { class: 'ask' },
      h('p', null, 'The bot wants to run ', h('strong', null, ev.name), ':'),
      h('pre', null, json(ev.arguments)));
    const answer = (approved) => () => {
      box.querySelectorAll('button').forEach((b) => { b.disabled = true; });
      box.append(h('p', { class: 'muted' }, approved ? 'Approved.' : 'Declined.'));
      turn('confirmations', { id: ev.id, approved });
    };
    box.append(h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'small', onclick: answer(true) }, 'Approve'),
      h('button', { type: 'button', class: 'small ghost', onclick: answer(false) }, 'Decline')));
    return box;
  }

  function clientTools(list) {
    const fields = list.map((c) => ({ c, area: h('textarea', { rows: 2, 'aria-label': `Result of ${c.name}`, placeholder: '{"ok": true}' }) }));
    const form = h('form', {
      class: 'ask',
      onsubmit: (e) => {
        e.preventDefault();
        e.submitter.disabled = true;
        turn('tool-results', { results: fields.map(({ c, area }) => ({ id: c.id, content: area.value })) });
      },
    }, h('p', null, 'The bot asks the page to run client tools. Answer for the page:'),
    fields.map(({ c, area }) => h('div', { class: 'client-call' }, h('strong', null, c.name), h('pre', null, json(c.arguments)), area)),
    h('button', { type: 'submit', class: 'small' }, 'Send results'));
    return form;
  }

  /** use starts a new conversation with version n. */
  function use(n) {
    select.value = String(n);
    reset();
    input.focus();
  }

  const form = h('form', {
    class: 'composer',
    onsubmit: async (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text || !select.value) return;
      input.value = '';
      try {
        await ensureDialog();
      } catch (err) {
        add(h('div', { class: 'msg error', role: 'alert' }, err.message));
        return;
      }
      say('user', text);
      await turn('messages', { text });
    },
  }, input, send, stop);

  return {
    el: h('div', { class: 'preview' },
      h('div', { class: 'toolbar' },
        h('label', { class: 'inline' }, 'Version ', select),
        h('button', { type: 'button', class: 'small ghost', onclick: reset }, 'New conversation'),
        tryDraft ? h('button', {
          type: 'button', class: 'small try-draft', title: 'Save the editor\'s draft as a new version (not published) and talk to it',
          onclick: (e) => busy(e.target, async () => {
            const v = await tryDraft();
            use(v.number);
          }).catch((err) => add(h('div', { class: 'msg error', role: 'alert' }, err.message))),
        }, 'Restart on draft') : null),
      log, form),
    setVersions(versions, live) {
      const current = select.value;
      mount(select, [...versions].reverse().map((v) =>
        h('option', { value: v.number }, `v${v.number}${v.number === live ? ' (live)' : ' (draft)'}`)));
      if (current) select.value = current;
      if (!dialog) reset();
    },
    use,
  };
}

/** took words a reply's time: milliseconds under a second, else seconds. */
function took(/** @type {number} */ ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
