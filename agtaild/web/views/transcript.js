// A session's transcript as a window over its events (methods of sessionView, views/session.js).
//
// A huge session is shown as a window of pages: events around the target are fetched with
// before_seq/after_seq, more pages load on scroll in both directions, and the pages farthest
// from the reader are dropped once the transcript holds more than MAX_EVENTS_IN_DOM events.

import { api, sessionPath } from '../api.js';
import { $, clear, h } from '../dom.js';
import { handleError } from '../ui.js';
import { renderEvent, roleGroup } from './events.js';

export const EVENT_PAGE = 250;
export const WINDOW_BEFORE = 60; // events fetched before a target event
export const MAX_EVENTS_IN_DOM = 1500;

export const transcript = {
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
};
