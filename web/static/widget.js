/*
 * Parley chat widget. A site embeds it with
 *
 *   <script src="https://parley.example.com/widget.js" data-key="pk_..."
 *     data-tenant="acme-outdoor" data-bot="support" async></script>
 *
 * Optional: data-user-token (the signed-in visitor's short-lived JWT, signed
 * by the site's backend; without one the visitor is anonymous), data-context
 * (a JSON object of the bot's "page" context variables), data-title,
 * data-color (a CSS colour), data-position (right or left), data-theme
 * (light or dark), data-avatar and data-logo (image addresses, https: or
 * the page's own origin), data-locale (en, de, fr, es, zh; by default the
 * browser's language). An invalid value is ignored with a console warning.
 * It draws a chat button and panel inside a shadow
 * root, so the host page's CSS cannot reach it, streams replies over
 * server-sent events read from fetch (EventSource cannot POST or send a key),
 * and keeps the dialog id in localStorage so a reload continues the
 * conversation. Replies are Markdown, drawn by /markdown.js from the same
 * server (never as HTML). Client tools are run by the page:
 *
 *   window.Parley = { onClientTool: async (name, args) => result };
 *
 * and the page may call window.Parley.open(), .close(), .send(text) and
 * .setUserToken(token) (a fresh token before the old one expires, or after
 * the visitor signs in or out; another user starts another dialog).
 *
 * A site with a Content-Security-Policy must allow this server's origin in
 * script-src (the scripts), connect-src (its API calls) and img-src (when
 * it sets data-avatar or data-logo); the widget needs no inline script or
 * style.
 *
 * No dependencies but markdown.js, no build step.
 */
(function () {
  'use strict';

  var script = /** @type {HTMLScriptElement|null} */ (document.currentScript || document.querySelector('script[src*="widget.js"][data-key]'));
  if (!script) return;
  var data = script.dataset;
  var server = new URL(script.src, location.href).origin;
  var t = translator(data.locale || navigator.language || 'en');
  var cfg = {
    key: data.key,
    tenant: data.tenant,
    bot: data.bot,
    userToken: data.userToken || '',
    title: data.title || t('title'),
    color: option('data-color', data.color, '#3557e0', function (v) { return !!(window.CSS && window.CSS.supports('color', v)); }),
    position: option('data-position', data.position, 'right', oneOf('right', 'left')),
    theme: option('data-theme', data.theme, 'light', oneOf('light', 'dark')),
    avatar: option('data-avatar', data.avatar, '', imageURL),
    logo: option('data-logo', data.logo, '', imageURL),
    // attach: the visitor may attach one image to a message; "off" for
    // bots whose model does not read images.
    attach: option('data-attach', data.attach, 'on', oneOf('on', 'off')) === 'on',
    server: server,
  };

  // option returns an attribute's value when valid, else the default, and
  // warns about an invalid one so the site's developer sees why.
  function option(name, value, dflt, valid) {
    if (value === undefined || value === '') return dflt;
    if (valid(value)) return valid(value) === true ? value : valid(value);
    console.warn('Parley widget: ignoring ' + name + '="' + value + '"');
    return dflt;
  }
  function oneOf() {
    var allowed = [].slice.call(arguments);
    return function (v) { return allowed.indexOf(v) >= 0; };
  }
  // imageURL accepts an https: address, or one on the page's own origin
  // or this server's, and returns it absolute; anything else (javascript:,
  // data:, plain http: to a third party) is refused.
  function imageURL(v) {
    var u;
    try { u = new URL(v, location.href); } catch (e) { return false; }
    if (u.protocol === 'https:' || u.origin === location.origin || u.origin === server) return u.href;
    return false;
  }

  // IMAGE_TYPES are the pictures the server takes; MAX_IMAGE_BYTES its
  // default limit (PARLEY_MAX_IMAGE_BYTES), checked here to save an upload.
  var IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
  var MAX_IMAGE_BYTES = 5 << 20;

  /** @type {ParleyGlobal} */
  var parley = (window.Parley = window.Parley || {});
  if (parley.mounted) return; // the snippet was pasted twice
  parley.mounted = true;
  if (!cfg.key || !cfg.tenant || !cfg.bot) {
    console.error('Parley widget: data-key, data-tenant and data-bot are required');
    return;
  }
  var context;
  try {
    context = script.dataset.context ? JSON.parse(script.dataset.context) : undefined;
  } catch (e) {
    console.error('Parley widget: data-context is not valid JSON', e);
  }

  // The dialog is remembered per signed-in user, so a visitor who signs in
  // or out on a shared browser does not continue someone else's dialog.
  var STORE_PREFIX = 'parley.dialog.' + cfg.tenant + '.' + cfg.bot;
  var STORE = storeKey(cfg.userToken);

  // storeKey names where the dialog of token's user is kept. The token's
  // sub is read, not verified: the server verifies; this only separates
  // users in this browser.
  function storeKey(token) {
    var sub = '';
    try {
      var payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      sub = JSON.parse(atob(payload)).sub || '';
    } catch (e) { /* anonymous, or not a JWT: the server will say so */ }
    return sub ? STORE_PREFIX + '.user.' + sub : STORE_PREFIX;
  }

  // markdown.js, from this server, draws the bot's replies; the
  // conversation starts once it has loaded, or failed to (then replies
  // show as plain text).
  var markdownReady = new Promise(function (resolve) {
    if (parley.markdown) return resolve();
    var s = document.createElement('script');
    s.src = cfg.server + '/markdown.js';
    s.async = true;
    s.onload = s.onerror = function () { resolve(); };
    (document.head || document.documentElement).appendChild(s);
  });
  var RETRIES = 2;
  // maxChars is the longest message the server takes, in characters (Unicode
  // code points): the dialog says it (max_message_chars, docs/api.md); this
  // is the same number until it has.
  var maxChars = 32768;

  var CSS = [
    ':host { all: initial; }',
    '* { box-sizing: border-box; }',
    '.root { --bg: #fff; --log: #f7f8fa; --fg: #1b2130; --line: #e3e6ec; --muted: #6b7585; --code: #eef1f5; position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }',
    '.root.dark { --bg: #1d2230; --log: #151924; --fg: #e6e9f0; --line: #343b4d; --muted: #9aa3b5; --code: #2a3142; }',
    '.root.left { right: auto; left: 20px; }',
    '.launcher { width: 56px; height: 56px; border-radius: 50%; border: 0; background: var(--c); color: #fff; cursor: pointer; box-shadow: 0 6px 20px rgba(20,30,60,.25); display: grid; place-items: center; margin-left: auto; }',
    '.left .launcher { margin-left: 0; }',
    '.launcher svg { width: 26px; height: 26px; }',
    '.launcher:focus-visible, button:focus-visible, textarea:focus-visible { outline: 3px solid #9db2ff; outline-offset: 2px; }',
    '.panel { position: absolute; right: 0; bottom: 72px; width: min(370px, calc(100vw - 40px)); height: min(540px, calc(100vh - 110px)); background: var(--bg); border-radius: 14px; box-shadow: 0 12px 40px rgba(20,30,60,.25); display: flex; flex-direction: column; overflow: hidden; }',
    '.left .panel { right: auto; left: 0; }',
    '.panel[hidden] { display: none; }',
    '.head { background: var(--c); color: #fff; padding: 14px 16px; display: flex; align-items: center; gap: 10px; }',
    '.head strong { font-size: 16px; flex: 1; }',
    '.head .logo { height: 28px; max-width: 96px; object-fit: contain; }',
    '.head button { background: transparent; border: 0; color: #fff; font-size: 22px; line-height: 1; cursor: pointer; padding: 0 4px; }',
    '.log { flex: 1; overflow-y: auto; padding: 14px; display: flex; flex-direction: column; gap: 8px; background: var(--log); }',
    '.msg { max-width: 85%; padding: 8px 12px; border-radius: 14px; white-space: pre-wrap; word-wrap: break-word; }',
    '.user { align-self: flex-end; background: var(--c); color: #fff; border-bottom-right-radius: 4px; }',
    '.bot { align-self: flex-start; background: var(--bg); border: 1px solid var(--line); border-bottom-left-radius: 4px; white-space: normal; }',
    '.row { align-self: flex-start; display: flex; gap: 8px; align-items: flex-end; max-width: 92%; }',
    '.row .msg { max-width: none; }',
    '.avatar { width: 28px; height: 28px; border-radius: 50%; object-fit: cover; flex: none; }',
    '.bot > :first-child { margin-top: 0; } .bot > :last-child { margin-bottom: 0; }',
    '.bot p, .bot ul, .bot ol, .bot pre, .bot blockquote { margin: 0 0 8px; }',
    '.bot h1, .bot h2, .bot h3, .bot h4, .bot h5, .bot h6 { margin: 4px 0 6px; font-size: 1.05em; line-height: 1.3; }',
    '.bot h1 { font-size: 1.2em; } .bot h2 { font-size: 1.12em; }',
    '.bot ul, .bot ol { padding-left: 20px; }',
    '.bot code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); border-radius: 4px; padding: 1px 4px; }',
    '.bot pre { background: var(--code); border-radius: 8px; padding: 8px 10px; overflow-x: auto; white-space: pre; }',
    '.bot pre code { background: none; padding: 0; }',
    '.bot blockquote { border-left: 3px solid var(--line); padding-left: 10px; color: var(--muted); }',
    '.bot a { color: var(--c); text-decoration: underline; }',
    '.dark .bot a { color: inherit; }',
    '.bot hr { border: 0; border-top: 1px solid var(--line); }',
    '.error { align-self: stretch; background: #fdeceb; color: #a11d12; border: 1px solid #f3c3bd; font-size: 14px; }',
    '.error button, .ask button { margin-top: 6px; margin-right: 6px; }',
    '.note { align-self: center; font-size: 12px; color: var(--muted); }',
    '.msg.operator { align-self: flex-start; background: var(--code); border-left: 3px solid var(--c); }',
    '.msg.operator .who { display: block; font-size: 11px; color: var(--muted); margin-bottom: 2px; }',
    '.ask { align-self: stretch; background: #fff7e6; color: #1b2130; border: 1px solid #f0d9a8; border-radius: 10px; padding: 8px 12px; font-size: 14px; }',
    '.btn { font: inherit; font-size: 13px; font-weight: 600; border-radius: 6px; padding: 4px 12px; cursor: pointer; border: 1px solid var(--c); background: var(--c); color: #fff; }',
    '.btn.ghost { background: transparent; color: var(--c); }',
    '.btn:disabled { opacity: .5; cursor: default; }',
    '.typing { align-self: flex-start; display: flex; gap: 4px; padding: 10px 12px; background: var(--bg); border: 1px solid var(--line); border-radius: 14px; }',
    '.typing span { width: 6px; height: 6px; border-radius: 50%; background: #9aa5b4; animation: blink 1.2s infinite ease-in-out; }',
    '.typing span:nth-child(2) { animation-delay: .2s; } .typing span:nth-child(3) { animation-delay: .4s; }',
    '@keyframes blink { 0%, 80%, 100% { opacity: .25; } 40% { opacity: 1; } }',
    '@media (prefers-reduced-motion: reduce) { .typing span { animation: none; } }',
    '.typing em { font-style: normal; font-size: 12px; color: var(--muted); margin-left: 6px; align-self: center; }',
    '.seen { align-self: flex-end; font-size: 11px; color: var(--muted); margin-top: -6px; }',
    'form { display: flex; gap: 8px; padding: 10px; border-top: 1px solid var(--line); background: var(--bg); }',
    'textarea { flex: 1; resize: none; font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 10px; padding: 8px 10px; height: 40px; }',
    'form .btn { padding: 0 16px; border-radius: 10px; }',
    'form .attach { font: inherit; font-size: 18px; font-weight: 600; padding: 0 10px; border-radius: 10px; cursor: pointer; border: 1px solid var(--c); background: transparent; color: var(--c); }',
    '.chip { display: flex; align-items: center; gap: 6px; margin: 0 10px; font-size: 12px; color: var(--muted); }',
    '.chip img, .msg.user img { max-width: 64px; max-height: 64px; border-radius: 6px; display: block; }',
    '.chip button { font: inherit; border: 0; background: transparent; color: var(--muted); cursor: pointer; }',
    '.count { margin: 0 10px; text-align: right; font-size: 12px; color: var(--muted); }',
    '.count.over { color: #a11d12; font-weight: 600; }',
    '.foot { text-align: center; font-size: 11px; color: var(--muted); padding: 0 0 6px; background: var(--bg); }',
    '.rate { align-self: flex-start; display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin: -4px 0 0 4px; font-size: 12px; color: var(--muted); }',
    '.rate .thumb { font: inherit; font-size: 14px; line-height: 1; background: transparent; border: 1px solid transparent; border-radius: 6px; padding: 2px 5px; cursor: pointer; opacity: .55; }',
    '.rate .thumb:hover, .rate .thumb[aria-pressed="true"] { opacity: 1; border-color: var(--line); background: var(--bg); }',
    '.rate input { font: inherit; font-size: 12px; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 3px 6px; width: 190px; }',
    '.rate .btn { font-size: 12px; padding: 2px 8px; }',
    '.sources { align-self: flex-start; margin: -4px 0 0 4px; padding: 0; list-style: none; font-size: 12px; color: var(--muted); max-width: 85%; }',
    '.sources li { margin: 2px 0; overflow-wrap: anywhere; }',
    '.sources .source { color: inherit; font-weight: 600; } .sources .where { margin-left: 6px; }',
    '.rate form { display: flex; gap: 4px; padding: 0; border: 0; background: none; }',
  ].join('\n');

  // --- DOM ---------------------------------------------------------------

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  var host = el('div');
  host.id = 'parley-widget';
  var shadow = host.attachShadow({ mode: 'open' });
  if (shadow.adoptedStyleSheets !== undefined && window.CSSStyleSheet && CSSStyleSheet.prototype.replaceSync) {
    // A constructed sheet is not inline CSS, so a host page's strict CSP
    // (style-src without 'unsafe-inline') does not block it.
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    shadow.adoptedStyleSheets = [sheet];
  } else {
    shadow.appendChild(el('style', null, CSS));
  }
  var root = el('div', 'root ' + cfg.theme + ' ' + cfg.position);
  root.lang = t.locale;
  root.style.setProperty('--c', cfg.color);
  var launcher = el('button', 'launcher');
  launcher.type = 'button';
  launcher.setAttribute('aria-label', t('open'));
  launcher.setAttribute('aria-expanded', 'false');
  launcher.appendChild(icon());
  var panel = el('div', 'panel');
  panel.hidden = true;
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-label', cfg.title);
  var head = el('div', 'head');
  if (cfg.logo) head.appendChild(image('logo', cfg.logo));
  head.appendChild(el('strong', null, cfg.title));
  var closeBtn = el('button', null, '×');
  closeBtn.type = 'button';
  closeBtn.setAttribute('aria-label', t('close'));
  head.appendChild(closeBtn);
  var log = el('div', 'log');
  log.setAttribute('role', 'log');
  log.setAttribute('aria-live', 'polite');
  var form = el('form');
  var input = el('textarea');
  input.rows = 1;
  input.placeholder = t('placeholder');
  input.setAttribute('aria-label', t('message'));
  var sendBtn = el('button', 'btn', t('send'));
  sendBtn.type = 'submit';
  // stopBtn replaces Send while a reply streams: it stops the reply
  // (POST .../cancel); what was written so far stays.
  var stopBtn = el('button', 'btn ghost', t('stop'));
  stopBtn.type = 'button';
  stopBtn.hidden = true;
  stopBtn.setAttribute('aria-label', t('stopReply'));
  // One image may wait to go with the next message: picked with the
  // attach button, shown in chip until it is sent or removed.
  var fileInput = el('input');
  fileInput.type = 'file';
  fileInput.accept = IMAGE_TYPES.join(',');
  fileInput.hidden = true;
  var attachBtn = el('button', 'attach', '+');
  attachBtn.type = 'button';
  attachBtn.setAttribute('aria-label', t('attach'));
  attachBtn.title = t('attach');
  attachBtn.hidden = !cfg.attach;
  var chip = el('div', 'chip');
  chip.hidden = true;
  // count shows how long the message is once it nears the limit.
  var count = el('div', 'count');
  count.hidden = true;
  count.setAttribute('aria-live', 'polite');
  form.appendChild(fileInput);
  form.appendChild(attachBtn);
  form.appendChild(input);
  form.appendChild(sendBtn);
  form.appendChild(stopBtn);
  panel.appendChild(head);
  panel.appendChild(log);
  panel.appendChild(chip);
  panel.appendChild(count);
  panel.appendChild(form);
  panel.appendChild(el('div', 'foot', t('powered')));
  root.appendChild(panel);
  root.appendChild(launcher);
  shadow.appendChild(root);

  function icon() {
    var ns = 'http://www.w3.org/2000/svg';
    var svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    var p = document.createElementNS(ns, 'path');
    p.setAttribute('fill', 'currentColor');
    p.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z');
    svg.appendChild(p);
    return svg;
  }

  // image is a decorative picture from a validated address: it sends no
  // Referer, and a broken one hides instead of showing a broken icon.
  function image(cls, src) {
    var img = el('img', cls);
    img.alt = '';
    img.referrerPolicy = 'no-referrer';
    img.addEventListener('error', function () { img.hidden = true; });
    img.src = src;
    return img;
  }

  // add appends a finished node to the log (callers fill it first: the
  // log scrolls to what it holds now). It follows the conversation only
  // for a visitor already at its end: one who scrolled up to read stays
  // where they are. force scrolls anyway (the visitor's own message).
  function add(node, force) {
    var follow = force || atEnd();
    log.appendChild(node);
    if (follow) toEnd();
    return node;
  }
  function atEnd() { return log.scrollHeight - log.scrollTop - log.clientHeight < 24; }
  function toEnd() { log.scrollTop = log.scrollHeight; }
  // say adds a message: the visitor's as plain text, the bot's rendered
  // from Markdown (paint), beside the avatar when there is one.
  function say(who, text) {
    if (who !== 'bot') return add(el('div', 'msg ' + who, text), who === 'user');
    var bubbleEl = el('div', 'msg bot');
    paint(bubbleEl, text);
    if (!cfg.avatar) return add(bubbleEl);
    var row = el('div', 'row');
    row.appendChild(image('avatar', cfg.avatar));
    row.appendChild(bubbleEl);
    add(row);
    return bubbleEl;
  }
  // paint draws a bot message's Markdown into el, replacing what it held in
  // one step, so a streaming reply re-renders without flicker. Until
  // markdown.js has loaded (or if it cannot), the text shows as it is.
  function paint(target, text) {
    target.dataset.text = text;
    var md = parley.markdown;
    if (md) md.renderInto(target, text);
    else target.textContent = text;
  }
  // citeLink is where a citation points: its URL with the locator's place
  // in it (#page=3 for a PDF page, a heading's #anchor); '' without an
  // http(s) URL, so a source's address can never run script. An uploaded
  // file's signed link (/v1/knowledge/files/...) is this server's.
  function citeLink(c) {
    var url = c.url || '';
    if (url.indexOf('/v1/knowledge/files/') === 0) return cfg.server + url;
    if (!/^https?:\/\//i.test(url)) return '';
    if (url.indexOf('#') >= 0) return url;
    var parts = (c.locator || '').split(', ');
    for (var i = 0; i < parts.length; i++) {
      if (parts[i].charAt(0) === '#') return url + parts[i];
      var page = /^pp?\. (\d+)/.exec(parts[i]);
      if (page) return url + '#page=' + page[1];
    }
    return url;
  }
  // footnotes holds the list of sources under each cited bot reply.
  var footnotes = new WeakMap();
  // cite shows citation c ({n, source, title, url, locator}) as a
  // footnote under the bot's reply in bubbleEl, once per number.
  function cite(bubbleEl, c) {
    var list = footnotes.get(bubbleEl);
    if (!list) {
      list = el('ol', 'sources');
      list.setAttribute('aria-label', t('sources'));
      var anchor = bubbleEl.parentNode && bubbleEl.parentNode.className === 'row' ? bubbleEl.parentNode : bubbleEl;
      anchor.after(list);
      footnotes.set(bubbleEl, list);
    }
    if (list.querySelector('[data-n="' + Number(c.n) + '"]')) return;
    var item = el('li');
    item.setAttribute('data-n', String(Number(c.n)));
    var href = citeLink(c);
    var name = el(href ? 'a' : 'span', 'source', '[' + c.n + '] ' + (c.title || c.source || ''));
    if (name instanceof HTMLAnchorElement) {
      name.href = href;
      name.target = '_blank';
      name.rel = 'noopener noreferrer';
    }
    item.appendChild(name);
    if (c.locator) item.appendChild(el('span', 'where', c.locator));
    list.appendChild(item);
  }
  // rateable puts thumbs up and down under the bot's reply in bubbleEl
  // (stored as messageId): a click rates it, another click changes the
  // rating; thumbs down offers a comment. current is the rating it has.
  function rateable(bubbleEl, messageId, current) {
    if (!messageId || bubbleEl.dataset.rated !== undefined) return;
    bubbleEl.dataset.rated = current || '';
    var box = el('div', 'rate');
    box.setAttribute('data-message', messageId);
    var thumbs = {};
    [['up', '👍', t('rateUp')], ['down', '👎', t('rateDown')]].forEach(function (r) {
      var b = el('button', 'thumb', r[1]);
      b.type = 'button';
      b.setAttribute('aria-label', r[2]);
      b.title = r[2];
      b.setAttribute('aria-pressed', String(current === r[0]));
      b.setAttribute('data-rating', r[0]);
      b.addEventListener('click', function () { rate(r[0], ''); });
      thumbs[r[0]] = b;
      box.appendChild(b);
    });
    var status = el('span', 'rate-status');
    status.setAttribute('role', 'status');
    box.appendChild(status);
    var anchor = bubbleEl.parentNode && bubbleEl.parentNode.className === 'row' ? bubbleEl.parentNode : bubbleEl;
    (footnotes.get(bubbleEl) || anchor).after(box);

    function rate(rating, comment) {
      return json('POST', path('dialogs', dialogId, 'messages', messageId, 'feedback'), { rating: rating, comment: comment })
        .then(function (f) {
          bubbleEl.dataset.rated = f.rating;
          Object.keys(thumbs).forEach(function (k) { thumbs[k].setAttribute('aria-pressed', String(k === f.rating)); });
          status.textContent = t('rateThanks');
          var old = box.querySelector('form');
          if (old) old.remove();
          if (rating === 'down' && !comment) askComment();
        }, function (err) { status.textContent = humanError(err); });
    }
    function askComment() {
      var f = el('form');
      var why = el('input');
      why.maxLength = 2000;
      why.placeholder = t('rateWhy');
      why.setAttribute('aria-label', t('rateWhy'));
      var go = el('button', 'btn', t('rateSend'));
      go.type = 'submit';
      f.appendChild(why);
      f.appendChild(go);
      f.addEventListener('submit', function (e) {
        e.preventDefault();
        if (why.value.trim()) rate('down', why.value.trim());
      });
      box.appendChild(f);
    }
  }
  function note(text) { return add(el('div', 'note', text)); }
  // askRating asks the visitor, once a dialog has ended, how it went: one
  // to five stars, sent as the dialog's rating (POST .../rating), which
  // counts towards the bot's satisfaction score (docs/insights.md).
  function askRating(endedId) {
    if (!endedId) return;
    var box = el('div', 'rate stars');
    box.setAttribute('data-dialog', endedId);
    box.appendChild(el('span', '', t('rateDialog')));
    var status = el('span', 'rate-status');
    status.setAttribute('role', 'status');
    [1, 2, 3, 4, 5].forEach(function (n) {
      var b = el('button', 'thumb', '★');
      b.type = 'button';
      b.setAttribute('aria-label', t('rateStars', n));
      b.title = t('rateStars', n);
      b.setAttribute('data-stars', String(n));
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('click', function () {
        json('POST', path('dialogs', endedId, 'rating'), { rating: n }).then(function () {
          box.querySelectorAll('button').forEach(function (o) {
            o.setAttribute('aria-pressed', String(Number(o.getAttribute('data-stars')) <= n));
          });
          status.textContent = t('rateThanks');
        }, function (err) { status.textContent = humanError(err); });
      });
      box.appendChild(b);
    });
    box.appendChild(status);
    add(box);
  }
  function button(text, ghost, onClick) {
    var b = el('button', ghost ? 'btn ghost' : 'btn', text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function showError(message, retry) {
    var box = el('div', 'msg error', message);
    box.setAttribute('role', 'alert');
    if (retry) {
      box.appendChild(el('br'));
      box.appendChild(button(t('retry'), false, function () { box.remove(); retry(); }));
    }
    add(box);
  }

  // --- API ---------------------------------------------------------------

  function ApiError(status, body) {
    var e = (body && body.error) || {};
    this.status = status;
    this.code = e.code || 'http_' + status;
    this.message = e.message || 'the chat server answered ' + status;
  }

  function path() {
    var parts = ['v1', 'tenants', cfg.tenant].concat([].slice.call(arguments));
    return cfg.server + '/' + parts.map(encodeURIComponent).join('/');
  }

  function request(method, url, body, accept, idemKey, signal) {
    var headers = { 'Authorization': 'Bearer ' + cfg.key, 'Accept': accept || 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (cfg.userToken) headers['X-Parley-User-Token'] = cfg.userToken;
    if (idemKey) headers['Idempotency-Key'] = idemKey;
    // credentials: 'omit': the key is the credential; never send cookies.
    return fetch(url, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', mode: 'cors', signal: signal })
      .then(function (res) {
        if (res.ok) return res;
        return res.json().catch(function () { return null; }).then(function (b) { throw new ApiError(res.status, b); });
      });
  }

  function json(method, url, body) {
    return request(method, url, body).then(function (res) { return res.json(); });
  }

  // retryable: a network failure (fetch rejects with TypeError), a 5xx or a 429.
  function retryable(err) {
    return !(err instanceof ApiError) || err.status >= 500 || err.status === 429;
  }

  function humanError(err) {
    if (!(err instanceof ApiError)) return t('offline');
    if (err.status === 403) return t('refused', err.message);
    if (err.status === 429) return t('busy');
    return t('failed', err.message);
  }

  // readEvents parses a server-sent event stream from a fetch body.
  function readEvents(res, onEvent) {
    var reader = res.body.getReader();
    var decoder = new TextDecoder();
    var buf = '';
    function frame(text) {
      var type = '', data = [];
      text.split(/\r?\n/).forEach(function (line) {
        if (line.indexOf('event:') === 0) type = line.slice(6).trim();
        else if (line.indexOf('data:') === 0) data.push(line.slice(5).replace(/^ /, ''));
      });
      if (!type || !data.length) return;
      var ev;
      try { ev = JSON.parse(data.join('\n')); } catch (e) { return; }
      onEvent(type, ev);
    }
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) {
          if (buf.trim()) frame(buf);
          return;
        }
        buf += decoder.decode(r.value, { stream: true });
        var m;
        while ((m = /\r?\n\r?\n/.exec(buf))) {
          frame(buf.slice(0, m.index));
          buf = buf.slice(m.index + m[0].length);
        }
        return pump();
      });
    }
    return pump();
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return String(Date.now()) + Math.random().toString(16).slice(2);
  }

  // --- conversation ----------------------------------------------------------

  var dialogId = localStorage.getItem(STORE);
  var started = null; // the promise of the dialog, once opened
  var bubble = null;
  var busy = false;

  function start() {
    if (started) return started;
    started = markdownReady.then(function () { return dialogId ? resume() : create(); }).catch(function (err) {
      started = null;
      throw err;
    });
    return started;
  }

  function create() {
    var body = {};
    if (context) body.context = context;
    return json('POST', path('bots', cfg.bot, 'dialogs'), body).then(function (d) {
      limit(d.max_message_chars);
      dialogId = d.id;
      localStorage.setItem(STORE, d.id);
      if (d.greeting) say('bot', d.greeting);
      lastSeq = 0;
      readWanted = readSent = readUpTo = 0;
      answered();
      unfollow();
    });
  }

  // --- the live stream ---------------------------------------------------------
  // What the visitor did not ask for in a request of this page: a person's
  // messages while the dialog is handed off, and its handoff status. The
  // widget follows its dialog only from a handoff until the dialog is back
  // with the bot (its own requests carry the bot's replies), so a site's
  // idle visitors hold no stream. A page reloaded while the bot was
  // answering follows it too, until the reply is stored (awaitReply). The
  // stream resumes after the last message seq the page drew (a reload draws
  // the transcript first) and reconnects with a growing pause after a
  // failure.

  var lastSeq = 0;
  var live = null; // { dialog, stop }: the stream being followed
  var liveStatus = null, liveOperator = '';
  var shown = {}; // ids of operator messages on screen
  var waitingNoted = false, typingTimer = null;
  // handedOff says once per handoff, however it is learnt (the reply's
  // done event or the stream), that a person is on the way, and follows
  // the dialog until it is back with the bot.
  function handedOff() {
    follow();
    if (waitingNoted) return;
    waitingNoted = true;
    note(t('handoff'));
  }
  function sayOperator(m) {
    if (shown[m.id]) return;
    shown[m.id] = true;
    var box = el('div', 'msg operator');
    box.appendChild(el('span', 'who', m.author || ''));
    box.appendChild(document.createTextNode(m.text));
    add(box);
    markRead(m.seq);
  }

  // --- typing and read marks ---------------------------------------------------
  // While a person answers, each side sees the other write and read
  // (docs/api.md, "Typing and read marks"): the visitor's typing is sent at
  // most every TYPING_EVERY ms, an operator's shows until TYPING_FOR ms
  // pass without another; the operator's messages count as read once they
  // are on screen with the chat open, and the visitor's own messages say
  // "Read" up to the newest the operator has seen.
  var TYPING_EVERY = 3000, TYPING_FOR = 6000;
  var typedAt = 0;
  function typed() {
    if (liveStatus !== 'handoff' || !dialogId || Date.now() - typedAt < TYPING_EVERY) return;
    typedAt = Date.now();
    request('POST', path('dialogs', dialogId, 'typing'), {}).catch(function () {});
  }
  var readWanted = 0, readSent = 0;
  function markRead(seq) {
    readWanted = Math.max(readWanted, seq || 0);
    if (!dialogId || panel.hidden || document.hidden || readWanted <= readSent) return;
    readSent = readWanted;
    request('POST', path('dialogs', dialogId, 'read'), { seq: readSent }).catch(function () { readSent = 0; });
  }
  document.addEventListener('visibilitychange', function () { markRead(0); });
  // sent are the visitor's message bubbles on screen, with their seq once
  // the server has said it; readUpTo the operators' read mark.
  var sent = [], readUpTo = 0, seenMark = null;
  function numbered(m) {
    if (!m || m.kind !== 'user' || !m.seq) return;
    if (sent.some(function (b) { return b.seq === m.seq; })) return;
    for (var i = 0; i < sent.length; i++) {
      if (!sent[i].seq) { sent[i].seq = m.seq; break; }
    }
    drawRead();
  }
  function drawRead() {
    if (seenMark) seenMark.remove();
    seenMark = null;
    var read = sent.filter(function (b) { return b.seq && b.seq <= readUpTo && b.el.isConnected; });
    if (!read.length) return;
    seenMark = el('div', 'seen', t('read'));
    read[read.length - 1].el.insertAdjacentElement('afterend', seenMark);
  }
  // answering says the page waits for a reply it did not ask for itself:
  // it was reloaded while the bot answered. As during its own turn, the
  // dots show and Send waits; the reply comes from the live stream.
  var answering = false;
  // replies are the bot's message bubbles on screen by message id, so a
  // reply the stream brings is drawn once, over its text so far if any.
  var replies = {};
  function awaitReply() {
    answering = true;
    busy = true;
    canSend();
    showTyping();
    follow();
  }
  // answered ends the wait, and the stream with it unless a person has
  // the dialog.
  function answered() {
    if (!answering) return;
    answering = false;
    busy = false;
    canSend();
    hideTyping();
    if (liveStatus !== 'handoff') unfollow();
  }
  // replied draws a reply the stream brings while the page waits for it.
  // A reply that calls tools is not the last word: another follows, or
  // the dialog pauses for the visitor (a confirmation, a client tool).
  function replied(m) {
    if (m.text) {
      var shown = replies[m.id];
      if (!shown) shown = replies[m.id] = say('bot', m.text);
      else if (shown.dataset.text !== m.text) paint(shown, m.text);
      (m.citations || []).forEach(function (c) { cite(shown, c); });
      if (m.status === 'complete') rateable(shown, m.id);
    }
    var calls = Array.isArray(m.content) && m.content.some(function (b) { return b.type === 'tool_use'; });
    if (!calls) answered();
  }
  function follow() {
    if (!dialogId || (live && live.dialog === dialogId)) return;
    unfollow();
    var mine = live = { dialog: dialogId, stop: new AbortController() };
    var wait = 1000;
    function connect() {
      if (live !== mine) return;
      var url = path('dialogs', mine.dialog, 'events') + '?after=' + lastSeq;
      var refused = false;
      request('GET', url, undefined, 'text/event-stream', null, mine.stop.signal).then(function (res) {
        wait = 1000;
        return readEvents(res, onLive);
      }).catch(function (err) {
        // A refusal of the key, the origin or the user, or a dialog
        // erased, will not change by retrying; anything else (a network
        // failure, a 5xx, a 409 or 429) may, and is tried again.
        refused = err instanceof ApiError && [400, 401, 403, 404].indexOf(err.status) >= 0;
      }).then(function () {
        if (refused || live !== mine) return;
        setTimeout(connect, wait);
        wait = Math.min(wait * 2, 30000);
      });
    }
    connect();
  }
  function unfollow() {
    if (live) live.stop.abort();
    live = null;
  }
  function onLive(type, ev) {
    switch (type) {
      case 'operator_message':
        hideTyping();
        sayOperator(ev.message);
        lastSeq = Math.max(lastSeq, ev.message.seq);
        break;
      case 'message':
        lastSeq = Math.max(lastSeq, ev.message.seq);
        numbered(ev.message);
        if (answering && ev.message.kind === 'assistant') replied(ev.message);
        break;
      case 'typing':
        if (ev.who !== 'operator') break;
        showTyping(ev.name ? t('operatorTyping', ev.name) : '');
        clearTimeout(typingTimer);
        typingTimer = setTimeout(function () { if (!busy) hideTyping(); }, TYPING_FOR);
        break;
      case 'read':
        if (ev.who !== 'operator') break;
        readUpTo = Math.max(readUpTo, ev.seq);
        drawRead();
        break;
      case 'handoff':
        var was = liveStatus, wasOperator = liveOperator;
        liveStatus = ev.status;
        liveOperator = ev.operator || '';
        // A dialog stays active while the reply the page waits for is
        // written; any other status ends the wait (paused, it asks the
        // visitor first).
        if (answering && ev.status === 'active') break;
        if (answering && ev.status === 'paused') {
          json('GET', path('dialogs', dialogId)).then(function (d) { pending(d.pending); }, function () {});
        }
        answered();
        if (ev.status === 'handoff' && !liveOperator) handedOff();
        if (ev.status === 'handoff' && liveOperator && liveOperator !== wasOperator) note(t('joined', liveOperator));
        if (ev.status === 'handoff') break;
        waitingNoted = false;
        unfollow();
        if (ev.status === 'active' && was === 'handoff') note(t('back'));
        if (ev.status === 'closed' && was) {
          note(t('ended'));
          askRating(dialogId);
        }
        break;
    }
  }

  function resume() {
    return json('GET', path('dialogs', dialogId)).then(function (d) {
      limit(d.max_message_chars);
      if (d.status === 'closed') return forget();
      var rated = {};
      (d.feedback || []).forEach(function (f) { rated[f.message_id] = f.rating; });
      // writing: a reply is still being written, so the stream must
      // start before it to bring it once stored.
      var writing = false;
      (d.messages || []).forEach(function (m) {
        if (m.kind === 'operator') sayOperator(m);
        else if ((m.role === 'user' || m.role === 'assistant') && m.text) {
          var shown = say(m.role === 'user' ? 'user' : 'bot', m.text);
          if (m.role === 'user') sent.push({ el: shown, seq: m.seq || 0 });
          else replies[m.id] = shown;
          (m.citations || []).forEach(function (c) { cite(shown, c); });
          if (m.role === 'assistant' && m.status === 'complete') rateable(shown, m.id, rated[m.id]);
        }
        writing = writing || m.status === 'streaming';
        if (!writing) lastSeq = Math.max(lastSeq, m.seq || 0);
      });
      if (d.status === 'handoff') follow(); // the stream says who is there
      else if (writing) awaitReply();
      pending(d.pending);
    }, function (err) {
      if (err instanceof ApiError && err.status === 404) return forget();
      throw err;
    });
  }

  // pending asks the visitor about the calls a paused dialog waits for,
  // and runs its client tools in the page.
  function pending(calls) {
    (calls || []).forEach(function (c) {
      if (c.kind === 'confirmation') ask({ id: c.id, name: c.name, arguments: c.arguments });
    });
    var client = (calls || []).filter(function (c) { return c.kind === 'client'; });
    if (client.length) runClientTools(client);
  }

  function forget() {
    localStorage.removeItem(STORE);
    dialogId = null;
    return create();
  }

  function onEvent(type, ev) {
    switch (type) {
      case 'text_delta':
        hideTyping();
        var following = atEnd();
        if (!bubble) bubble = say('bot', '');
        paint(bubble, bubble.dataset.text + ev.text);
        if (following) toEnd();
        break;
      case 'tool_call':
        bubble = null;
        break;
      case 'message':
        numbered(ev.message);
        // The stored reply the bubble streamed: now it can be rated.
        if (bubble && ev.message && ev.message.kind === 'assistant' && ev.message.text) {
          replies[ev.message.id] = bubble;
          var cited = bubble;
          (ev.message.citations || []).forEach(function (c) { cite(cited, c); });
          rateable(bubble, ev.message.id);
        }
        break;
      case 'citation':
        // A marker [n] of the streaming reply has just appeared.
        if (bubble) cite(bubble, ev);
        break;
      case 'confirmation_request':
        hideTyping();
        bubble = null;
        ask(ev);
        break;
      case 'client_tool_request':
        bubble = null;
        runClientTools(ev.calls);
        break;
      case 'error':
        hideTyping();
        showError(ev.retryable ? t('cut') : ev.message);
        break;
      case 'done':
        bubble = null;
        if (ev.stop_reason === 'handoff') handedOff();
        if (ev.stop_reason === 'canceled') note(t('stopped'));
        break;
    }
  }

  var typing = null;
  // showTyping shows the dots, with who writes when it is a person.
  function showTyping(who) {
    if (typing && typing.dataset.who === (who || '')) return;
    hideTyping();
    typing = el('div', 'typing');
    typing.dataset.who = who || '';
    typing.setAttribute('aria-label', who || t('typing'));
    for (var i = 0; i < 3; i++) typing.appendChild(el('span'));
    if (who) typing.appendChild(el('em', null, who));
    add(typing);
  }
  function hideTyping() {
    if (typing) typing.remove();
    typing = null;
  }

  // current settles when the last turn's stream has ended.
  var current = Promise.resolve();

  // turn posts to a turn route and streams its events. A failure before
  // the stream starts is retried with the same Idempotency-Key, so the
  // server runs the turn at most once; then a Retry button is offered.
  // Turns run one after another: tool results or a confirmation asked for
  // by a stream are posted only once that stream has ended, since until
  // then the server is still saving the paused dialog and would refuse
  // them with 409.
  function turn(route, body, onRefused) {
    var key = newKey();
    var attempt = 0;
    busy = true;
    canSend();
    showStop(true);
    showTyping();
    function go() {
      return start().then(function () {
        return request('POST', path('dialogs', dialogId, route), body, 'text/event-stream', key);
      }).then(function (res) {
        if ((res.headers.get('Content-Type') || '').indexOf('text/event-stream') !== 0) return; // queued behind a reply
        return readEvents(res, onEvent);
      }).catch(function (err) {
        if (retryable(err) && attempt < RETRIES) {
          attempt++;
          return new Promise(function (r) { setTimeout(r, 500 * attempt); }).then(go);
        }
        hideTyping();
        if (err instanceof ApiError && err.code === 'dialog_closed') {
          // The conversation was ended (by the bot or a person): the next
          // message starts a new one.
          var endedId = dialogId;
          localStorage.removeItem(STORE);
          dialogId = null;
          started = null;
          note(t('ended'));
          askRating(endedId);
          if (onRefused) onRefused();
          return;
        }
        // A failure worth retrying gets a Retry button, which sends the
        // same text again; any other gives the text back to the visitor.
        showError(humanError(err), retryable(err) ? function () { attempt = 0; showTyping(); run(); } : null);
        if (!retryable(err) && onRefused) onRefused();
      });
    }
    function run() {
      busy = true;
      canSend();
      showStop(true);
      showTyping();
      return go().then(done, done);
    }
    function done() {
      hideTyping();
      bubble = null;
      busy = false;
      canSend();
      showStop(false);
    }
    current = current.then(run);
    return current;
  }

  function showStop(on) {
    stopBtn.hidden = !on;
    stopBtn.disabled = false;
    sendBtn.hidden = on;
  }
  stopBtn.addEventListener('click', function () {
    if (!dialogId) return;
    stopBtn.disabled = true;
    // The stream ends with done (stop_reason canceled); nothing to do here
    // when the reply had ended already.
    json('POST', path('dialogs', dialogId, 'cancel'), {}).catch(function () { stopBtn.disabled = false; });
  });

  function ask(ev) {
    var box = el('div', 'ask');
    box.appendChild(el('div', null, t('ask', ev.name, summary(ev.arguments))));
    var yes = button(t('allow'), false, function () { answer(true); });
    var no = button(t('deny'), true, function () { answer(false); });
    box.appendChild(yes);
    box.appendChild(no);
    add(box);
    function answer(approved) {
      yes.disabled = no.disabled = true;
      box.appendChild(el('div', 'note', approved ? t('allowed') : t('declined')));
      turn('confirmations', { id: ev.id, approved: approved });
    }
  }

  // summary shows a call's arguments as "(order: A1, qty: 2)", short enough
  // to read before allowing it.
  function summary(args) {
    if (typeof args === 'string') {
      try { args = JSON.parse(args); } catch (e) { return ''; }
    }
    if (!args || typeof args !== 'object') return '';
    var parts = Object.keys(args).map(function (k) {
      var v = typeof args[k] === 'object' ? JSON.stringify(args[k]) : String(args[k]);
      return k + ': ' + (v.length > 40 ? v.slice(0, 39) + '…' : v);
    });
    return parts.length ? ' (' + parts.join(', ') + ')' : '';
  }

  // runClientTools runs each call with the page's window.Parley.onClientTool
  // and hands the results back; without a handler, each is an error the
  // model sees.
  function runClientTools(calls) {
    var handler = parley.onClientTool;
    Promise.all(calls.map(function (c) {
      var args = typeof c.arguments === 'string' ? JSON.parse(c.arguments || '{}') : (c.arguments || {});
      if (typeof handler !== 'function') return { id: c.id, content: 'this page has no handler for client tools', is_error: true };
      return Promise.resolve().then(function () { return handler(c.name, args); }).then(function (out) {
        return { id: c.id, content: typeof out === 'string' ? out : JSON.stringify(out === undefined ? null : out) };
      }, function (err) {
        return { id: c.id, content: String((err && err.message) || err), is_error: true };
      });
    })).then(function (results) {
      turn('tool-results', { results: results });
    });
  }

  function send(text) {
    if (length(text) > maxChars) {
      giveBack(text);
      return;
    }
    var bubbleEl = say('user', text);
    sent.push({ el: bubbleEl, seq: 0 });
    var body = { text: text };
    if (attached) {
      var img = el('img');
      img.src = attached.url;
      img.alt = t('attached');
      bubbleEl.appendChild(img);
      body.images = [{ data: attached.data }];
      clearAttachment();
    }
    // Refused, the text was not stored: it goes back to the box.
    turn('messages', body, function () {
      bubbleEl.remove();
      giveBack(text);
    });
  }

  // giveBack puts a text that was not sent back in the box, unless the
  // visitor has started another.
  function giveBack(text) {
    if (!input.value.trim()) input.value = text;
    counted();
  }
  // length counts characters as the server does: code points.
  function length(text) { return Array.from(text).length; }
  function limit(n) {
    if (typeof n === 'number' && n > 0) maxChars = n;
    counted();
  }
  // counted shows the count once the text nears the limit, and past it
  // says so and disables Send.
  function counted() {
    var n = length(input.value.trim());
    var over = n > maxChars;
    count.hidden = n < maxChars * 0.9;
    count.className = over ? 'count over' : 'count';
    count.textContent = over ? t('tooLong', maxChars.toLocaleString(t.locale)) : t('count', n.toLocaleString(t.locale), maxChars.toLocaleString(t.locale));
    canSend();
  }
  function canSend() {
    sendBtn.disabled = busy || length(input.value.trim()) > maxChars;
  }

  // attached is the image waiting for the next message: its base64 bytes
  // and a data: URL to show it; null when there is none.
  var attached = null;
  function attach(file) {
    if (!file) return;
    if (IMAGE_TYPES.indexOf(file.type) < 0) return showError(t('notImage'));
    if (file.size > MAX_IMAGE_BYTES) return showError(t('tooBig'));
    var reader = new FileReader();
    reader.onload = function () {
      var url = String(reader.result);
      attached = { url: url, data: url.slice(url.indexOf(',') + 1) };
      chip.replaceChildren();
      var img = el('img');
      img.src = url;
      img.alt = t('attached');
      chip.appendChild(img);
      chip.appendChild(el('span', null, file.name));
      var remove = el('button', null, '×');
      remove.type = 'button';
      remove.setAttribute('aria-label', t('removeImage'));
      remove.addEventListener('click', clearAttachment);
      chip.appendChild(remove);
      chip.hidden = false;
    };
    reader.readAsDataURL(file);
  }
  function clearAttachment() {
    attached = null;
    fileInput.value = '';
    chip.replaceChildren();
    chip.hidden = true;
  }

  // --- wiring ---------------------------------------------------------------

  function open() {
    panel.hidden = false;
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', t('close'));
    input.focus();
    markRead(0);
    start().catch(function (err) {
      showError(humanError(err), retryable(err) ? open : null);
    });
  }
  function close() {
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', t('open'));
    launcher.focus();
  }

  launcher.addEventListener('click', function () { panel.hidden ? open() : close(); });
  closeBtn.addEventListener('click', close);
  panel.addEventListener('keydown', function (e) { if (e.key === 'Escape') close(); });
  attachBtn.addEventListener('click', function () { fileInput.click(); });
  fileInput.addEventListener('change', function () { attach(fileInput.files && fileInput.files[0]); });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var text = input.value.trim();
    if (!text && attached) text = t('imageOnly');
    if (!text || busy || length(text) > maxChars) return;
    input.value = '';
    counted();
    send(text);
  });
  input.addEventListener('input', counted);
  input.addEventListener('input', typed);
  input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });

  parley.open = open;
  parley.close = close;
  parley.send = function (text) { open(); send(text); };
  parley.setUserToken = function (token) {
    cfg.userToken = token || '';
    var key = storeKey(cfg.userToken);
    if (key === STORE) return; // the same user, a fresh token
    STORE = key;
    dialogId = localStorage.getItem(STORE);
    started = null;
  };

  if (document.body) document.body.appendChild(host);
  else document.addEventListener('DOMContentLoaded', function () { document.body.appendChild(host); });

  // --- strings ----------------------------------------------------------------

  // translator returns t(key, args...) in the locale closest to the one
  // asked for ("de-AT" -> de, "zh-Hant-TW" -> zh), English otherwise; "%s"
  // in a string takes the next argument. t.locale is the one chosen.
  function translator(asked) {
    var STRINGS = {
      en: {
        title: 'Chat with us', open: 'Open chat', close: 'Close chat', message: 'Message',
        placeholder: 'Type a message…', send: 'Send', retry: 'Retry', powered: 'Powered by Parley',
        offline: 'Cannot reach the chat right now. Check your connection.',
        refused: 'This chat is not available on this site (%s).',
        busy: 'Too many messages right now. Please wait a moment.',
        failed: 'Something went wrong: %s', cut: 'The reply was cut short. Please try again.',
        handoff: 'Connecting you to a person…', typing: 'The assistant is typing',
        joined: '%s joined the conversation.', operatorTyping: '%s is typing…', read: 'Read',
        back: 'You are chatting with the assistant again.',
        ask: 'Allow the assistant to run “%s”%s?', allow: 'Allow', deny: 'Not now',
        allowed: 'Allowed.', declined: 'Declined.',
        stop: 'Stop', stopReply: 'Stop the reply', stopped: 'Stopped.',
        attach: 'Attach an image', attached: 'Attached image', removeImage: 'Remove the image', imageOnly: 'Here is an image.', notImage: 'Only PNG, JPEG, GIF or WebP images can be sent.', tooBig: 'This image is too large to send (5 MB at most).',
        ended: 'This conversation has ended. Send a message to start a new one.',
        rateUp: 'Helpful', rateDown: 'Not helpful', rateThanks: 'Thanks for your feedback.', sources: 'Sources',
        rateWhy: 'What was wrong? (optional)', rateSend: 'Send',
        rateDialog: 'How was this conversation?', rateStars: '%s of 5 stars',
        count: '%s / %s characters', tooLong: 'Too long: a message can have at most %s characters.',
      },
      de: {
        title: 'Schreiben Sie uns', open: 'Chat öffnen', close: 'Chat schließen', message: 'Nachricht',
        placeholder: 'Nachricht eingeben…', send: 'Senden', retry: 'Erneut versuchen', powered: 'Bereitgestellt von Parley',
        offline: 'Der Chat ist gerade nicht erreichbar. Bitte prüfen Sie Ihre Verbindung.',
        refused: 'Dieser Chat ist auf dieser Website nicht verfügbar (%s).',
        busy: 'Gerade sind es zu viele Nachrichten. Bitte warten Sie einen Moment.',
        failed: 'Etwas ist schiefgegangen: %s', cut: 'Die Antwort wurde unterbrochen. Bitte versuchen Sie es noch einmal.',
        handoff: 'Eine Person aus unserem Team übernimmt ab hier.', typing: 'Der Assistent schreibt',
        joined: '%s ist dem Gespräch beigetreten.', operatorTyping: '%s schreibt…', read: 'Gelesen', back: 'Sie schreiben wieder mit dem Assistenten.',
        ask: 'Darf der Assistent „%s“%s ausführen?', allow: 'Erlauben', deny: 'Jetzt nicht',
        allowed: 'Erlaubt.', declined: 'Abgelehnt.',
        stop: 'Stopp', stopReply: 'Antwort stoppen', stopped: 'Gestoppt.',
        attach: 'Bild anhängen', attached: 'Angehängtes Bild', removeImage: 'Bild entfernen', imageOnly: 'Hier ist ein Bild.', notImage: 'Nur PNG-, JPEG-, GIF- oder WebP-Bilder können gesendet werden.', tooBig: 'Dieses Bild ist zu groß (höchstens 5 MB).',
        ended: 'Dieses Gespräch ist beendet. Schreiben Sie, um ein neues zu beginnen.',
        rateUp: 'Hilfreich', rateDown: 'Nicht hilfreich', rateThanks: 'Danke für Ihr Feedback.', sources: 'Quellen',
        rateWhy: 'Was war falsch? (optional)', rateSend: 'Senden',
        count: '%s / %s Zeichen', tooLong: 'Zu lang: Eine Nachricht darf höchstens %s Zeichen haben.',
      },
      fr: {
        title: 'Discutons', open: 'Ouvrir la discussion', close: 'Fermer la discussion', message: 'Message',
        placeholder: 'Écrivez un message…', send: 'Envoyer', retry: 'Réessayer', powered: 'Propulsé par Parley',
        offline: 'Impossible de joindre la discussion. Vérifiez votre connexion.',
        refused: 'Cette discussion n’est pas disponible sur ce site (%s).',
        busy: 'Trop de messages en ce moment. Patientez un instant.',
        failed: 'Une erreur est survenue : %s', cut: 'La réponse a été interrompue. Veuillez réessayer.',
        handoff: 'Une personne de notre équipe prend le relais.', typing: 'L’assistant écrit',
        joined: '%s a rejoint la conversation.', operatorTyping: '%s écrit…', read: 'Lu', back: 'Vous discutez de nouveau avec l’assistant.',
        ask: 'Autoriser l’assistant à exécuter « %s »%s ?', allow: 'Autoriser', deny: 'Pas maintenant',
        allowed: 'Autorisé.', declined: 'Refusé.',
        stop: 'Arrêter', stopReply: 'Arrêter la réponse', stopped: 'Arrêté.',
        attach: 'Joindre une image', attached: 'Image jointe', removeImage: 'Retirer l’image', imageOnly: 'Voici une image.', notImage: 'Seules les images PNG, JPEG, GIF ou WebP peuvent être envoyées.', tooBig: 'Cette image est trop lourde (5 Mo au plus).',
        ended: 'Cette conversation est terminée. Écrivez un message pour en commencer une nouvelle.',
        rateUp: 'Utile', rateDown: 'Pas utile', rateThanks: 'Merci pour votre avis.', sources: 'Sources',
        rateWhy: 'Qu’est-ce qui n’allait pas ? (facultatif)', rateSend: 'Envoyer',
        count: '%s / %s caractères', tooLong: 'Trop long : un message peut compter au plus %s caractères.',
      },
      es: {
        title: 'Hable con nosotros', open: 'Abrir chat', close: 'Cerrar chat', message: 'Mensaje',
        placeholder: 'Escriba un mensaje…', send: 'Enviar', retry: 'Reintentar', powered: 'Con la tecnología de Parley',
        offline: 'No se puede conectar con el chat. Compruebe su conexión.',
        refused: 'Este chat no está disponible en este sitio (%s).',
        busy: 'Demasiados mensajes ahora mismo. Espere un momento.',
        failed: 'Algo salió mal: %s', cut: 'La respuesta se interrumpió. Inténtelo de nuevo.',
        handoff: 'Una persona de nuestro equipo continuará a partir de aquí.', typing: 'El asistente está escribiendo',
        joined: '%s se ha unido a la conversación.', operatorTyping: '%s está escribiendo…', read: 'Leído', back: 'Vuelve a hablar con el asistente.',
        ask: '¿Permitir que el asistente ejecute «%s»%s?', allow: 'Permitir', deny: 'Ahora no',
        allowed: 'Permitido.', declined: 'Rechazado.',
        stop: 'Detener', stopReply: 'Detener la respuesta', stopped: 'Detenido.',
        attach: 'Adjuntar una imagen', attached: 'Imagen adjunta', removeImage: 'Quitar la imagen', imageOnly: 'Aquí hay una imagen.', notImage: 'Solo se pueden enviar imágenes PNG, JPEG, GIF o WebP.', tooBig: 'Esta imagen es demasiado grande (5 MB como máximo).',
        ended: 'Esta conversación ha terminado. Escriba un mensaje para empezar una nueva.',
        rateUp: 'Útil', rateDown: 'No es útil', rateThanks: 'Gracias por su opinión.', sources: 'Fuentes',
        rateWhy: '¿Qué falló? (opcional)', rateSend: 'Enviar',
        count: '%s / %s caracteres', tooLong: 'Demasiado largo: un mensaje puede tener como máximo %s caracteres.',
      },
      zh: {
        title: '联系我们', open: '打开聊天', close: '关闭聊天', message: '消息',
        placeholder: '输入消息…', send: '发送', retry: '重试', powered: '由 Parley 提供支持',
        offline: '暂时无法连接聊天，请检查网络连接。',
        refused: '此聊天在本网站不可用（%s）。',
        busy: '消息过多，请稍候。',
        failed: '出错了：%s', cut: '回复被中断，请重试。',
        handoff: '接下来将由我们的工作人员为您服务。', typing: '助手正在输入',
        joined: '%s 已加入对话。', operatorTyping: '%s 正在输入…', read: '已读', back: '您正在重新与助手对话。',
        ask: '允许助手运行“%s”%s吗？', allow: '允许', deny: '暂不',
        allowed: '已允许。', declined: '已拒绝。',
        stop: '停止', stopReply: '停止回复', stopped: '已停止。',
        attach: '附加图片', attached: '已附加的图片', removeImage: '移除图片', imageOnly: '这是一张图片。', notImage: '只能发送 PNG、JPEG、GIF 或 WebP 图片。', tooBig: '图片太大，无法发送（最多 5 MB）。',
        ended: '此对话已结束。发送消息即可开始新的对话。',
        rateUp: '有帮助', rateDown: '没有帮助', rateThanks: '感谢您的反馈。', sources: '来源',
        rateWhy: '哪里有问题？（可选）', rateSend: '发送',
        count: '%s / %s 个字符', tooLong: '太长了：一条消息最多 %s 个字符。',
      },
    };
    var lang = String(asked).toLowerCase().split(/[-_]/)[0];
    var locale = STRINGS[lang] ? lang : 'en';
    var table = STRINGS[locale];
    function t(key) {
      var args = [].slice.call(arguments, 1);
      var s = table[key] || STRINGS.en[key] || key;
      return s.replace(/%s/g, function () { return args.length ? String(args.shift()) : ''; });
    }
    t.locale = locale;
    return t;
  }
})();
