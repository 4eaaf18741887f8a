// agtail web viewer: one page, no build step, no dependencies.
//
// Transcripts are hostile text. This file never parses markup from data: every node is made
// with createElement and every string goes in through textContent (or a Text node). Links in
// transcripts become clickable only when they are http(s) URLs, and then open with
// rel="noopener noreferrer". The page is served with a CSP that forbids inline script and eval.
'use strict';

(function () {
  const API = '/api/v1';
  const SESSION_PAGE = 60;
  const EVENT_PAGE = 250;
  // A huge session is shown as a window of pages: events around the target are fetched with
  // before_seq/after_seq, more pages load on scroll in both directions, and the pages farthest
  // from the reader are dropped once the transcript holds more than this many events.
  const WINDOW_BEFORE = 60; // events fetched before a target event
  const MAX_EVENTS_IN_DOM = 1500;
  const SEARCH_PAGE = 40;
  const TEXT_LIMIT = 20000; // characters of a message shown before "show all"
  const RESULT_LIMIT = 4000; // characters of a tool input/result shown before "show all"
  // Highlight markers a snippet may carry around matches (FTS5 snippet() markers). They are
  // parsed as plain text; nothing in a snippet is ever treated as markup.
  const MARKERS = [
    ['\u00ab', '\u00bb'],
    ['\u0002', '\u0003'],
  ];
  const KINDS = ['text', 'thinking', 'tool_use', 'tool_result', 'hook', 'summary', 'system', 'unknown'];

  // ---------------------------------------------------------------- DOM helpers

  function h(tag, props, ...kids) {
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

  function add(node, kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false || kid === '') continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  const $ = (sel, root) => (root || document).querySelector(sel);

  // A clickable link for a URL found in a transcript, or null when it is not http(s).
  function externalLink(raw, label) {
    let url;
    try {
      url = new URL(raw);
    } catch (_) {
      return null;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return h('a', { href: url.href, rel: 'noopener noreferrer', target: '_blank', class: 'ext', text: label || raw });
  }

  // ---------------------------------------------------------------- formatting

  function toDate(value) {
    if (value === null || value === undefined || value === '') return null;
    const d = typeof value === 'number' ? new Date(value < 1e12 ? value * 1000 : value) : new Date(value);
    return isNaN(d.getTime()) ? null : d;
  }

  function sameDay(a, b) {
    return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  }

  function fmtClock(d) {
    return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  }

  function fmtDate(d) {
    const now = new Date();
    const opts = { month: 'short', day: 'numeric' };
    if (d.getFullYear() !== now.getFullYear()) opts.year = 'numeric';
    return d.toLocaleDateString(undefined, opts);
  }

  function fmtFull(d) {
    return d ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '';
  }

  function relTime(d) {
    if (!d) return '';
    const secs = (Date.now() - d.getTime()) / 1000;
    if (secs < 45) return 'just now';
    if (secs < 3600) return Math.max(1, Math.round(secs / 60)) + ' min ago';
    const now = new Date();
    if (sameDay(d, now)) return fmtClock(d);
    const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    if (sameDay(d, yesterday)) return 'yesterday ' + fmtClock(d);
    return fmtDate(d) + ' ' + fmtClock(d);
  }

  // In the list, rows sit under their day's heading: today's say how long ago, others the time.
  function rowTime(d) {
    if (!d) return '';
    return sameDay(d, new Date()) ? relTime(d) : fmtClock(d);
  }

  function dayLabel(d) {
    if (!d) return 'Undated';
    const now = new Date();
    if (sameDay(d, now)) return 'Today';
    const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    if (sameDay(d, yesterday)) return 'Yesterday';
    return d.toLocaleDateString(undefined, {
      weekday: 'long', month: 'long', day: 'numeric',
      year: d.getFullYear() === now.getFullYear() ? undefined : 'numeric',
    });
  }

  function fmtDuration(ms) {
    if (!(ms > 0)) return '';
    const s = Math.round(ms / 1000);
    if (s < 60) return s + ' s';
    const m = Math.round(s / 60);
    if (m < 60) return m + ' min';
    const hrs = Math.floor(m / 60);
    if (hrs < 48) return hrs + ' h ' + (m % 60) + ' min';
    return Math.round(hrs / 24) + ' days';
  }

  function fmtInt(n) {
    return typeof n === 'number' ? n.toLocaleString() : '0';
  }

  function fmtTokens(n) {
    if (typeof n !== 'number' || !isFinite(n)) return '0';
    const abs = Math.abs(n);
    if (abs < 1000) return String(n);
    if (abs < 1e6) return (n / 1e3).toFixed(abs < 1e4 ? 1 : 0) + 'k';
    if (abs < 1e9) return (n / 1e6).toFixed(abs < 1e7 ? 2 : 1) + 'M';
    return (n / 1e9).toFixed(2) + 'B';
  }

  function fmtCost(c) {
    if (c === null || c === undefined) return '—';
    if (c === 0) return '$0';
    if (c < 0.01) return '<$0.01';
    if (c < 100) return '$' + c.toFixed(2);
    return '$' + Math.round(c).toLocaleString();
  }

  function shortId(id) {
    const s = String(id || '');
    return s.length > 12 ? s.slice(0, 8) + '…' : s;
  }

  function oneLine(text, max) {
    const s = String(text || '').replace(/\s+/g, ' ').trim();
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  }

  function sessionTitle(s) {
    return oneLine(s.title || s.first_prompt || '', 300) || 'Untitled session ' + shortId(s.id);
  }

  function sessionDate(s) {
    return toDate(s.ended) || toDate(s.mtime) || toDate(s.started);
  }

  function pretty(value) {
    if (typeof value === 'string') return value;
    try {
      return JSON.stringify(value, null, 2);
    } catch (_) {
      return String(value);
    }
  }

  // ---------------------------------------------------------------- text rendering

  // Plain text with `inline code` and http(s) links, as nodes.
  function inlineNodes(text) {
    const out = [];
    const re = /(`[^`\n]{1,400}`)|(https?:\/\/[^\s<>"'`]+)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) out.push(text.slice(last, m.index));
      if (m[1]) {
        out.push(h('code', { class: 'inline', text: m[1].slice(1, -1) }));
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
  function richText(text, limit) {
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
  function preBlock(text, cls, limit) {
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

  function moreButton(hidden, onShow) {
    const btn = h('button', { type: 'button', class: 'more', text: 'Show ' + fmtInt(hidden) + ' more characters' });
    btn.addEventListener('click', () => {
      btn.remove();
      onShow();
    });
    return btn;
  }

  // Snippet text with highlight markers → nodes with <mark> around the matches. When the
  // snippet carries no markers, the query's words are highlighted instead.
  function snippetNodes(snippet, query) {
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

  function highlightWords(text, query) {
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

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function apiUrl(path, params) {
    const qs = new URLSearchParams();
    if (params) {
      for (const key of Object.keys(params)) {
        const v = params[key];
        if (v !== null && v !== undefined && v !== '') qs.set(key, String(v));
      }
    }
    const q = qs.toString();
    return API + path + (q ? '?' + q : '');
  }

  async function api(path, params) {
    let res;
    try {
      res = await fetch(apiUrl(path, params), { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    } catch (err) {
      throw new ApiError(0, 'network', 'agtaild is not answering (' + err.message + ')');
    }
    let body = null;
    try {
      body = await res.json();
    } catch (_) {
      body = null;
    }
    if (!res.ok || !body || body.ok === false) {
      const e = (body && body.error) || {};
      throw new ApiError(res.status, e.code || 'error', e.message || res.status + ' ' + res.statusText);
    }
    return body;
  }

  const sessionPath = (agent, id) => '/sessions/' + encodeURIComponent(agent) + '/' + encodeURIComponent(id);
  const sessionHash = (agent, id, at) =>
    '#/session/' + encodeURIComponent(agent) + '/' + encodeURIComponent(id) + (at !== undefined && at !== null ? '?at=' + encodeURIComponent(at) : '');

  // ---------------------------------------------------------------- app state

  const state = {
    agents: [],
    machines: [], // a team server's pushing machines (agtaild --backend); empty on a local daemon
    live: localStorage.getItem('agtail.live') !== 'off',
    route: null,
  };

  function handleError(err, where) {
    if (err instanceof ApiError && err.status === 401) {
      showLogin();
      return;
    }
    banner((where ? where + ': ' : '') + (err && err.message ? err.message : String(err)), 'error');
    console.error(err);
  }

  function banner(message, kind) {
    const b = $('#banner');
    clear(b);
    if (!message) {
      b.hidden = true;
      return;
    }
    b.className = 'banner ' + (kind || 'info');
    b.append(h('span', { text: message }), h('button', { type: 'button', class: 'banner-close', 'aria-label': 'Dismiss', text: '×', onclick: () => banner(null) }));
    b.hidden = false;
  }

  let loggedOut = false;
  // The live streams are closed while the page is hidden or left (see pageLife below); a page
  // opened in a background tab opens them when it is first shown.
  let streamsPaused = document.visibilityState === 'hidden';
  function showLogin() {
    loggedOut = true;
    for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-login';
    changes.stop();
  }

  function agentBadge(agent) {
    const slug = String(agent || 'unknown').replace(/[^a-z0-9-]/gi, '').toLowerCase();
    return h('span', { class: 'badge agent agent-' + slug, text: agent || '?' });
  }

  function tag(text, cls, title) {
    return h('span', { class: 'tag ' + (cls || ''), text, title });
  }

  function sessionTags(s) {
    const tags = [];
    if (s.parent) tags.push(tag('subagent', 'sub'));
    if (s.machine) tags.push(tag('on ' + s.machine, 'machine', 'Pushed by this machine to the team server'));
    if (s.imported) tags.push(tag(s.collection ? 'imported · ' + s.collection : 'imported', 'imported', 'Imported from another machine; not resumable here'));
    if (s.archived) tags.push(tag('archived', 'archived', 'The agent deleted the native file; shown from agtail\u2019s archive'));
    if (s.truncated) tags.push(tag('truncated', 'warn', 'The last line of the file is incomplete'));
    if (s.bad_lines) tags.push(tag(s.bad_lines + ' bad line' + (s.bad_lines === 1 ? '' : 's'), 'warn'));
    if (s.ending) tags.push(tag(s.ending, 'warn', 'How the session ended'));
    if (s.programmatic) tags.push(tag(s.origin || 'sdk', 'muted', 'Driven programmatically'));
    return tags;
  }

  // A team server (its /health says backend: postgresql) lists the machines that push into it.
  async function loadMachines() {
    try {
      const health = await api('/health');
      if (!health || health.backend !== 'postgresql') return;
      const body = await api('/machines');
      state.machines = (body.machines || []).map((m) => m.machine).filter(Boolean);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw err;
      state.machines = [];
    }
  }

  function machineSelect(current, onChange) {
    if (!state.machines.length) return null;
    const sel = h('select', { class: 'machine-select', 'aria-label': 'Machine' }, h('option', { value: '', text: 'All machines' }));
    for (const m of state.machines) sel.append(h('option', { value: m, text: m }));
    sel.value = current || '';
    sel.addEventListener('change', () => onChange(sel.value));
    return sel;
  }

  async function loadAgents() {
    try {
      const body = await api('/agents');
      const list = body.agents || [];
      state.agents = list.map((a) => (typeof a === 'string' ? { id: a } : a)).filter((a) => a && a.id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw err;
      state.agents = [];
    }
  }

  function agentSelect(current, onChange) {
    const sel = h('select', { class: 'agent-select', 'aria-label': 'Agent' }, h('option', { value: '', text: 'All agents' }));
    // Agents with no session at all only clutter the menu.
    const ids = state.agents.filter((a) => a.sessions !== 0).map((a) => a.id);
    if (current && !ids.includes(current)) ids.push(current);
    for (const id of ids) {
      const a = state.agents.find((x) => x.id === id) || { id };
      const n = typeof a.sessions === 'number' ? ' (' + fmtInt(a.sessions) + ')' : '';
      sel.append(h('option', { value: id, text: (a.name || id) + n }));
    }
    sel.value = current || '';
    sel.addEventListener('change', () => onChange(sel.value));
    return sel;
  }

  function setHash(hash, replace) {
    if (location.hash === hash) return;
    if (replace) {
      history.replaceState(null, '', hash);
      route();
    } else {
      location.hash = hash;
    }
  }

  function queryHash(base, params) {
    const qs = new URLSearchParams();
    for (const k of Object.keys(params)) if (params[k]) qs.set(k, params[k]);
    const s = qs.toString();
    return base + (s ? '?' + s : '');
  }

  // ---------------------------------------------------------------- sessions list

  // Where sessions come from: this machine's agents, another machine (imported), or the
  // archive (the agent deleted its file).
  const SOURCES = {
    '': { label: 'All sources', params: {} },
    native: { label: 'This machine', params: { imported: 'false' } },
    imported: { label: 'Imported', params: { imported: 'true' } },
    archived: { label: 'Archived', params: { archived: 'true' } },
  };

  const listView = {
    root: null,
    key: null,
    items: [],
    keys: new Set(),
    next: null,
    loading: false,
    dirty: false,
    lastDay: null,
    params: { agent: '', q: '', source: '' },

    build() {
      this.root = $('#view-sessions');
      this.agentBox = h('span');
      this.machineBox = h('span');
      this.q = h('input', { type: 'search', class: 'filter-q', placeholder: 'Filter by title or first prompt…', 'aria-label': 'Filter sessions', autocomplete: 'off', spellcheck: 'false' });
      let timer = null;
      this.q.addEventListener('input', () => {
        clearTimeout(timer);
        timer = setTimeout(() => setHash(queryHash('#/', Object.assign({}, this.params, { q: this.q.value.trim() })), true), 300);
      });
      this.source = h(
        'select',
        { class: 'source-select', 'aria-label': 'Source' },
        Object.keys(SOURCES).map((k) => h('option', { value: k, text: SOURCES[k].label })),
      );
      this.source.addEventListener('change', () => setHash(queryHash('#/', Object.assign({}, this.params, { source: this.source.value }))));
      this.count = h('span', { class: 'count' });
      this.list = h('div', { class: 'slist', role: 'list' });
      this.moreBox = h('div', { class: 'more-box' });
      add(this.root, [
        h('div', { class: 'toolbar' }, h('h1', { text: 'Sessions' }), this.agentBox, this.machineBox, this.source, this.q, this.count),
        this.list,
        this.moreBox,
      ]);
    },

    show(params) {
      if (!this.root) this.build();
      const src = params.get('source') || '';
      const p = { agent: params.get('agent') || '', machine: params.get('machine') || '', q: params.get('q') || '', source: SOURCES[src] ? src : '' };
      this.params = p;
      clear(this.agentBox).append(agentSelect(p.agent, (v) => setHash(queryHash('#/', Object.assign({}, p, { agent: v })))));
      const machines = machineSelect(p.machine, (v) => setHash(queryHash('#/', Object.assign({}, p, { machine: v }))));
      clear(this.machineBox);
      if (machines) this.machineBox.append(machines);
      this.source.value = p.source;
      if (document.activeElement !== this.q) this.q.value = p.q;
      const key = JSON.stringify(p);
      if (key !== this.key) {
        this.key = key;
        this.reload();
      } else if (this.dirty) {
        this.refresh();
      }
    },

    apiParams(cursor) {
      return Object.assign({ agent: this.params.agent, machine: this.params.machine || undefined, q: this.params.q, limit: SESSION_PAGE, cursor }, SOURCES[this.params.source].params);
    },

    async reload() {
      const key = this.key;
      this.loading = true;
      this.dirty = false;
      this.count.textContent = 'Loading…';
      try {
        const body = await api('/sessions', this.apiParams());
        if (key !== this.key) return;
        this.items = [];
        this.keys = new Set();
        this.lastDay = null;
        clear(this.list);
        this.append(body.sessions || []);
        this.next = body.next || null;
        this.renderMore();
        if (!this.items.length) {
          this.list.append(h('div', { class: 'empty' }, this.params.q || this.params.agent || this.params.source ? 'No session matches these filters.' : 'No sessions yet. agtaild lists every session it finds in the agents\u2019 session folders.'));
        }
      } catch (err) {
        handleError(err, 'Sessions');
      } finally {
        if (key === this.key) {
          this.loading = false;
          this.renderMore();
          this.updateCount();
        }
      }
    },

    async loadMore() {
      if (!this.next || this.loading) return;
      const key = this.key;
      this.loading = true;
      this.renderMore();
      try {
        const body = await api('/sessions', this.apiParams(this.next));
        if (key !== this.key) return;
        this.append(body.sessions || []);
        this.next = body.next || null;
      } catch (err) {
        handleError(err, 'Sessions');
      } finally {
        this.loading = false;
        this.renderMore();
        this.updateCount();
      }
    },

    // New or updated sessions (from /changes): fetch the first page again and merge it in,
    // keeping whatever further pages are already loaded.
    async refresh() {
      if (this.loading) {
        this.dirty = true;
        return;
      }
      this.dirty = false;
      const key = this.key;
      try {
        const body = await api('/sessions', this.apiParams());
        if (key !== this.key) return;
        const first = body.sessions || [];
        const firstKeys = new Set(first.map((s) => s.agent + ':' + s.id));
        const rest = this.items.filter((s) => !firstKeys.has(s.agent + ':' + s.id));
        const lastFirst = first.length ? sessionDate(first[first.length - 1]) : null;
        const older = rest.filter((s) => {
          const d = sessionDate(s);
          return !lastFirst || !d || d <= lastFirst;
        });
        this.items = [];
        this.keys = new Set();
        this.lastDay = null;
        clear(this.list);
        this.append(first.concat(older));
        if (!this.next || older.length === 0) this.next = body.next || this.next;
        this.renderMore();
        this.updateCount();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) handleError(err);
      }
    },

    append(sessions) {
      const frag = document.createDocumentFragment();
      for (const s of sessions) {
        const k = s.agent + ':' + s.id;
        if (this.keys.has(k)) continue;
        this.keys.add(k);
        this.items.push(s);
        const d = sessionDate(s);
        const label = dayLabel(d);
        if (label !== this.lastDay) {
          frag.append(h('div', { class: 'day', role: 'presentation', text: label }));
          this.lastDay = label;
        }
        frag.append(sessionRow(s));
      }
      this.list.append(frag);
    },

    renderMore() {
      clear(this.moreBox);
      if (this.next) {
        this.moreBox.append(h('button', { type: 'button', class: 'load-more', disabled: this.loading, text: this.loading ? 'Loading…' : 'Load more sessions', onclick: () => this.loadMore() }));
      }
    },

    updateCount() {
      const n = this.items.length;
      this.count.textContent = n ? fmtInt(n) + (this.next ? '+' : '') + ' session' + (n === 1 && !this.next ? '' : 's') : '';
    },
  };

  function sessionRow(s) {
    const d = sessionDate(s);
    const meta = [agentBadge(s.agent)];
    if (s.project) meta.push(h('span', { class: 'project', text: s.project, title: s.cwd || null }));
    if (s.git_branch) meta.push(h('span', { class: 'branch', text: s.git_branch }));
    if (s.models && s.models.length) meta.push(h('span', { class: 'models', text: s.models.join(', ') }));
    return h(
      'a',
      { class: 'srow', href: sessionHash(s.agent, s.id), role: 'listitem', dataset: { agent: s.agent, id: s.id } },
      h('div', { class: 'srow-main' }, h('div', { class: 'srow-title', text: sessionTitle(s) }), h('div', { class: 'srow-meta' }, meta, sessionTags(s))),
      h(
        'div',
        { class: 'srow-side' },
        h('time', { text: rowTime(d), title: fmtFull(d), datetime: d ? d.toISOString() : null }),
        h(
          'span',
          { class: 'counts' },
          fmtInt(s.messages || 0) + ' msg' + (s.messages === 1 ? '' : 's'),
          s.usage && s.usage.total_tokens ? ' · ' + fmtTokens(s.usage.total_tokens) + ' tok' : null,
        ),
      ),
    );
  }

  // ---------------------------------------------------------------- one session

  const sessionView = {
    root: null,
    gen: 0,
    routeKey: null,
    agent: null,
    id: null,
    session: null,
    next: null,
    loading: false,
    bySeq: new Map(),
    json: new Map(),
    pending: new Set(),
    maxSeq: -1,
    lastRole: null,
    follow: null,
    children: new Map(),
    childBox: null,
    resumeBox: null,
    refreshTimer: null,
    branchSel: new Map(), // fork → the alternative chosen with its switch
    switches: new Map(), // fork → its switch element
    forkInfo: new Map(), // fork → { alts, active, depth } (forkTable)
    prevSeq: null, // before_seq of the page before the first shown event (null: at the start)
    edgeObserver: null,

    build() {
      this.root = $('#view-session');
    },

    async show(agent, id, params) {
      if (!this.root) this.build();
      const at = params.get('at');
      const atSeq = at !== null && at !== '' && !isNaN(Number(at)) ? Number(at) : null;
      const routeKey = agent + '\u0000' + id;
      if (routeKey === this.routeKey && this.session) {
        if (atSeq !== null) await this.reveal(atSeq);
        this.startFollow();
        return;
      }
      this.close();
      const gen = ++this.gen;
      this.routeKey = routeKey;
      this.agent = agent;
      this.id = id;
      clear(this.root).append(h('div', { class: 'loading', text: 'Loading session…' }));
      try {
        const eventsPath = sessionPath(agent, id) + '/events';
        const [sbody, ebody, before] = await Promise.all([
          api(sessionPath(agent, id)),
          api(eventsPath, atSeq !== null ? { after_seq: atSeq - 1, limit: EVENT_PAGE } : { limit: EVENT_PAGE }),
          atSeq !== null && atSeq > 0 ? api(eventsPath, { before_seq: atSeq, limit: WINDOW_BEFORE }) : Promise.resolve(null),
        ]);
        if (gen !== this.gen) return;
        this.session = sbody.session || sbody;
        // The route may name a unique prefix of the id; from here on use the whole id.
        this.agent = this.session.agent || agent;
        this.id = this.session.id || id;
        this.forkInfo = forkTable(this.session);
        this.renderShell();
        const earlier = (before && before.events) || [];
        this.appendEvents(earlier.concat(ebody.events || []));
        this.next = ebody.next || null;
        this.prevSeq = earlier.length ? before.prev_seq : ebody.prev_seq;
        if (this.prevSeq === undefined) this.prevSeq = null;
        this.renderMore();
        this.watchEdges();
        this.loadChildren(gen);
        this.loadResume(gen);
        if (atSeq !== null) await this.reveal(atSeq);
        else window.scrollTo(0, 0);
        this.startFollow();
      } catch (err) {
        if (gen !== this.gen) return;
        clear(this.root);
        if (err instanceof ApiError && err.status === 404) {
          this.root.append(h('div', { class: 'empty' }, h('h1', { text: 'Session not found' }), h('p', { text: agent + ':' + id }), h('a', { href: '#/', text: '← All sessions' })));
        } else {
          handleError(err, 'Session');
        }
      }
    },

    close() {
      this.stopFollow();
      clearTimeout(this.refreshTimer);
      this.gen++;
      this.routeKey = this.agent = this.id = this.session = null;
      this.next = null;
      this.bySeq = new Map();
      this.json = new Map();
      this.pending = new Set();
      this.children = new Map();
      this.childBox = this.resumeBox = null;
      this.maxSeq = -1;
      this.lastRole = null;
      this.branchSel = new Map();
      this.switches = new Map();
      this.forkInfo = new Map();
      this.prevSeq = null;
      if (this.edgeObserver) this.edgeObserver.disconnect();
      this.edgeObserver = null;
    },

    renderShell() {
      this.head = this.renderHead();
      this.liveBadge = h('span', { class: 'tag live-badge', hidden: true, text: 'following live' });
      this.events = h('div', { class: 'transcript' });
      this.moreBox = h('div', { class: 'more-box' });
      this.topBox = h('div', { class: 'more-box top' });
      clear(this.root);
      add(this.root, [h('nav', { class: 'crumbs' }, h('a', { href: '#/', text: '← Sessions' }), this.liveBadge), this.head, this.topBox, this.events, this.moreBox]);
    },

    renderHead() {
      const s = this.session;
      const started = toDate(s.started);
      const ended = toDate(s.ended);
      const facts = [];
      const fact = (label, value, title, wide) => {
        if (value === null || value === undefined || value === '') return;
        facts.push(h('div', { class: wide ? 'fact wide' : 'fact' }, h('dt', { text: label }), h('dd', { text: String(value), title: title || String(value) })));
      };
      fact('Project', s.project, s.cwd);
      fact('Directory', s.cwd);
      fact('Branch', s.git_branch);
      fact('Models', (s.models || []).join(', '));
      fact('Started', started ? fmtFull(started) : null);
      fact('Duration', started && ended ? fmtDuration(ended - started) : null);
      fact('Messages', fmtInt(s.messages || 0));
      fact('Origin', s.origin);
      fact('Version', s.version);
      if (s.compactions) fact('Compactions', s.compactions);
      fact('File', s.path, null, true);

      const parentBox = h('div', { class: 'parent' });
      if (s.parent && s.parent.id) {
        const pagent = s.parent.agent || s.agent;
        const link = h('a', { href: sessionHash(pagent, s.parent.id), text: 'session ' + shortId(s.parent.id) });
        parentBox.append('↳ Subagent of ', link);
        api(sessionPath(pagent, s.parent.id))
          .then((b) => {
            link.textContent = sessionTitle(b.session || b);
          })
          .catch(() => {});
      }
      return h(
        'header',
        { class: 'session-head' },
        h('h1', { class: 'session-title', text: sessionTitle(s) }),
        h('div', { class: 'session-tags' }, agentBadge(s.agent), h('span', { class: 'sid', text: s.id, title: 'Session id' }), sessionTags(s)),
        parentBox,
        h('dl', { class: 'facts' }, facts),
        usageCards(s.usage),
        this.resumeBox,
        this.childBox,
      );
    },

    eventJson(ev) {
      try {
        return JSON.stringify(ev);
      } catch (_) {
        return String(ev.seq);
      }
    },

    appendEvents(events) {
      const frag = document.createDocumentFragment();
      for (const ev of events) {
        if (!ev || typeof ev.seq !== 'number') continue;
        const json = this.eventJson(ev);
        const old = this.bySeq.get(ev.seq);
        if (old) {
          // The same event again, maybe completed (a tool result merged into its call).
          if (this.json.get(ev.seq) !== json) {
            const node = renderEvent(ev, old.dataset.role === 'shown', this);
            this.markBranch(node, ev, null);
            if (old.classList.contains('target')) node.classList.add('target');
            this.keepOpen(old, node);
            old.replaceWith(node);
            this.bySeq.set(ev.seq, node);
            this.json.set(ev.seq, json);
            this.track(ev);
          }
          continue;
        }
        if (ev.seq < this.maxSeq) continue; // out of order: only appends are expected
        // Hooks and system records do not interrupt a turn: the next message of the same
        // role gets no new header.
        const role = roleGroup(ev);
        const showRole = role !== this.lastRole && role !== 'meta';
        if (role !== 'meta') this.lastRole = role;
        const node = renderEvent(ev, showRole, this);
        this.markBranch(node, ev, frag);
        this.bySeq.set(ev.seq, node);
        this.json.set(ev.seq, json);
        this.track(ev);
        this.maxSeq = ev.seq;
        frag.append(node);
      }
      const empty = $('.transcript > .empty', this.root);
      if (empty && frag.childNodes.length) empty.remove();
      this.events.append(frag);
      if (!this.events.firstChild && !this.next) this.events.append(h('div', { class: 'empty', text: 'This session has no events yet.' }));
    },

    // ---- conversation branches (rewinds, edited prompts): see agtaild/adapters/claude/branches.py.
    // Events below a fork carry extra.branch/fork/alt; the active branch is shown, and a switch
    // at each fork of the active chain shows another continuation in its place.
    markBranch(node, ev, frag) {
      const br = branchMark(ev);
      if (!br) return;
      node.dataset.branch = br.branch;
      node.dataset.fork = br.fork;
      node.dataset.alt = String(br.alt);
      if (frag && this.forkInfo.has(br.fork) && !this.switches.has(br.fork)) {
        const sw = this.branchSwitch(br.fork);
        this.switches.set(br.fork, sw);
        frag.append(sw);
      }
      node.hidden = !this.branchVisible(br.fork, br.alt, br.branch);
    },

    // The shallowest fork where another alternative than the active one is chosen.
    chosenFork() {
      let best = null;
      for (const [fork, alt] of this.branchSel) {
        const info = this.forkInfo.get(fork);
        if (!info || alt === info.active) continue;
        if (!best || info.depth < best.depth) best = { fork, alt, depth: info.depth };
      }
      return best;
    },

    branchVisible(fork, alt, branch) {
      const chosen = this.chosenFork();
      if (!chosen) return branch !== 'inactive';
      if (fork === chosen.fork) return alt === chosen.alt;
      const info = this.forkInfo.get(fork);
      return branch === 'active' && !!info && info.depth < chosen.depth;
    },

    branchSwitch(fork) {
      const info = this.forkInfo.get(fork);
      const label = h('span', { class: 'branch-label' });
      const step = (d) => {
        const cur = this.branchSel.get(fork) || info.active || 1;
        this.branchSel.set(fork, ((cur - 1 + d + info.alts) % info.alts) + 1);
        this.applyBranches();
      };
      const sw = h(
        'div',
        { class: 'branch-switch', dataset: { fork }, role: 'group', 'aria-label': 'Conversation branches' },
        h('span', { class: 'branch-icon', text: 'Fork' }),
        h('button', { type: 'button', class: 'branch-prev', text: '\u2039', title: 'Previous branch', 'aria-label': 'Previous branch', onclick: () => step(-1) }),
        label,
        h('button', { type: 'button', class: 'branch-next', text: '\u203a', title: 'Next branch', 'aria-label': 'Next branch', onclick: () => step(1) }),
      );
      this.labelSwitch(sw, fork);
      return sw;
    },

    labelSwitch(sw, fork) {
      const info = this.forkInfo.get(fork);
      const alt = this.branchSel.get(fork) || info.active || 1;
      const label = sw.querySelector('.branch-label');
      label.textContent = 'branch ' + alt + ' of ' + info.alts + (alt === info.active ? '' : info.active ? ' \u00b7 not the current branch' : '');
      sw.classList.toggle('off', alt !== info.active);
    },

    applyBranches() {
      const chosen = this.chosenFork();
      for (const node of this.events.querySelectorAll('.ev[data-fork]')) {
        node.hidden = !this.branchVisible(node.dataset.fork, Number(node.dataset.alt), node.dataset.branch);
      }
      for (const [fork, sw] of this.switches) {
        const info = this.forkInfo.get(fork);
        sw.hidden = !!chosen && info.depth > chosen.depth;
        this.labelSwitch(sw, fork);
      }
    },

    // ---- the window of a huge session (see WINDOW_BEFORE / MAX_EVENTS_IN_DOM).
    firstSeq() {
      const first = this.events && this.events.querySelector('.ev[data-seq]');
      return first ? Number(first.dataset.seq) : null;
    },

    // Replace the shown events by the window around `seq`.
    async openWindow(seq) {
      const gen = this.gen;
      const path = sessionPath(this.agent, this.id) + '/events';
      const [before, after] = await Promise.all([api(path, { before_seq: seq, limit: WINDOW_BEFORE }), api(path, { after_seq: seq - 1, limit: EVENT_PAGE })]);
      if (gen !== this.gen) return;
      this.stopFollow();
      this.resetEvents();
      this.switches = new Map();
      const earlier = before.events || [];
      this.appendEvents(earlier.concat(after.events || []));
      this.next = after.next || null;
      this.prevSeq = earlier.length ? before.prev_seq : after.prev_seq;
      if (this.prevSeq === undefined) this.prevSeq = null;
      this.renderMore();
      if (!this.next) this.startFollow();
    },

    async loadEarlier() {
      if (this.prevSeq === null || this.loadingEarlier) return false;
      const gen = this.gen;
      this.loadingEarlier = true;
      this.renderMore();
      try {
        const body = await api(sessionPath(this.agent, this.id) + '/events', { before_seq: this.prevSeq, limit: EVENT_PAGE });
        if (gen !== this.gen) return false;
        this.prependEvents(body.events || []);
        this.prevSeq = body.prev_seq === undefined ? null : body.prev_seq;
        this.trimWindow('bottom');
        return true;
      } catch (err) {
        handleError(err, 'Events');
        return false;
      } finally {
        if (gen === this.gen) {
          this.loadingEarlier = false;
          this.renderMore();
        }
      }
    },

    // Earlier events go above the first shown one; the reader's view does not move.
    prependEvents(events) {
      const frag = document.createDocumentFragment();
      let lastRole = null;
      for (const ev of events) {
        if (!ev || typeof ev.seq !== 'number' || this.bySeq.has(ev.seq)) continue;
        const role = roleGroup(ev);
        const node = renderEvent(ev, role !== lastRole && role !== 'meta', this);
        if (role !== 'meta') lastRole = role;
        this.markBranch(node, ev, frag);
        this.bySeq.set(ev.seq, node);
        this.json.set(ev.seq, this.eventJson(ev));
        this.track(ev);
        frag.append(node);
      }
      const doc = document.documentElement;
      const height = doc.scrollHeight;
      this.events.insertBefore(frag, this.events.firstChild);
      window.scrollBy(0, doc.scrollHeight - height);
    },

    // Keep the DOM bounded: drop the events farthest from where the reader is going.
    trimWindow(side) {
      const extra = this.bySeq.size - MAX_EVENTS_IN_DOM;
      if (extra <= 0) return;
      const seqs = [...this.bySeq.keys()].sort((a, b) => a - b);
      const drop = side === 'top' ? seqs.slice(0, extra) : seqs.slice(seqs.length - extra);
      const doc = document.documentElement;
      const height = doc.scrollHeight;
      for (const seq of drop) {
        const node = this.bySeq.get(seq);
        if (node) node.remove();
        this.bySeq.delete(seq);
        this.json.delete(seq);
        this.pending.delete(seq);
      }
      if (side === 'top') {
        this.prevSeq = seqs[extra];
        window.scrollBy(0, doc.scrollHeight - height);
      } else {
        this.stopFollow();
        this.maxSeq = seqs[seqs.length - extra - 1];
        this.next = this.next || 'more';
      }
      this.renderMore();
    },

    // Load further pages when the reader nears either end of the window.
    watchEdges() {
      if (this.edgeObserver || typeof IntersectionObserver === 'undefined') return;
      this.edgeObserver = new IntersectionObserver(
        (entries) => {
          for (const e of entries) {
            if (!e.isIntersecting) continue;
            if (e.target === this.topBox && this.prevSeq !== null) this.loadEarlier();
            else if (e.target === this.moreBox && this.next) this.loadMore();
          }
        },
        { rootMargin: '600px 0px' },
      );
      this.edgeObserver.observe(this.topBox);
      this.edgeObserver.observe(this.moreBox);
    },

    // Which tool calls still wait for their result (re-read when the session changes).
    track(ev) {
      if (ev.kind === 'tool_use' && (ev.result === null || ev.result === undefined) && !ev.is_error) this.pending.add(ev.seq);
      else this.pending.delete(ev.seq);
    },

    keepOpen(oldNode, newNode) {
      const before = oldNode.querySelectorAll('details');
      const after = newNode.querySelectorAll('details');
      for (let i = 0; i < before.length && i < after.length; i++) after[i].open = before[i].open;
    },

    renderMore() {
      if (this.topBox) {
        clear(this.topBox);
        if (this.prevSeq !== null) this.topBox.append(h('button', { type: 'button', class: 'load-more load-earlier', disabled: this.loadingEarlier, text: this.loadingEarlier ? 'Loading…' : 'Load earlier events', onclick: () => this.loadEarlier() }));
      }
      clear(this.moreBox);
      if (this.next) {
        this.moreBox.append(h('button', { type: 'button', class: 'load-more', disabled: this.loading, text: this.loading ? 'Loading…' : 'Load more events', onclick: () => this.loadMore() }));
      }
    },

    async loadMore() {
      if (!this.next || this.loading) return false;
      const gen = this.gen;
      this.loading = true;
      this.renderMore();
      try {
        const body = await api(sessionPath(this.agent, this.id) + '/events', { after_seq: this.maxSeq, limit: EVENT_PAGE });
        if (gen !== this.gen) return false;
        this.appendEvents(body.events || []);
        this.next = body.next || null;
        this.trimWindow('top');
        if (!this.next) this.startFollow();
        return true;
      } catch (err) {
        handleError(err, 'Events');
        return false;
      } finally {
        if (gen === this.gen) {
          this.loading = false;
          this.renderMore();
        }
      }
    },

    // Scroll to the event at (or after) `seq`, loading further pages as needed.
    async reveal(seq) {
      const gen = this.gen;
      const first = this.firstSeq();
      if ((this.next && seq > this.maxSeq + EVENT_PAGE) || (this.prevSeq !== null && first !== null && seq < first)) {
        await this.openWindow(seq);
        if (gen !== this.gen) return;
      }
      while (this.maxSeq < seq && this.next) {
        if (!(await this.loadMore()) || gen !== this.gen) return;
      }
      let node = this.bySeq.get(seq);
      if (!node) {
        let best = null;
        for (const k of this.bySeq.keys()) if (k >= seq && (best === null || k < best)) best = k;
        if (best !== null) node = this.bySeq.get(best);
      }
      if (!node) return;
      if (node.dataset.branch === 'inactive' && this.forkInfo.has(node.dataset.fork)) {
        this.branchSel = new Map([[node.dataset.fork, Number(node.dataset.alt)]]);
        this.applyBranches();
      }
      for (const d of node.querySelectorAll('details')) d.open = true;
      for (const old of this.root.querySelectorAll('.ev.target')) old.classList.remove('target');
      node.classList.add('target');
      node.scrollIntoView({ block: 'center' });
    },

    async loadChildren(gen) {
      // Subagent sessions spawned from this one, so that their tool calls link to them.
      // They share the parent's directory and start after it.
      const s = this.session;
      if (!s.cwd) return;
      let kids = [];
      try {
        const body = await api('/sessions', { cwd: s.cwd, since: s.started || null, limit: 500 });
        kids = (body.sessions || []).filter((c) => c.parent && c.parent.id === s.id && (c.parent.agent || c.agent) === s.agent);
      } catch (_) {
        return;
      }
      if (gen !== this.gen || !kids.length) return;
      kids.sort((a, b) => String(a.started || '').localeCompare(String(b.started || '')));
      this.childBox = h('div', { class: 'children' }, h('span', { class: 'label', text: kids.length === 1 ? 'Subagent' : kids.length + ' subagents' }));
      for (const c of kids) {
        const toolId = c.parent && c.parent.tool_use_id;
        if (toolId) this.children.set(toolId, c);
        this.childBox.append(h('a', { href: sessionHash(c.agent || s.agent, c.id), class: 'child-link', text: oneLine(sessionTitle(c), 80) }));
      }
      this.head.append(this.childBox);
      // Link the tool calls already on the page.
      for (const node of this.events.querySelectorAll('.tool-wrap[data-tool-use-id]')) {
        const child = this.children.get(node.dataset.toolUseId);
        if (child && !node.querySelector('.child-link')) node.append(childLink(child, s.agent));
      }
    },

    async loadResume(gen) {
      const s = this.session;
      if (!s.resumable || s.imported || s.archived) return;
      try {
        const doc = await api(sessionPath(s.agent, s.id) + '/resume');
        if (gen !== this.gen || !Array.isArray(doc.argv) || !doc.argv.length) return;
        const cmd = doc.argv.map(shellQuote).join(' ');
        this.resumeBox = h(
          'div',
          { class: 'resume' },
          h('span', { class: 'label', text: 'Resume' }),
          h('code', { text: doc.cwd ? 'cd ' + shellQuote(doc.cwd) + ' && ' + cmd : cmd }),
          doc.cwd && doc.cwd_exists === false ? tag('directory is gone', 'warn') : null,
        );
        this.head.insertBefore(this.resumeBox, this.childBox && this.childBox.parentNode === this.head ? this.childBox : null);
      } catch (_) {
        // Not resumable after all (the agent has no resume command): say nothing.
      }
    },

    // The session changed on disk (from /changes): update the header, and re-read tool
    // calls that were waiting for their result (the follow stream sends each event once).
    changed() {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => this.refreshNow(), 400);
    },

    async refreshNow() {
      const gen = this.gen;
      if (!this.session) return;
      try {
        const body = await api(sessionPath(this.agent, this.id));
        if (gen !== this.gen) return;
        this.session = body.session || body;
        const forks = forkTable(this.session);
        if (JSON.stringify([...forks]) !== JSON.stringify([...this.forkInfo])) {
          // A rewind or an edited prompt moved the active branch: marks of events already on
          // the page changed too, so the shown window is read again.
          this.forkInfo = forks;
          this.branchSel = new Map();
          await this.openWindow(this.firstSeq() || 0);
          if (gen !== this.gen) return;
        }
        const head = this.renderHead();
        this.head.replaceWith(head);
        this.head = head;
        if (this.pending.size) {
          let after = Math.min(...this.pending) - 1;
          while (gen === this.gen) {
            const page = await api(sessionPath(this.agent, this.id) + '/events', { after_seq: after, limit: EVENT_PAGE });
            if (gen !== this.gen) return;
            const events = (page.events || []).filter((ev) => this.bySeq.has(ev.seq) || (!this.next && !this.follow));
            this.appendEvents(events);
            const last = (page.events || []).slice(-1)[0];
            if (!page.next || !last || last.seq >= this.maxSeq) break;
            after = last.seq;
          }
        }
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) handleError(err);
      }
    },

    startFollow() {
      if (!state.live || this.follow || !this.session || this.next || loggedOut || streamsPaused) return;
      const url = apiUrl(sessionPath(this.agent, this.id) + '/follow', { after_seq: this.maxSeq });
      const es = new EventSource(url);
      this.follow = es;
      const parse = (msg) => {
        try {
          return JSON.parse(msg.data);
        } catch (_) {
          return null;
        }
      };
      es.addEventListener('event', (msg) => this.onLive(parse(msg)));
      es.addEventListener('message', (msg) => this.onLive(parse(msg)));
      es.addEventListener('reset', () => this.resetEvents());
      es.addEventListener('removed', () => {
        this.stopFollow();
        banner('This session is gone: its file was removed and agtail has no archived copy.', 'info');
      });
      es.addEventListener('open', () => {
        if (this.liveBadge && this.follow === es) this.liveBadge.hidden = false;
      });
      es.addEventListener('error', () => {
        if (this.liveBadge) this.liveBadge.hidden = true;
        if (es.readyState === EventSource.CLOSED && this.follow === es) this.follow = null;
      });
    },

    stopFollow() {
      if (this.follow) this.follow.close();
      this.follow = null;
      if (this.liveBadge) this.liveBadge.hidden = true;
    },

    // The file was truncated or replaced: the stream starts again from the first event.
    resetEvents() {
      this.bySeq = new Map();
      this.json = new Map();
      this.pending = new Set();
      this.maxSeq = -1;
      this.lastRole = null;
      clear(this.events);
    },

    onLive(payload) {
      if (!payload || typeof payload !== 'object') return;
      let events = [];
      if (Array.isArray(payload)) events = payload;
      else if (Array.isArray(payload.events)) events = payload.events;
      else if (typeof payload.seq === 'number' && typeof payload.kind === 'string') events = [payload];
      if (!events.length) return;
      const doc = document.documentElement;
      const nearBottom = window.innerHeight + window.scrollY >= doc.scrollHeight - 160;
      this.appendEvents(events);
      if (nearBottom) window.scrollTo(0, doc.scrollHeight);
    },
  };

  function shellQuote(s) {
    const str = String(s);
    return /^[A-Za-z0-9_@%+=:,./-]+$/.test(str) ? str : "'" + str.replace(/'/g, "'\\''") + "'";
  }

  // An event's branch mark, or null (sessions that never forked carry none).
  function branchMark(ev) {
    const x = ev && ev.extra;
    if (!x || (x.branch !== 'active' && x.branch !== 'inactive') || typeof x.fork !== 'string') return null;
    return { branch: x.branch, fork: x.fork, alt: Number(x.alt) || 1, alts: Number(x.alts) || 1 };
  }

  // The forks on the active chain (session.extra.forks), with their order along it.
  function forkTable(s) {
    const out = new Map();
    const forks = s && s.extra && Array.isArray(s.extra.forks) ? s.extra.forks : [];
    let depth = 0;
    for (const f of forks) {
      if (!f || typeof f.fork !== 'string' || !f.on_active_chain || !(f.alts > 1)) continue;
      out.set(f.fork, { alts: Number(f.alts), active: Number(f.active) || 0, depth: depth++ });
    }
    return out;
  }

  function roleGroup(ev) {
    if (ev.kind === 'hook' || ev.kind === 'system' || ev.kind === 'summary' || ev.kind === 'unknown') return 'meta';
    if (ev.kind === 'tool_result') return 'assistant';
    return ev.role === 'user' ? 'user' : ev.role === 'assistant' || !ev.role ? 'assistant' : ev.role;
  }

  // Usage with no time at all (neither the records nor their sessions say when) is on no day.
  function undatedNote(u) {
    if (!u || !u.total_tokens) return null;
    return h('p', { class: 'muted undated', text: 'Not in this range: ' + fmtTokens(u.total_tokens) + ' tokens (' + fmtCost(u.cost_usd) + ') of usage with no time at all (neither the records nor their sessions say when).' });
  }

  function usageCards(u) {
    if (!u) return null;
    const card = (label, value, title) => h('div', { class: 'ucard', title: title || null }, h('div', { class: 'uval', text: value }), h('div', { class: 'ulabel', text: label }));
    return h(
      'div',
      { class: 'usage' },
      card('input', fmtTokens(u.input_tokens), fmtInt(u.input_tokens) + ' input tokens (without cache)'),
      card('output', fmtTokens(u.output_tokens), fmtInt(u.output_tokens) + ' output tokens'),
      card('cache read', fmtTokens(u.cache_read_tokens), fmtInt(u.cache_read_tokens) + ' tokens read from cache'),
      card('cache write', fmtTokens(u.cache_write_tokens), fmtInt(u.cache_write_tokens) + ' tokens written to cache'),
      u.reasoning_tokens ? card('reasoning', fmtTokens(u.reasoning_tokens), fmtInt(u.reasoning_tokens) + ' reasoning tokens (part of output)') : null,
      card('total', fmtTokens(u.total_tokens), fmtInt(u.total_tokens) + ' tokens in all'),
      card('cost', fmtCost(u.cost_usd), u.cost_usd === null || u.cost_usd === undefined ? 'Price unknown for a model of this session' : 'Estimated at list prices'),
    );
  }

  function childLink(child, agent) {
    return h('a', { class: 'child-link', href: sessionHash(child.agent || agent, child.id), text: '↳ subagent transcript: ' + sessionTitle(child) });
  }

  // ---------------------------------------------------------------- events

  const ROLE_LABEL = { user: 'User', assistant: 'Assistant', meta: null };

  function renderEvent(ev, showRole, view) {
    const group = roleGroup(ev);
    const node = h('div', {
      class: 'ev ev-' + String(ev.kind).replace(/[^a-z_]/g, '') + ' role-' + group + (ev.sidechain ? ' sidechain' : ''),
      id: 'ev-' + ev.seq,
      dataset: { seq: ev.seq, role: showRole ? 'shown' : 'hidden' },
    });
    const d = toDate(ev.ts);
    if (showRole && ROLE_LABEL[group] !== null) {
      const label = ROLE_LABEL[group] || String(ev.role || group);
      node.append(
        h(
          'div',
          { class: 'ev-head' },
          h('span', { class: 'role', text: label }),
          ev.model && group === 'assistant' ? h('span', { class: 'model', text: ev.model }) : null,
          d ? h('time', { text: fmtClock(d), title: fmtFull(d) }) : null,
        ),
      );
    }
    const anchor = h('a', { class: 'ev-anchor', href: sessionHash(view.agent, view.id, ev.seq), title: 'Link to this event' + (d ? ' · ' + fmtFull(d) : ''), text: '#' + ev.seq });
    let body;
    switch (ev.kind) {
      case 'text':
        body = richText(ev.text || '', TEXT_LIMIT);
        break;
      case 'thinking':
        body = h('details', { class: 'fold thinking' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Thinking' }), h('span', { class: 'fold-hint', text: oneLine(ev.text, 120) })), richText(ev.text || '', TEXT_LIMIT));
        break;
      case 'tool_use':
        body = toolBlock(ev, view);
        break;
      case 'tool_result':
        body = h(
          'details',
          { class: 'fold tool' + (ev.is_error ? ' error' : '') },
          h('summary', {}, h('span', { class: 'fold-title', text: 'Tool result' }), ev.tool ? h('span', { class: 'tool-name', text: ev.tool }) : null, h('span', { class: 'fold-hint', text: oneLine(resultText(ev.result !== null && ev.result !== undefined ? ev.result : ev.text), 120) })),
          h('div', { class: 'tool-body' }, resultView(ev.result !== null && ev.result !== undefined ? ev.result : ev.text, ev.is_error)),
        );
        break;
      case 'hook':
        body = hookBlock(ev);
        break;
      case 'summary':
      case 'system':
        body = metaBlock(ev);
        break;
      default:
        body = h('details', { class: 'fold meta unknown' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Unmapped record' }), h('span', { class: 'fold-hint', text: oneLine(ev.text || (ev.raw && ev.raw.type) || '', 100) })), preBlock(pretty(ev.raw !== null && ev.raw !== undefined ? ev.raw : ev.text), 'json'));
    }
    node.append(h('div', { class: 'ev-body' }, body, anchor));
    return node;
  }

  function toolSummary(tool, input) {
    if (input === null || input === undefined) return '';
    if (typeof input === 'string') return oneLine(input, 160);
    if (typeof input !== 'object') return oneLine(String(input), 160);
    const keys = ['command', 'cmd', 'file_path', 'path', 'filePath', 'pattern', 'url', 'query', 'description', 'prompt', 'skill', 'subject', 'notebook_path'];
    for (const k of keys) {
      const v = input[k];
      if (typeof v === 'string' && v) return oneLine(v, 160);
      if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string')) return oneLine(v.join(' '), 160);
    }
    for (const k of Object.keys(input)) if (typeof input[k] === 'string' && input[k]) return oneLine(input[k], 160);
    return '';
  }

  function toolBlock(ev, view) {
    const hasResult = ev.result !== null && ev.result !== undefined;
    const status = ev.is_error ? h('span', { class: 'status err', text: 'error' }) : hasResult ? h('span', { class: 'status ok', text: '✓', title: 'Completed' }) : h('span', { class: 'status pending', text: '…', title: 'No result yet' });
    const details = h(
      'details',
      { class: 'fold tool' + (ev.is_error ? ' error' : ''), dataset: ev.tool_use_id ? { toolUseId: ev.tool_use_id } : null },
      h('summary', {}, h('span', { class: 'tool-name', text: ev.tool || 'tool' }), h('span', { class: 'fold-hint mono', text: toolSummary(ev.tool, ev.input) }), status),
      h(
        'div',
        { class: 'tool-body' },
        h('div', { class: 'tool-sec' }, h('div', { class: 'sec-label', text: 'Input' }), inputView(ev.input)),
        hasResult || ev.is_error ? h('div', { class: 'tool-sec' }, h('div', { class: 'sec-label', text: ev.is_error ? 'Error' : 'Result' }), resultView(ev.result, ev.is_error)) : null,
      ),
    );
    const edit = editOf(ev);
    const wrap = h('div', { class: 'tool-wrap', dataset: ev.tool_use_id ? { toolUseId: ev.tool_use_id } : null }, details, edit ? diffFold(edit) : null);
    const child = ev.tool_use_id && view.children.get(ev.tool_use_id);
    if (child) wrap.append(childLink(child, view.agent));
    return wrap;
  }

  // ---- edits as diffs: adapters put every agent's edit in one shape, extra.edit =
  // { files: [{ path, op, hunks: [{ old_start, new_start, lines: [' ctx', '-old', '+new'] }], numbered, cut }] }.
  const DIFF_LINES = 300; // diff lines shown before "show all"

  function editOf(ev) {
    const e = ev && ev.extra && ev.extra.edit;
    return e && Array.isArray(e.files) && e.files.length ? e : null;
  }

  function diffFold(edit) {
    let added = 0;
    let removed = 0;
    for (const f of edit.files) {
      for (const hk of (f && f.hunks) || []) {
        for (const l of hk.lines || []) {
          if (typeof l !== 'string') continue;
          if (l[0] === '+') added++;
          else if (l[0] === '-') removed++;
        }
      }
    }
    const paths = edit.files.map((f) => String((f && f.path) || '?'));
    return h(
      'details',
      { class: 'fold diff-fold', open: true },
      h('summary', {}, h('span', { class: 'fold-title', text: 'Diff' }), h('span', { class: 'fold-hint mono', text: oneLine(paths.join(', '), 120) }), h('span', { class: 'diff-stat' }, h('span', { class: 'add', text: '+' + added }), ' ', h('span', { class: 'del', text: '\u2212' + removed }))),
      diffView(edit, DIFF_LINES),
    );
  }

  function diffView(edit, limit) {
    const box = h('div', { class: 'diff' });
    let budget = limit;
    let hidden = 0;
    for (const f of edit.files) {
      if (!f || typeof f !== 'object') continue;
      const op = f.op === 'create' ? ' (new file)' : f.op === 'delete' ? ' (deleted)' : '';
      box.append(h('div', { class: 'diff-file mono', text: String(f.path || '?') + op }));
      for (const hk of Array.isArray(f.hunks) ? f.hunks : []) {
        let oldNo = Number(hk.old_start) || 1;
        let newNo = Number(hk.new_start) || 1;
        const lines = (hk.lines || []).filter((l) => typeof l === 'string');
        if (budget !== null && budget <= 0) {
          hidden += lines.length;
          continue;
        }
        const approx = f.numbered ? '' : '~';
        box.append(h('div', { class: 'dl hunk', title: f.numbered ? 'Line numbers of the file' : 'Line numbers counted from the edited snippet (the file position was not recorded)' }, h('span', { class: 'no' }), h('span', { class: 'no' }), h('span', { class: 'code', text: '@@ ' + approx + '-' + oldNo + ' ' + approx + '+' + newNo + ' @@' })));
        for (const l of lines) {
          if (budget !== null) {
            if (budget <= 0) {
              hidden++;
              continue;
            }
            budget--;
          }
          const sign = l[0];
          const body = l.slice(1);
          if (sign === '-') box.append(h('div', { class: 'dl del' }, h('span', { class: 'no', text: oldNo++ }), h('span', { class: 'no' }), h('span', { class: 'code', text: '-' + body })));
          else if (sign === '+') box.append(h('div', { class: 'dl add' }, h('span', { class: 'no' }), h('span', { class: 'no', text: newNo++ }), h('span', { class: 'code', text: '+' + body })));
          else box.append(h('div', { class: 'dl ctx' }, h('span', { class: 'no', text: oldNo++ }), h('span', { class: 'no', text: newNo++ }), h('span', { class: 'code', text: ' ' + body })));
        }
      }
      if (f.cut) box.append(h('div', { class: 'dl cut', text: '\u2026 ' + fmtInt(f.cut) + ' more diff lines were not recorded (a very large edit)' }));
    }
    if (hidden) {
      box.append(h('button', { type: 'button', class: 'more', text: 'Show ' + fmtInt(hidden) + ' more diff lines', onclick: () => box.replaceWith(diffView(edit, null)) }));
    }
    return box;
  }

  function inputView(input) {
    if (input === null || input === undefined) return h('div', { class: 'muted', text: '(no input)' });
    if (typeof input !== 'object' || Array.isArray(input)) return preBlock(pretty(input), typeof input === 'string' ? '' : 'json');
    const keys = Object.keys(input);
    if (!keys.length) return h('div', { class: 'muted', text: '(no input)' });
    const grid = h('div', { class: 'kv' });
    for (const k of keys) {
      const v = input[k];
      const cls = k === 'old_string' ? 'del' : k === 'new_string' ? 'add' : '';
      let val;
      if (typeof v === 'string') {
        val = v.includes('\n') || v.length > 120 || cls ? preBlock(v, cls) : h('span', { class: 'mono', text: v });
      } else if (v !== null && typeof v === 'object') {
        val = preBlock(pretty(v), 'json');
      } else {
        val = h('span', { class: 'mono', text: String(v) });
      }
      grid.append(h('div', { class: 'k', text: k }), h('div', { class: 'v' }, val));
    }
    return grid;
  }

  function resultText(result) {
    if (result === null || result === undefined) return '';
    if (typeof result === 'string') return result;
    if (Array.isArray(result)) {
      return result.map((b) => (b && typeof b === 'object' ? (typeof b.text === 'string' ? b.text : b.type ? '[' + b.type + ']' : '') : String(b))).join('\n');
    }
    if (typeof result === 'object') {
      for (const k of ['output', 'stdout', 'content', 'text']) if (typeof result[k] === 'string') return result[k];
    }
    return pretty(result);
  }

  function resultView(result, isError) {
    const cls = isError ? 'err' : '';
    if (result === null || result === undefined) return h('div', { class: 'muted', text: '(empty)' });
    if (typeof result === 'string') return preBlock(result, cls);
    if (Array.isArray(result) && result.every((b) => b && typeof b === 'object' && typeof b.type === 'string')) {
      const box = h('div', { class: 'blocks' });
      for (const b of result) {
        if (typeof b.text === 'string') box.append(preBlock(b.text, cls));
        else box.append(h('div', { class: 'muted', text: '[' + b.type + ']' }));
      }
      return box;
    }
    return preBlock(pretty(result), 'json ' + cls);
  }

  function hookBlock(ev) {
    const hk = ev.hook || {};
    const label = ['Hook', hk.event, hk.tool].filter(Boolean).join(' · ');
    const hint = hk.command || oneLine(hk.text || ev.text || '', 120);
    const detail = [];
    if (hk.command) detail.push(h('div', { class: 'kv' }, h('div', { class: 'k', text: 'command' }), h('div', { class: 'v' }, h('span', { class: 'mono', text: hk.command }))));
    if (hk.plugin) detail.push(h('div', { class: 'kv' }, h('div', { class: 'k', text: 'plugin' }), h('div', { class: 'v', text: hk.plugin })));
    const text = hk.text || ev.text;
    if (text) detail.push(preBlock(text, ''));
    if (!detail.length) return h('div', { class: 'metaline' }, h('span', { class: 'fold-title', text: label }));
    return h('details', { class: 'fold meta hook' }, h('summary', {}, h('span', { class: 'fold-title', text: label }), h('span', { class: 'fold-hint mono', text: oneLine(hint, 120) })), h('div', { class: 'tool-body' }, detail));
  }

  // A compaction: an inline divider; the summary the agent wrote stays folded under it.
  function compactionBlock(ev) {
    const x = ev.extra || {};
    const meta = x.compactMetadata && typeof x.compactMetadata === 'object' ? x.compactMetadata : {};
    const bits = [meta.trigger, typeof meta.preTokens === 'number' ? fmtTokens(meta.preTokens) + ' tokens before' : null].filter(Boolean);
    const line = h('div', { class: 'compact-divider', role: 'separator' }, h('span', { text: 'Context compacted' + (bits.length ? ' \u00b7 ' + bits.join(' \u00b7 ') : '') }));
    if (!ev.text || ev.subtype === 'compact_boundary') return line;
    return h('div', {}, line, h('details', { class: 'fold meta compact-summary' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Summary' }), h('span', { class: 'fold-hint', text: oneLine(ev.text, 120) })), richText(ev.text, TEXT_LIMIT)));
  }

  function metaBlock(ev) {
    if (ev.subtype === 'compact_boundary' || ev.subtype === 'compaction') return compactionBlock(ev);
    if (ev.kind === 'summary' && (ev.subtype === 'compact_summary' || ev.subtype === 'compactionSummary')) {
      return h('details', { class: 'fold meta compact-summary' }, h('summary', {}, h('span', { class: 'fold-title', text: 'Compaction summary' }), h('span', { class: 'fold-hint', text: oneLine(ev.text || '', 120) })), richText(ev.text || '', TEXT_LIMIT));
    }
    const label = ev.kind === 'summary' ? 'Summary' : 'System' + (ev.subtype ? ' · ' + ev.subtype : '');
    const text = ev.text || '';
    if (text.length <= 200 && !text.includes('\n')) {
      return h('div', { class: 'metaline' }, h('span', { class: 'fold-title', text: label }), text ? h('span', { class: 'meta-text' }, inlineNodes(text)) : null);
    }
    return h('details', { class: 'fold meta' }, h('summary', {}, h('span', { class: 'fold-title', text: label }), h('span', { class: 'fold-hint', text: oneLine(text, 120) })), richText(text, TEXT_LIMIT));
  }

  // ---------------------------------------------------------------- search

  const searchView = {
    root: null,
    key: null,
    next: null,
    loading: false,
    params: {},

    build() {
      this.root = $('#view-search');
      this.q = h('input', { type: 'search', class: 'search-q', placeholder: 'Words or a phrase…', 'aria-label': 'Search query', autocomplete: 'off', spellcheck: 'false' });
      this.agentBox = h('span');
      this.kind = h('select', { class: 'kind-select', 'aria-label': 'Event kind' }, h('option', { value: '', text: 'All kinds' }), KINDS.map((k) => h('option', { value: k, text: k.replace('_', ' ') })));
      this.form = h('form', { class: 'toolbar search-form', role: 'search' }, h('h1', { text: 'Search' }), this.q, this.agentBox, this.kind, h('button', { type: 'submit', class: 'primary', text: 'Search' }));
      this.form.addEventListener('submit', (e) => {
        e.preventDefault();
        this.submit();
      });
      this.kind.addEventListener('change', () => this.submit());
      this.status = h('div', { class: 'status-line' });
      this.results = h('div', { class: 'hits' });
      this.moreBox = h('div', { class: 'more-box' });
      add(this.root, [this.form, this.status, this.results, this.moreBox]);
    },

    submit(agent) {
      setHash(queryHash('#/search', { q: this.q.value.trim(), agent: agent !== undefined ? agent : this.params.agent, kind: this.kind.value }));
    },

    show(params) {
      if (!this.root) this.build();
      const p = { q: params.get('q') || '', agent: params.get('agent') || '', kind: params.get('kind') || '' };
      this.params = p;
      this.q.value = p.q;
      this.kind.value = p.kind;
      clear(this.agentBox).append(agentSelect(p.agent, (v) => this.submit(v)));
      $('#quicksearch-q').value = p.q;
      const key = JSON.stringify(p);
      if (key === this.key) return;
      this.key = key;
      clear(this.results);
      clear(this.moreBox);
      this.next = null;
      if (!p.q) {
        this.status.textContent = 'Search every transcript: messages, thinking, tool calls and their results.';
        this.q.focus();
        return;
      }
      this.load(false);
    },

    async load(more) {
      const key = this.key;
      const p = this.params;
      this.loading = true;
      if (!more) this.status.textContent = 'Searching…';
      this.renderMore();
      try {
        const body = await api('/search', { q: p.q, agent: p.agent, kind: p.kind, limit: SEARCH_PAGE, cursor: more ? this.next : null });
        if (key !== this.key) return;
        const hits = body.hits || [];
        const frag = document.createDocumentFragment();
        for (const hit of hits) frag.append(hitRow(hit, p.q));
        this.results.append(frag);
        this.next = body.next || null;
        const n = this.results.childElementCount;
        this.status.textContent = n ? fmtInt(n) + (this.next ? '+' : '') + ' match' + (n === 1 && !this.next ? '' : 'es') + ', best first' : 'Nothing matches \u201c' + p.q + '\u201d.';
      } catch (err) {
        if (key !== this.key) return;
        if (err instanceof ApiError && err.status === 400) this.status.textContent = err.message;
        else handleError(err, 'Search');
      } finally {
        this.loading = false;
        this.renderMore();
      }
    },

    renderMore() {
      clear(this.moreBox);
      if (this.next) this.moreBox.append(h('button', { type: 'button', class: 'load-more', disabled: this.loading, text: this.loading ? 'Loading…' : 'More matches', onclick: () => this.load(true) }));
    },
  };

  function hitRow(hit, query) {
    const s = hit.session || {};
    const ev = hit.event || {};
    const d = toDate(ev.ts) || sessionDate(s);
    const where = [ev.kind === 'text' ? ev.role || 'text' : String(ev.kind || '').replace('_', ' '), ev.tool].filter(Boolean).join(' · ');
    const snippet = hit.snippet !== undefined && hit.snippet !== null ? hit.snippet : oneLine(ev.text || resultText(ev.result), 240);
    return h(
      'a',
      { class: 'hit', href: sessionHash(s.agent, s.id, ev.seq) },
      h('div', { class: 'hit-head' }, agentBadge(s.agent), h('span', { class: 'hit-title', text: sessionTitle(s) }), s.project ? h('span', { class: 'project', text: s.project }) : null, sessionTags(s)),
      h('div', { class: 'snippet' }, snippetNodes(snippet, query)),
      h('div', { class: 'hit-meta' }, h('span', { class: 'kind', text: where }), branchMark(ev) && branchMark(ev).branch === 'inactive' ? tag('inactive branch', 'branch-tag', 'On a conversation branch that was rewound or edited away; opening it shows that branch') : null, d ? h('time', { text: relTime(d), title: fmtFull(d) }) : null),
    );
  }

  // ---------------------------------------------------------------- projects

  // Projects (GET /projects): the git root of the sessions' directories, else the directory;
  // worktrees of one repository are one project. A row opens to list its sessions.
  const projectsView = {
    root: null,
    key: null,

    build() {
      this.root = $('#view-projects');
    },

    async show(params) {
      if (!this.root) this.build();
      const p = { agent: params.get('agent') || '' };
      const key = JSON.stringify(p);
      if (key === this.key) return;
      this.key = key;
      const body = h('div', { class: 'projects-body' }, h('div', { class: 'loading', text: 'Loading…' }));
      clear(this.root).append(h('div', { class: 'toolbar' }, h('h1', { text: 'Projects' }), agentSelect(p.agent, (v) => setHash(queryHash('#/projects', { agent: v })))), body);
      try {
        const doc = await api('/projects', { agent: p.agent });
        if (key !== this.key) return;
        const projects = doc.projects || [];
        clear(body);
        if (!projects.length) {
          body.append(h('div', { class: 'empty', text: 'No projects yet.' }));
          return;
        }
        const max = Math.max(1, ...projects.map((x) => x.total_tokens || 0));
        const table = h(
          'table',
          { class: 'stats projects' },
          h('thead', {}, h('tr', {}, h('th', { text: 'Project' }), h('th', { class: 'num', text: 'Sessions' }), h('th', { text: 'Agents' }), h('th', { text: 'Last active' }), h('th', { class: 'num', text: 'Tokens' }), h('th', { class: 'num', text: 'Cost' }))),
        );
        const tbody = h('tbody');
        for (const pr of projects) tbody.append(...this.row(pr, max, p.agent));
        table.append(tbody);
        body.append(h('div', { class: 'table-wrap' }, table));
      } catch (err) {
        if (key !== this.key) return;
        clear(body);
        handleError(err, 'Projects');
      }
    },

    row(pr, max, agent) {
      const d = toDate(pr.last_active);
      const bar = h('span', { class: 'minibar' });
      bar.style.width = Math.round(((pr.total_tokens || 0) / max) * 100) + '%';
      const detail = h('tr', { class: 'project-sessions', hidden: true }, h('td', { colspan: 6 }));
      const toggle = h('button', { type: 'button', class: 'project-name', 'aria-expanded': 'false', text: pr.project || pr.root, title: pr.root });
      toggle.addEventListener('click', () => {
        const open = detail.hidden;
        detail.hidden = !open;
        toggle.setAttribute('aria-expanded', String(open));
        if (open && !detail.dataset.loaded) {
          detail.dataset.loaded = '1';
          this.sessions(pr, agent, detail.firstChild);
        }
      });
      const row = h(
        'tr',
        { class: 'project-row', dataset: { root: pr.root } },
        h('td', { class: 'key' }, toggle, h('div', { class: 'project-root mono', text: pr.root })),
        h('td', { class: 'num', text: fmtInt(pr.sessions || 0) }),
        h('td', {}, (pr.agents || []).map((a) => agentBadge(a))),
        h('td', {}, d ? h('time', { text: relTime(d), title: fmtFull(d) }) : '-'),
        h('td', { class: 'num total', title: fmtInt(pr.total_tokens || 0) }, h('span', { class: 'total-wrap' }, h('span', { class: 'minibar-box' }, bar), h('span', { text: fmtTokens(pr.total_tokens || 0) }))),
        h('td', { class: 'num', text: fmtCost(pr.cost_usd) }),
      );
      return [row, detail];
    },

    // The project's sessions: one list query per working directory (worktrees live elsewhere).
    async sessions(pr, agent, cell) {
      cell.append(h('div', { class: 'loading', text: 'Loading sessions…' }));
      try {
        const cwds = (pr.cwds && pr.cwds.length ? pr.cwds : [pr.root]).slice(0, 20);
        const pages = await Promise.all(cwds.map((cwd) => api('/sessions', { cwd, agent, limit: 100 })));
        const seen = new Map();
        for (const page of pages) for (const s of page.sessions || []) seen.set(s.agent + ':' + s.id, s);
        const list = [...seen.values()].filter((s) => cwds.includes(s.cwd));
        list.sort((a, b) => String(b.ended || b.started || '').localeCompare(String(a.ended || a.started || '')));
        clear(cell).append(h('div', { class: 'slist', role: 'list' }, list.slice(0, 100).map(sessionRow)));
      } catch (err) {
        clear(cell);
        handleError(err, 'Sessions');
      }
    },
  };

  // ---------------------------------------------------------------- stats

  const statsView = {
    root: null,
    key: null,

    build() {
      this.root = $('#view-stats');
    },

    async show(params) {
      if (!this.root) this.build();
      const p = { agent: params.get('agent') || '', days: params.get('days') || '30', stack: params.get('stack') || '' };
      const key = JSON.stringify(p);
      if (key === this.key) return;
      this.key = key;
      const since = p.days === 'all' ? null : new Date(Date.now() - Number(p.days) * 86400000).toISOString().slice(0, 10);
      const range = h('select', { class: 'range-select', 'aria-label': 'Period' }, [['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['365', 'Last year'], ['all', 'All time']].map(([v, t]) => h('option', { value: v, text: t })));
      range.value = p.days;
      range.addEventListener('change', () => setHash(queryHash('#/stats', { agent: p.agent, days: range.value, stack: p.stack })));
      const body = h('div', { class: 'stats-body' }, h('div', { class: 'loading', text: 'Loading…' }));
      clear(this.root).append(
        h('div', { class: 'toolbar' }, h('h1', { text: 'Usage' }), agentSelect(p.agent, (v) => setHash(queryHash('#/stats', { agent: v, days: p.days }))), range),
        body,
      );
      try {
        const q = { agent: p.agent, since };
        const [byDay, byModel, byAgent, byTool, byHour] = await Promise.all(
          ['day', 'model', 'agent', 'tool', 'hour'].map((by) => api('/stats', Object.assign({ by }, q))),
        );
        if (key !== this.key) return;
        const stack = STACKS.includes(p.stack) ? p.stack : 'model';
        const stackSel = h('select', { class: 'stack-select', 'aria-label': 'Stack the bars by' }, STACKS.map((v) => h('option', { value: v, text: v === 'none' ? 'Not stacked' : 'By ' + v })));
        stackSel.value = stack;
        stackSel.addEventListener('change', () => setHash(queryHash('#/stats', { agent: p.agent, days: p.days, stack: stackSel.value })));
        clear(body).append(
          usageCards(byDay.totals || {}),
          undatedNote(byDay.undated),
          dayChart(byDay.rows || [], stack === 'none' ? null : stack, stackSel),
          h('div', { class: 'stats-cols' }, statsTable('By model', byModel.rows || [], 'Model', true), statsTable('By agent', byAgent.rows || [], 'Agent', true)),
          hourMap(byHour.rows || []),
          toolTable(byTool.rows || []),
          statsTable('By day', (byDay.rows || []).slice().sort((a, b) => String(b.key).localeCompare(String(a.key))), 'Day'),
        );
      } catch (err) {
        if (key !== this.key) return;
        clear(body);
        handleError(err, 'Stats');
      }
    },
  };

  // Every day from the first to the last row's, with the days without usage as zero.
  function fillDays(rows) {
    const byKey = new Map();
    for (const r of rows) if (/^\d{4}-\d{2}-\d{2}$/.test(String(r.key))) byKey.set(r.key, r);
    const keys = [...byKey.keys()].sort();
    if (!keys.length) return [];
    const out = [];
    const day = new Date(keys[0] + 'T00:00:00Z');
    const last = new Date(keys[keys.length - 1] + 'T00:00:00Z');
    for (let i = 0; day <= last && i < 4000; i++) {
      const key = day.toISOString().slice(0, 10);
      out.push(byKey.get(key) || { key, total_tokens: 0, cost_usd: 0 });
      day.setUTCDate(day.getUTCDate() + 1);
    }
    return out;
  }

  const STACKS = ['model', 'agent', 'none'];
  const PALETTE = 8; // series colours (.s0 … .s7 in style.css); the rest share "other"

  // Tokens per day; stacked by model or agent (the day rows' split), with a legend.
  function dayChart(rows, stack, control) {
    const days = fillDays(rows);
    if (!days.length) return h('div', { class: 'empty', text: 'No usage in this period.' });
    const max = Math.max(1, ...days.map((r) => r.total_tokens || 0));
    const chart = h('div', { class: 'chart', role: 'img', 'aria-label': 'Tokens per day' + (stack ? ' by ' + stack : '') });
    const totals = new Map();
    if (stack) for (const r of days) for (const [k, v] of Object.entries((r.split && r.split[stack]) || {})) totals.set(k, (totals.get(k) || 0) + v);
    const series = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
    const colour = (k) => {
      const i = series.indexOf(k);
      return i >= 0 && i < PALETTE ? 's' + i : 'sx';
    };
    for (const r of days) {
      const col = h('div', { class: 'col', title: r.key + ': ' + fmtInt(r.total_tokens || 0) + ' tokens, ' + fmtCost(r.cost_usd) });
      const parts = stack && r.split ? Object.entries(r.split[stack] || {}).filter(([, v]) => v > 0) : [];
      if (parts.length) {
        parts.sort((a, b) => series.indexOf(b[0]) - series.indexOf(a[0]));
        const stackBox = h('div', { class: 'stack' });
        stackBox.style.height = Math.max(1, Math.round(((r.total_tokens || 0) / max) * 100)) + '%';
        for (const [k, v] of parts) {
          const seg = h('div', { class: 'seg ' + colour(k), title: r.key + ' \u00b7 ' + k + ': ' + fmtInt(v) + ' tokens' });
          seg.style.height = (v / Math.max(1, r.total_tokens || 1)) * 100 + '%';
          stackBox.append(seg);
        }
        col.append(stackBox);
      } else {
        const bar = h('div', { class: 'bar' + (r.total_tokens ? '' : ' zero') });
        bar.style.height = (r.total_tokens ? Math.max(1, Math.round((r.total_tokens / max) * 100)) : 0) + '%';
        col.append(bar);
      }
      chart.append(col);
    }
    const legend = series.length
      ? h('div', { class: 'legend' }, series.slice(0, PALETTE).map((k) => h('span', { class: 'lg' }, h('i', { class: 'sw ' + colour(k) }), k)), series.length > PALETTE ? h('span', { class: 'lg' }, h('i', { class: 'sw sx' }), 'other') : null)
      : null;
    return h(
      'figure',
      { class: 'chart-box' },
      h('div', { class: 'chart-head' }, h('span', { class: 'chart-title', text: 'Tokens per day' }), control || null, h('span', { class: 'chart-max', text: 'peak ' + fmtTokens(max) })),
      chart,
      h('figcaption', {}, h('span', { text: days[0].key }), h('span', { text: days[days.length - 1].key })),
      legend,
    );
  }

  // Activity by hour of day × weekday (local time): a heat map of events per cell.
  function hourMap(rows) {
    const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    const cells = new Map(rows.map((r) => [r.weekday + ' ' + r.hour, r]));
    const max = Math.max(1, ...rows.map((r) => r.events || 0));
    const grid = h('div', { class: 'heat', role: 'img', 'aria-label': 'Activity by hour and weekday' });
    grid.append(h('span', { class: 'hl' }));
    for (let hr = 0; hr < 24; hr++) grid.append(h('span', { class: 'hh', text: hr % 3 === 0 ? String(hr) : '' }));
    for (let d = 1; d <= 7; d++) {
      grid.append(h('span', { class: 'hl', text: days[d - 1] }));
      for (let hr = 0; hr < 24; hr++) {
        const r = cells.get(d + ' ' + hr);
        const n = (r && r.events) || 0;
        const cell = h('span', { class: 'hc' + (n ? '' : ' none'), dataset: { day: d, hour: hr, events: n }, title: days[d - 1] + ' ' + String(hr).padStart(2, '0') + ':00 \u00b7 ' + fmtInt(n) + ' events' + (r && r.total_tokens ? ', ' + fmtTokens(r.total_tokens) + ' tokens' : '') });
        if (n) cell.style.opacity = String(0.15 + 0.85 * (n / max));
        grid.append(cell);
      }
    }
    return h('section', { class: 'stats-sec' }, h('h2', { text: 'Activity by hour (local time)' }), h('div', { class: 'heat-box' }, grid));
  }

  // Tool calls: calls, errors and the agents that made them.
  function toolTable(rows) {
    const max = Math.max(1, ...rows.map((r) => r.calls || 0));
    const tbody = h('tbody');
    for (const r of rows.slice(0, 60)) {
      const bar = h('span', { class: 'minibar' });
      bar.style.width = Math.round(((r.calls || 0) / max) * 100) + '%';
      const agents = Object.entries(r.agents || {}).sort((a, b) => b[1] - a[1]).map(([a, n]) => a + ' ' + fmtInt(n)).join(', ');
      tbody.append(
        h(
          'tr',
          {},
          h('td', { class: 'key mono', text: String(r.key) }),
          h('td', { class: 'num total' }, h('span', { class: 'total-wrap' }, h('span', { class: 'minibar-box' }, bar), h('span', { text: fmtInt(r.calls || 0) }))),
          h('td', { class: 'num' + (r.errors ? ' err' : ''), text: fmtInt(r.errors || 0) }),
          h('td', { class: 'num', text: r.calls ? Math.round((100 * (r.errors || 0)) / r.calls) + '%' : '-' }),
          h('td', { class: 'muted', text: agents }),
        ),
      );
    }
    if (!rows.length) tbody.append(h('tr', {}, h('td', { colspan: 5, class: 'muted', text: 'No tool calls in this period.' })));
    const table = h('table', { class: 'stats tools' }, h('thead', {}, h('tr', {}, h('th', { text: 'Tool' }), h('th', { class: 'num', text: 'Calls' }), h('th', { class: 'num', text: 'Errors' }), h('th', { class: 'num', text: 'Error rate' }), h('th', { text: 'Agents' }))), tbody);
    return h('section', { class: 'stats-sec' }, h('h2', { text: 'Tool calls' }), h('div', { class: 'table-wrap' }, table));
  }

  function statsTable(title, rows, keyLabel, compact) {
    const sorted = keyLabel === 'Day' ? rows : rows.slice().sort((a, b) => (b.total_tokens || 0) - (a.total_tokens || 0));
    const max = Math.max(1, ...sorted.map((r) => r.total_tokens || 0));
    const cols = compact
      ? [['Input', 'input_tokens'], ['Output', 'output_tokens']]
      : [['Input', 'input_tokens'], ['Output', 'output_tokens'], ['Cache read', 'cache_read_tokens'], ['Cache write', 'cache_write_tokens']];
    const table = h(
      'table',
      { class: 'stats' },
      h('thead', {}, h('tr', {}, h('th', { text: keyLabel }), cols.map(([t]) => h('th', { class: 'num', text: t })), h('th', { class: 'num', text: 'Total' }), h('th', { class: 'num', text: 'Cost' }))),
    );
    const tbody = h('tbody');
    for (const r of sorted) {
      const total = r.total_tokens || 0;
      const bar = h('span', { class: 'minibar' });
      bar.style.width = Math.round((total / max) * 100) + '%';
      tbody.append(
        h(
          'tr',
          {},
          h('td', { class: 'key', text: r.key === null || r.key === undefined || r.key === '' ? '(unknown)' : String(r.key) }),
          cols.map(([, f]) => h('td', { class: 'num', text: fmtTokens(r[f] || 0), title: fmtInt(r[f] || 0) })),
          h('td', { class: 'num total', title: fmtInt(total) }, h('span', { class: 'total-wrap' }, h('span', { class: 'minibar-box' }, bar), h('span', { text: fmtTokens(total) }))),
          h('td', { class: 'num', text: fmtCost(r.cost_usd), title: r.cost_usd === null || r.cost_usd === undefined ? 'A model\u2019s price is unknown' : null }),
        ),
      );
    }
    if (!sorted.length) tbody.append(h('tr', {}, h('td', { colspan: cols.length + 3, class: 'muted', text: 'No usage in this period.' })));
    table.append(tbody);
    return h('section', { class: 'stats-sec' }, h('h2', { text: title }), h('div', { class: 'table-wrap' }, table));
  }

  // ---------------------------------------------------------------- live: /changes

  const changes = {
    es: null,
    timer: null,
    start() {
      if (!state.live || this.es || loggedOut || streamsPaused) return;
      const es = new EventSource(API + '/changes');
      this.es = es;
      setLiveState('connecting');
      const onData = (msg) => {
        let payload = null;
        try {
          payload = JSON.parse(msg.data);
        } catch (_) {
          payload = null;
        }
        this.onChange(payload);
      };
      es.addEventListener('open', () => setLiveState('on'));
      es.addEventListener('change', onData);
      es.addEventListener('message', onData);
      // Changes were missed (the daemon restarted, or we were away too long): re-list.
      es.addEventListener('reset', () => this.onChange(null));
      es.addEventListener('error', () => setLiveState(es.readyState === EventSource.CLOSED ? 'off' : 'connecting'));
    },
    stop() {
      if (this.es) this.es.close();
      this.es = null;
      setLiveState(state.live ? 'connecting' : 'off');
    },
    onChange(change) {
      const open = sessionView.session;
      if (open && (!change || (change.agent === sessionView.agent && change.id === sessionView.id))) sessionView.changed();
      // Debounced: an agent writing fast sends many changes.
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        if (state.route && state.route.view === 'sessions') listView.refresh();
        else listView.dirty = true;
      }, 700);
    },
  };

  function setLiveState(s) {
    const btn = $('#live-toggle');
    btn.dataset.state = state.live ? s : 'off';
    btn.setAttribute('aria-pressed', state.live ? 'true' : 'false');
  }

  // ---------------------------------------------------------------- live streams and the page's life

  // A browser gives a host six HTTP/1.1 connections, shared by all the tabs of a profile, and an
  // open EventSource keeps one for as long as it is open. A page that was left (kept in the
  // back-forward cache) or sits in a background tab would keep its streams: six of them, and
  // every request of every agtail tab waits until one closes (Chromium drops a cached page after
  // about a minute: the 55 s stalls in bench/VIEWER.md). So the streams close when the page is
  // hidden or left and open again when it is shown; what changed meanwhile is then re-read (the
  // list, the open session's header) and the follow stream resumes after the last event shown.
  const pageLife = {
    pause() {
      if (streamsPaused) return;
      streamsPaused = true;
      changes.stop();
      sessionView.stopFollow();
    },
    resume() {
      if (!streamsPaused) return;
      streamsPaused = false;
      if (!state.live || loggedOut) return;
      changes.start();
      if (state.route && state.route.view === 'session') sessionView.startFollow();
      changes.onChange(null);
    },
  };
  window.addEventListener('pagehide', () => pageLife.pause());
  window.addEventListener('pageshow', (e) => {
    if (e.persisted) pageLife.resume();
  });
  document.addEventListener('visibilitychange', () => (document.hidden ? pageLife.pause() : pageLife.resume()));

  function toggleLive() {
    state.live = !state.live;
    localStorage.setItem('agtail.live', state.live ? 'on' : 'off');
    if (state.live) {
      changes.start();
      sessionView.startFollow();
      if (listView.dirty && state.route && state.route.view === 'sessions') listView.refresh();
    } else {
      changes.stop();
      sessionView.stopFollow();
    }
  }

  // ---------------------------------------------------------------- routing

  function parseHash() {
    const raw = location.hash.replace(/^#/, '') || '/';
    const qi = raw.indexOf('?');
    const path = qi >= 0 ? raw.slice(0, qi) : raw;
    const params = new URLSearchParams(qi >= 0 ? raw.slice(qi + 1) : '');
    let parts;
    try {
      parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    } catch (_) {
      parts = [];
    }
    if (parts[0] === 'session' && parts.length >= 3) return { view: 'session', agent: parts[1], id: parts.slice(2).join('/'), params };
    if (parts[0] === 'search') return { view: 'search', params };
    if (parts[0] === 'stats') return { view: 'stats', params };
    if (parts[0] === 'projects') return { view: 'projects', params };
    return { view: 'sessions', params };
  }

  function route() {
    if (loggedOut) return;
    const r = parseHash();
    state.route = r;
    banner(null);
    for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-' + r.view;
    for (const a of document.querySelectorAll('[data-nav]')) {
      const active = a.dataset.nav === r.view || (r.view === 'session' && a.dataset.nav === 'sessions');
      if (active) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (r.view !== 'session') sessionView.stopFollow();
    if (r.view === 'sessions') {
      document.title = 'agtail';
      listView.show(r.params);
    } else if (r.view === 'session') {
      document.title = 'agtail · session';
      sessionView.show(r.agent, r.id, r.params).then(() => {
        if (sessionView.session) document.title = sessionTitle(sessionView.session) + ' · agtail';
      });
    } else if (r.view === 'search') {
      document.title = 'Search · agtail';
      searchView.show(r.params);
    } else if (r.view === 'stats') {
      document.title = 'Usage · agtail';
      statsView.show(r.params);
    } else if (r.view === 'projects') {
      document.title = 'Projects · agtail';
      projectsView.show(r.params);
    }
  }

  // ---------------------------------------------------------------- index progress

  // While the daemon indexes (a first run, a reindex, a rescan), /health carries a `progress`
  // object (docs/api.md); a thin bar and a line in the top bar show it. Polled every second
  // while an update runs, every 20 s otherwise; the element is made here, not in index.html.
  const indexProgress = {
    node: null,
    timer: null,
    start() {
      const fill = h('span', { class: 'index-progress-fill' });
      const label = h('span', { class: 'index-progress-text' });
      this.node = h('div', { class: 'index-progress', role: 'status', hidden: true },
        h('span', { class: 'index-progress-bar' }, fill), label);
      this.fill = fill;
      this.label = label;
      $('.topbar').insertBefore(this.node, $('#live-toggle'));
      this.listedTime = Date.now(); // route() has just listed the sessions
      this.poll();
    },
    async poll() {
      let progress = null;
      try {
        progress = (await api('/health')).progress || null;
      } catch (_) {
        progress = null; // not answering: the live toggle says so
      }
      this.show(progress);
      this.refreshList(progress);
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.poll(), progress ? 1000 : 20000);
    },
    // The change stream speaks once an update ends; a first index takes a while, so the
    // session list is re-read every few seconds while sessions are still being added.
    refreshList(p) {
      const now = Date.now();
      if (!p || !state.live || p.files_done === this.listedAt || now - (this.listedTime || 0) < 4000) return;
      this.listedAt = p.files_done;
      this.listedTime = now;
      if (state.route && state.route.view === 'sessions') listView.refresh();
    },
    show(p) {
      this.node.hidden = !p;
      if (!p) return;
      const mb = (n) => (n / 1e6).toFixed(n < 1e8 ? 1 : 0);
      const fraction = p.bytes_total ? p.bytes_done / p.bytes_total : p.files_total ? p.files_done / p.files_total : 0;
      this.fill.style.width = Math.round(Math.min(Math.max(fraction, 0), 1) * 100) + '%';
      let text = 'Indexing: scanning…';
      if (p.phase !== 'scanning') {
        text = 'Indexing ' + p.files_done + '/' + p.files_total + ' · ' + mb(p.bytes_done) + '/' + mb(p.bytes_total) + ' MB';
        if (p.phase === 'finishing') text += ' · finishing';
        else if (p.eta_seconds !== null && p.eta_seconds !== undefined) text += ' · ' + Math.round(p.eta_seconds) + ' s left';
      }
      this.label.textContent = text;
      this.node.title = text + (p.rate_bytes_per_second ? ' (' + mb(p.rate_bytes_per_second) + ' MB/s)' : '');
    },
  };

  async function start() {
    $('#live-toggle').addEventListener('click', toggleLive);
    $('#quicksearch').addEventListener('submit', (e) => {
      e.preventDefault();
      const q = $('#quicksearch-q').value.trim();
      if (q) setHash(queryHash('#/search', { q }));
    });
    document.addEventListener('keydown', (e) => {
      const t = e.target;
      const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        $('#quicksearch-q').focus();
      }
    });
    setLiveState('connecting');
    try {
      await loadAgents();
      await loadMachines();
    } catch (err) {
      handleError(err);
      return;
    }
    window.addEventListener('hashchange', route);
    route();
    changes.start();
    indexProgress.start();
  }

  // Exposed for tests and debugging; carries no data of its own.
  window.agtail = { state, snippetNodes, version: 1 };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
