// Building the page from data: the one module where strings become nodes.
//
// Transcripts are hostile text. Nothing here parses markup: every node is made with
// createElement and every string goes in through textContent (or a Text node). Links in
// transcripts become clickable only when they are http(s) URLs, and then open with
// rel="noopener noreferrer". Every view builds its DOM through these helpers; the page is
// served with a CSP that forbids inline script and eval.

import { counted, fmtInt } from './format.js';

export const TEXT_LIMIT = 20000; // characters of a message shown before "show all"
export const RESULT_LIMIT = 4000; // characters of a tool input/result shown before "show all"
// Highlight markers a snippet may carry around matches (FTS5 snippet() markers). They are
// parsed as plain text; nothing in a snippet is ever treated as markup.
const MARKERS = [
  ['\u00ab', '\u00bb'],
  ['\u0002', '\u0003'],
];

export function h(tag, props, ...kids) {
  const node = document.createElement(tag);
  if (props) {
    for (const key of Object.keys(props)) {
      const value = props[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
      else if (value === true) node.setAttribute(key, '');
      else node.setAttribute(key, String(value));
    }
  }
  add(node, kids);
  return node;
}

export function add(node, kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false || kid === '') continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export const $ = (sel, root) => (root || document).querySelector(sel);

// A clickable link for a URL found in a transcript, or null when it is not http(s).
export function externalLink(raw, label) {
  let url;
  try {
    url = new URL(raw);
  } catch (_) {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return h('a', { href: url.href, rel: 'noopener noreferrer', target: '_blank', class: 'ext', text: label || raw });
}

// Plain text with `inline code` and http(s) links, as nodes.
export function inlineNodes(text) {
  const out = [];
    const re = /(`[^`\n]{1,400}`)|(https?:\/\/[^\s<>"'`]+)|(\*\*[^*\n]{1,300}\*\*)/g;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) {
      out.push(h('code', { class: 'inline', text: m[1].slice(1, -1) }));
      } else if (m[3]) {
        out.push(h('strong', { text: m[3].slice(2, -2) })); // **bold** (Codex's reasoning headers)
    } else {
      let url = m[2];
      let tail = '';
      while (/[.,;:!?)\]}'"]$/.test(url)) {
        tail = url.slice(-1) + tail;
        url = url.slice(0, -1);
      }
      out.push(externalLink(url) || url);
      if (tail) out.push(tail);
    }
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// A message: paragraphs of text and ``` fenced code blocks.
export function richText(text, limit) {
  const box = h('div', { class: 'rich' });
  const full = String(text || '');
  const render = (s) => {
    clear(box);
    const re = /```([^\n`]*)\n([\s\S]*?)(?:\n```|$)/g;
    let last = 0;
    let m;
    while ((m = re.exec(s)) !== null) {
      if (m.index > last) box.append(h('div', { class: 'prose' }, inlineNodes(s.slice(last, m.index).replace(/^\n+|\n+$/g, ''))));
      const lang = m[1].trim();
      box.append(h('pre', { class: 'code', dataset: lang ? { lang: lang.slice(0, 30) } : null }, h('code', { text: m[2] })));
      last = re.lastIndex;
      if (m[0].length === 0) re.lastIndex++;
    }
    if (last < s.length) {
      const rest = s.slice(last).replace(/^\n+/, '');
      if (rest) box.append(h('div', { class: 'prose' }, inlineNodes(rest)));
    }
  };
  if (limit && full.length > limit) {
    render(full.slice(0, limit));
    box.append(moreButton(full.length - limit, () => render(full)));
  } else {
    render(full);
  }
  return box;
}

// A preformatted block, cut at `limit` characters with a button to show the rest.
export function preBlock(text, cls, limit) {
  const full = String(text);
  const pre = h('pre', { class: 'block ' + (cls || '') });
  const lim = limit || RESULT_LIMIT;
  if (full.length > lim) {
    pre.textContent = full.slice(0, lim);
    const wrap = h('div', { class: 'pre-wrap' }, pre);
    const btn = moreButton(full.length - lim, () => {
      pre.textContent = full;
      btn.remove();
    });
    wrap.append(btn);
    return wrap;
  }
  pre.textContent = full;
  return pre;
}

export function moreButton(hidden, onShow) {
    const btn = h('button', { type: 'button', class: 'more', text: 'Show ' + counted(hidden, 'more character') });
  btn.addEventListener('click', () => {
    btn.remove();
    onShow();
  });
  return btn;
}

// Snippet text with highlight markers → nodes with <mark> around the matches. When the
// snippet carries no markers, the query's words are highlighted instead.
export function snippetNodes(snippet, query) {
  const text = String(snippet || '');
  for (const [open, close] of MARKERS) {
    if (!text.includes(open) || !text.includes(close)) continue;
    const out = [];
    let pos = 0;
    while (pos < text.length) {
      const start = text.indexOf(open, pos);
      if (start < 0) break;
      const end = text.indexOf(close, start + open.length);
      if (end < 0) break;
      if (start > pos) out.push(text.slice(pos, start));
      out.push(h('mark', { text: text.slice(start + open.length, end) }));
      pos = end + close.length;
    }
    if (pos < text.length) out.push(text.slice(pos));
    return out;
  }
  return highlightWords(text, query);
}

export function highlightWords(text, query) {
  const words = String(query || '')
    .split(/\s+/)
    .map((w) => w.replace(/^["']+|["']+$/g, ''))
    .filter((w) => w.length > 0);
  if (!words.length) return [text];
  const lower = text.toLowerCase();
  const ranges = [];
  for (const w of words) {
    const lw = w.toLowerCase();
    let i = lower.indexOf(lw);
    while (i >= 0) {
      ranges.push([i, i + lw.length]);
      i = lower.indexOf(lw, i + lw.length);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const out = [];
  let pos = 0;
  for (const [s, e] of ranges) {
    if (s < pos) continue;
    if (s > pos) out.push(text.slice(pos, s));
    out.push(h('mark', { text: text.slice(s, e) }));
    pos = e;
  }
  if (pos < text.length) out.push(text.slice(pos));
  return out;
}
