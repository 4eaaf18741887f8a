// The daemon's indexing progress in the top bar, and the embedder's (meaning.js).
//
// While the daemon indexes (a first run, a reindex, a rescan), /health carries a `progress`
// object (docs/api.md); a thin bar and a line in the top bar show it. /health's `embeddings`
// (search by meaning, when configured) goes to meaning.js. Polled every second while an
// update runs, every 3 s while vectors are being built or retried, every 5 s while search by
// meaning is configured, every 20 s otherwise; the element is made here, not in index.html.

import { api } from './api.js';
import { $, h } from './dom.js';
import { meaning } from './meaning.js';
import { state } from './state.js';
import { listView } from './views/sessions.js';

export const indexProgress = {
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
    let health = null;
    try {
      health = await api('/health');
      progress = health.progress || null;
    } catch (_) {
      progress = null; // not answering: the live toggle says so
    }
    this.show(progress);
    this.refreshList(progress);
    if (health) meaning.update(health.embeddings);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), progress ? 1000 : meaning.moving() ? 3000 : meaning.status && meaning.status.enabled ? 5000 : 20000);
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
