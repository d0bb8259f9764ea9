/*
 * Parley's Markdown renderer, shared by the chat widget and the admin
 * preview. It turns a model's reply into DOM nodes and never parses markup:
 * HTML in the text stays text, every element is created by this file, and
 * a link is made only for an absolute http:, https: or mailto: address,
 * opened in a new tab with rel="noopener noreferrer".
 *
 * It covers what chat replies use: paragraphs (a single newline is a line
 * break), ATX headings, fenced code blocks, bullet and numbered lists
 * (nested by indentation), block quotes, rules, and inline `code`,
 * **strong**, *emphasis*, ~~strikethrough~~, [links](https://…),
 * <https://…> and bare https:// addresses. An unclosed code fence runs to
 * the end, so a reply that is still streaming renders as it will end.
 *
 * A classic script with no exports, so the widget loads it with a script
 * tag and the admin UI with `import '/markdown.js'`; both then call
 *
 *   Parley.markdown.render(text)      -> a DocumentFragment
 *   Parley.markdown.renderInto(el, text)  replaces el's content at once
 *
 * renderInto swaps the content in one step, so re-rendering a streaming
 * reply after each delta does not flicker.
 */
(function () {
  'use strict';

  var SCHEMES = ['http:', 'https:', 'mailto:'];

  // safeURL returns the normalised address when it is absolute and of an
  // allowed scheme, and null otherwise (javascript:, data:, relative, …).
  function safeURL(raw) {
    var u;
    try { u = new URL(raw.trim()); } catch (e) { return null; }
    return SCHEMES.indexOf(u.protocol) >= 0 ? u.href : null;
  }

  function el(tag, children) {
    var e = document.createElement(tag);
    (children || []).forEach(function (c) { e.appendChild(c); });
    return e;
  }
  function text(s) { return document.createTextNode(s); }

  function link(href, children) {
    var a = el('a', children);
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    return a;
  }

  // --- inline ----------------------------------------------------------------

  var DELIMS = [
    { mark: '**', tag: 'strong' }, { mark: '__', tag: 'strong' },
    { mark: '~~', tag: 'del' },
    { mark: '*', tag: 'em' }, { mark: '_', tag: 'em' },
  ];
  var BARE = /^https?:\/\/[^\s<>]*[^\s<>.,;:!?'")\]]/;

  // inline parses a span of text into nodes. depth bounds nesting, so a
  // hostile reply of thousands of asterisks costs little.
  function inline(s, depth) {
    var out = [];
    var buf = '';
    function flush() {
      if (buf) out.push(text(buf));
      buf = '';
    }
    var i = 0;
    while (i < s.length) {
      var c = s[i];
      var rest = s.slice(i);
      var m;
      if (c === '\\' && i + 1 < s.length && /[\\`*_{}\[\]()#+\-.!~<>|]/.test(s[i + 1])) {
        buf += s[i + 1];
        i += 2;
        continue;
      }
      if (c === '`') {
        var ticks = /^`+/.exec(rest)[0];
        var end = s.indexOf(ticks, i + ticks.length);
        if (end > 0) {
          flush();
          var code = s.slice(i + ticks.length, end);
          if (/^ .* $/.test(code)) code = code.slice(1, -1);
          out.push(el('code', [text(code)]));
          i = end + ticks.length;
          continue;
        }
        buf += ticks;
        i += ticks.length;
        continue;
      }
      if (c === '[' && (m = linkAt(s, i))) {
        var href = safeURL(m.href);
        flush();
        var label = depth < 8 ? inline(m.label, depth + 1) : [text(m.label)];
        // A link to a refused address shows its label only.
        if (href) out.push(link(href, label));
        else out.push.apply(out, label);
        i = m.end;
        continue;
      }
      if (c === '<' && (m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/.exec(rest)) && safeURL(m[1])) {
        flush();
        out.push(link(safeURL(m[1]), [text(m[1])]));
        i += m[0].length;
        continue;
      }
      if (c === 'h' && !/\w$/.test(buf) && (m = BARE.exec(rest)) && safeURL(m[0])) {
        flush();
        out.push(link(safeURL(m[0]), [text(m[0])]));
        i += m[0].length;
        continue;
      }
      var d = depth < 8 && delimAt(s, i);
      if (d) {
        flush();
        out.push(el(d.tag, inline(s.slice(i + d.mark.length, d.close), depth + 1)));
        i = d.close + d.mark.length;
        continue;
      }
      buf += c;
      i++;
    }
    flush();
    return out;
  }

  // delimAt finds emphasis opening at i, and where it closes: the mark
  // followed by non-space opens; scanning on, runs of the same character
  // that open nest and runs that close unnest, so ***a *b* c*** is strong
  // around emphasis around more emphasis. Intraword _ neither opens nor
  // closes; code spans are skipped.
  function delimAt(s, i) {
    for (var k = 0; k < DELIMS.length; k++) {
      var d = DELIMS[k], ch = d.mark[0], len = d.mark.length;
      if (s.substr(i, len) !== d.mark) continue;
      var run = runAt(s, i, ch);
      if (!opens(s, i, run, ch)) continue;
      var nest = run > len ? 1 : 0;
      for (var j = i + run; j < s.length; j++) {
        if (s[j] === '`') {
          var ticks = runAt(s, j, '`');
          var end = s.indexOf(s.substr(j, ticks), j + ticks);
          j = end < 0 ? j + ticks - 1 : end + ticks - 1;
          continue;
        }
        if (s[j] !== ch) continue;
        var n = runAt(s, j, ch);
        if (closes(s, j, n, ch)) {
          if (nest > 0) {
            nest--;
            if (nest === 0 && n > len) return { mark: d.mark, tag: d.tag, close: j + n - len };
          } else if (n >= len) {
            return { mark: d.mark, tag: d.tag, close: j + n - len };
          }
        } else if (opens(s, j, n, ch)) {
          nest++;
        }
        j += n - 1;
      }
    }
    return null;
  }
  function runAt(s, i, ch) {
    var j = i;
    while (s[j] === ch) j++;
    return j - i;
  }
  function opens(s, i, n, ch) {
    var next = s[i + n], prev = s[i - 1] || ' ';
    return !!next && !/\s/.test(next) && !(ch === '_' && /\w/.test(prev));
  }
  function closes(s, i, n, ch) {
    var prev = s[i - 1], next = s[i + n] || ' ';
    return !!prev && !/\s/.test(prev) && !(ch === '_' && /\w/.test(next));
  }

  // linkAt reads [label](href) at i, with balanced brackets in the label
  // and balanced parentheses in the address.
  function linkAt(s, i) {
    var depth = 0, j = i;
    for (; j < s.length; j++) {
      if (s[j] === '\\') { j++; continue; }
      if (s[j] === '[') depth++;
      else if (s[j] === ']' && --depth === 0) break;
    }
    if (j >= s.length || s[j + 1] !== '(') return null;
    var label = s.slice(i + 1, j);
    var k = j + 2, parens = 0;
    for (; k < s.length; k++) {
      if (s[k] === '(') parens++;
      else if (s[k] === ')' && parens-- === 0) break;
      else if (/\s/.test(s[k])) break;
    }
    var href = s.slice(j + 2, k);
    var end = k;
    // An optional "title" after the address is read and dropped.
    var t = /^\s+"[^"]*"\s*\)/.exec(s.slice(k));
    if (t) end = k + t[0].length - 1;
    if (s[end] !== ')') return null;
    return { label: label, href: href, end: end + 1 };
  }

  // inlineLines renders lines of one paragraph, a newline as <br>.
  function inlineLines(lines) {
    var out = [];
    lines.forEach(function (l, n) {
      if (n) out.push(el('br'));
      out.push.apply(out, inline(l.trim(), 0));
    });
    return out;
  }

  // --- blocks ----------------------------------------------------------------

  var FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  var HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
  var RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
  var ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)/;
  var QUOTE = /^ {0,3}> ?/;

  function blank(l) { return /^\s*$/.test(l); }
  function indentOf(l) { return /^ */.exec(l.replace(/\t/g, '    '))[0].length; }

  // blocks parses lines into block nodes; depth bounds nesting of lists
  // and quotes.
  function blocks(lines, depth) {
    var out = [];
    var i = 0;
    while (i < lines.length) {
      var l = lines[i];
      var m;
      if (blank(l)) { i++; continue; }
      if ((m = FENCE.exec(l))) {
        var close = new RegExp('^ {0,3}' + m[1][0] + '{' + m[1].length + ',}\\s*$');
        var body = [];
        i++;
        while (i < lines.length && !close.test(lines[i])) body.push(lines[i++]);
        i++; // the closing fence, or past the end when it is still streaming
        var code = el('code', [text(body.join('\n'))]);
        if (m[2]) code.className = 'language-' + m[2];
        out.push(el('pre', [code]));
        continue;
      }
      if ((m = HEADING.exec(l))) {
        out.push(el('h' + m[1].length, inline(m[2] || '', 0)));
        i++;
        continue;
      }
      if (RULE.test(l)) {
        out.push(el('hr'));
        i++;
        continue;
      }
      if (QUOTE.test(l) && depth < 8) {
        var quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].replace(QUOTE, ''));
        out.push(el('blockquote', blocks(quoted, depth + 1)));
        continue;
      }
      if ((m = ITEM.exec(l)) && depth < 8) {
        var r = list(lines, i, depth);
        out.push(r.node);
        i = r.next;
        continue;
      }
      var para = [];
      while (i < lines.length && !blank(lines[i]) && (para.length === 0 ||
        !(FENCE.test(lines[i]) || HEADING.test(lines[i]) || QUOTE.test(lines[i]) || ITEM.test(lines[i]) || RULE.test(lines[i])))) {
        para.push(lines[i++]);
      }
      out.push(el('p', inlineLines(para)));
    }
    return out;
  }

  // list reads the list starting at lines[start]: its items, each with the
  // lines indented under it (a nested list, more paragraphs, code).
  function list(lines, start, depth) {
    var first = ITEM.exec(lines[start]);
    var ordered = /\d/.test(first[2]);
    var node = el(ordered ? 'ol' : 'ul');
    if (ordered && parseInt(first[2], 10) !== 1) node.setAttribute('start', String(parseInt(first[2], 10)));
    var i = start;
    var loose = false;
    var items = [];
    while (i < lines.length) {
      var m = ITEM.exec(lines[i]);
      if (!m || /\d/.test(m[2]) !== ordered) break;
      var width = m[0].length;
      var item = [lines[i].slice(width)];
      i++;
      while (i < lines.length) {
        var l = lines[i];
        if (blank(l)) {
          // A blank line continues the item only if indented text follows.
          var n = i + 1;
          while (n < lines.length && blank(lines[n])) n++;
          if (n < lines.length && indentOf(lines[n]) >= Math.min(width, 2) && !ITEM.test(lines[n]) ||
              n < lines.length && indentOf(lines[n]) >= 2 && ITEM.test(lines[n])) {
            item.push('');
            i++;
            continue;
          }
          var next = n < lines.length && indentOf(lines[n]) < 2 && ITEM.exec(lines[n]);
          if (next && /\d/.test(next[2]) === ordered) loose = true; // a blank line between items
          break;
        }
        if (indentOf(l) >= 2) item.push(l.replace(/\t/g, '    ').slice(Math.min(indentOf(l), width)));
        else if (ITEM.test(l)) break;
        else if (FENCE.test(l) || HEADING.test(l) || QUOTE.test(l)) break;
        else item.push(l); // a lazy continuation of the item's text
        i++;
      }
      while (i < lines.length && blank(lines[i]) && loose) i++;
      items.push(blocks(item, depth + 1));
    }
    items.forEach(function (kids) {
      // A tight list's items draw their first paragraph without the <p>.
      if (kids.length && kids[0].tagName === 'P' && !loose) {
        var p = kids.shift();
        kids = Array.prototype.slice.call(p.childNodes).concat(kids);
      }
      node.appendChild(el('li', kids));
    });
    return { node: node, next: i };
  }

  function render(src) {
    var frag = document.createDocumentFragment();
    blocks(String(src == null ? '' : src).replace(/\r\n?/g, '\n').split('\n'), 0)
      .forEach(function (n) { frag.appendChild(n); });
    return frag;
  }

  function renderInto(target, src) {
    target.replaceChildren(render(src));
    return target;
  }

  /** @type {ParleyGlobal} */
  var parley = (globalThis.Parley = globalThis.Parley || {});
  parley.markdown = { render: render, renderInto: renderInto, safeURL: safeURL };
})();
