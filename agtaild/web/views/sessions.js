// The session list (#/): newest first, grouped by day, filtered by agent, source and text.

import { api, ApiError } from '../api.js';
import { $, add, clear, h } from '../dom.js';
import { dayLabel, fmtInt, sessionDate } from '../format.js';
import { queryHash, setHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentSelect, machineSelect, sessionRow } from '../widgets.js';
import { listFilters } from '../organize.js';

const SESSION_PAGE = 60;

// Where sessions come from: this machine's agents, another machine (imported), or the
// archive (the agent deleted its file).
const SOURCES = {
  '': { label: 'All sources', params: {} },
  native: { label: 'This machine', params: { imported: 'false' } },
  imported: { label: 'Imported', params: { imported: 'true' } },
  archived: { label: 'Archived', params: { archived: 'true' } },
};

export const listView = {
  root: null,
  key: null,
  items: [],
  keys: new Set(),
  next: null,
  loading: false,
  dirty: false,
  lastDay: null,
  total: null, // every session the filters match (the first page's `total`)
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
    this.stateBox = h('span');
    this.list = h('div', { class: 'slist', role: 'list' });
    this.moreBox = h('div', { class: 'more-box' });
    add(this.root, [
      h('div', { class: 'toolbar' }, h('h1', { text: 'Sessions' }), this.agentBox, this.machineBox, this.source, this.q, this.stateBox, this.count),
      this.list,
      this.moreBox,
    ]);
  },

  show(params) {
    if (!this.root) this.build();
    const src = params.get('source') || '';
    const hidden = params.get('hidden') || '';
    const p = { agent: params.get('agent') || '', machine: params.get('machine') || '', q: params.get('q') || '', source: SOURCES[src] ? src : '',
                label: params.get('label') || '', starred: params.get('starred') === 'true' ? 'true' : '', hidden: hidden === 'include' || hidden === 'only' ? hidden : '' };
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

  // The first page also asks how many sessions match in all (the header's count).
  apiParams(cursor) {
    const own = { label: this.params.label || undefined, starred: this.params.starred || undefined, hidden: this.params.hidden || undefined };
    return Object.assign({ agent: this.params.agent, machine: this.params.machine || undefined, q: this.params.q, limit: SESSION_PAGE, cursor, total: cursor ? undefined : 'true' }, own, SOURCES[this.params.source].params);
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
      this.total = typeof body.total === 'number' ? body.total : null;
      clear(this.list);
      this.append(body.sessions || []);
      this.next = body.next || null;
      this.renderMore();
      this.drawStateFilters();
      if (!this.items.length) {
        this.list.append(h('div', { class: 'empty' }, this.params.q || this.params.agent || this.params.source || this.params.label || this.params.starred ? 'No session matches these filters.' : 'No sessions yet. agtaild lists every session it finds in the agents\u2019 session folders.'));
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

  // Star, hidden and label filters (organize.js): the labels of the sessions shown.
  drawStateFilters() {
    if (this.params.machine) return clear(this.stateBox); // a team server keeps no user state
    const p = this.params;
    clear(this.stateBox).append(listFilters(p, this.items, (change) => setHash(queryHash('#/', Object.assign({}, p, change)))));
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
      this.total = typeof body.total === 'number' ? body.total : null;
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

  // The count of every matching session when the daemon gave it (total), else what is loaded.
  updateCount() {
    const n = this.items.length;
    if (this.total !== null && n) this.count.textContent = fmtInt(this.total) + ' session' + (this.total === 1 ? '' : 's');
    else this.count.textContent = n ? fmtInt(n) + (this.next ? '+' : '') + ' session' + (n === 1 && !this.next ? '' : 's') : '';
  },
};
