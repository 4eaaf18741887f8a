// One session (#/session/AGENT/ID): its header, its transcript and, in live mode, what the
// agent writes next.
//
// sessionView is one object; its transcript window (views/transcript.js) and its conversation
// branches (views/branches.js) are methods mixed in from their own modules.

import { api, ApiError, sessionPath } from '../api.js';
import { $, add, clear, h } from '../dom.js';
import { fmtDuration, fmtFull, fmtInt, oneLine, shellQuote, shortId, sessionTitle, toDate } from '../format.js';
import { queryHash, sessionHash } from '../router.js';
import { state } from '../state.js';
import { banner, handleError } from '../ui.js';
import { agentBadge, sessionTags, tag, usageCards } from '../widgets.js';
import { stateBar } from '../organize.js';
import { branches, forkTable } from './branches.js';
import { childLink } from './events.js';
import { exportBox } from './share.js';
import { EVENT_PAGE, WINDOW_BEFORE, transcript } from './transcript.js';

export const sessionView = {
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
  follow: false, // following live (startFollow)
  catching: false, // a catchUp read is running
  catchAgain: false,
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
    this.catching = this.catchAgain = false;
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
      s.secrets ? h('p', { class: 'secrets-note' }, h('a', { href: queryHash('#/secrets', { session: s.agent + ':' + s.id }), text: 'What to rotate: the secrets found here →' })) : null,
      s.machine ? null : stateBar(s, (now) => this.stateChanged(now)),
      parentBox,
      h('dl', { class: 'facts' }, facts),
      usageCards(s.usage),
      exportBox(s),
      this.resumeBox,
      this.childBox,
    );
  },


  // The user's labels, star, title or hide changed (organize.js): the title line follows.
  stateChanged(now) {
    const s = this.session;
    s.state = now.state || null;
    s.title = now.title;
    s.agent_title = now.agent_title;
    const title = this.head && this.head.querySelector('.session-title');
    if (title) title.textContent = sessionTitle(s);
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

  // The session changed on disk (from /changes; null: changes may have been missed): read
  // its new events when following, then update the header and re-read the tool calls still
  // waiting for their result.
  changed(change) {
    if (change && change.action === 'removed') {
      this.stopFollow();
      banner('This session is gone: its file was removed and agtail has no archived copy.', 'info');
      return;
    }
    if (this.follow) this.catchUp();
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

  // Live follow rides on the page's one change stream (live.js), not on a stream of its own:
  // when the change feed names this session, the events after the last one shown are read
  // (changed → catchUp). A browser allows a host six connections for all its tabs, and each
  // open stream holds one (bench/VIEWER.md).
  startFollow() {
    if (!state.live || this.follow || !this.session || this.next || state.loggedOut || state.streamsPaused) return;
    this.follow = true;
    this.showLive();
    this.catchUp(); // what was written since the last read
  },

  stopFollow() {
    this.follow = false;
    this.showLive();
  },

  // The "following live" tag: following, and the change stream connected.
  showLive() {
    if (this.liveBadge) this.liveBadge.hidden = !(this.follow && state.stream === 'on');
  },

  // Read the events written after the last one shown, one read at a time (a change during a
  // read asks for another). The last shown event is read again: when it is not the same event
  // any more (seq, kind, uuid, time), the file was truncated or replaced, and the transcript
  // starts over from the first event (what the follow stream's `reset` says).
  async catchUp() {
    if (this.catching) {
      this.catchAgain = true;
      return;
    }
    const gen = this.gen;
    this.catching = true;
    try {
      do {
        this.catchAgain = false;
        await this.readNew(gen);
      } while (this.catchAgain && gen === this.gen && this.follow);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) handleError(err);
      // Otherwise the next change (or the stream's reconnect, which replays them) reads again.
    } finally {
      if (gen === this.gen) this.catching = false;
    }
  },

  async readNew(gen) {
    const path = sessionPath(this.agent, this.id) + '/events';
    const known = this.maxSeq >= 0 ? this.json.get(this.maxSeq) : undefined;
    let check = known === undefined ? null : eventIdentity(JSON.parse(known));
    let after = check ? this.maxSeq - 1 : this.maxSeq;
    for (;;) {
      const page = await api(path, { after_seq: after, limit: EVENT_PAGE });
      if (gen !== this.gen || !this.follow) return;
      const events = page.events || [];
      if (check) {
        if (!events.length || eventIdentity(events[0]) !== check) {
          this.resetEvents();
          check = null;
          after = -1;
          continue;
        }
        check = null;
      }
      this.onLive(events);
      const last = events[events.length - 1];
      if (!page.next || !last) return;
      after = last.seq;
    }
  },

  // The file was truncated or replaced: the transcript starts again from the first event.
  resetEvents() {
    this.bySeq = new Map();
    this.json = new Map();
    this.pending = new Set();
    this.maxSeq = -1;
    this.lastRole = null;
    clear(this.events);
  },

  // New events from catchUp: appended; the view scrolls along when the reader is at the bottom.
  onLive(events) {
    if (!events.length) return;
    const doc = document.documentElement;
    const nearBottom = window.innerHeight + window.scrollY >= doc.scrollHeight - 160;
    this.appendEvents(events);
    if (nearBottom) window.scrollTo(0, doc.scrollHeight);
  },
};

Object.assign(sessionView, transcript, branches);

// What tells one event from another at the same seq (a rewritten file).
function eventIdentity(ev) {
  return JSON.stringify([ev.seq, ev.kind, ev.uuid === undefined ? null : ev.uuid, ev.ts === undefined ? null : ev.ts]);
}
