// Live mode: the change stream, the live switch, and the page's life (streams only while shown).

import { stream } from './api.js';
import { $ } from './dom.js';
import { state } from './state.js';
import { onSignOut } from './ui.js';
import { sessionView } from './views/session.js';
import { listView } from './views/sessions.js';

// ---------------------------------------------------------------- live: /changes

export const changes = {
  es: null,
  timer: null,
  start() {
    if (!state.live || this.es || state.loggedOut || state.streamsPaused) return;
    const es = stream('/changes');
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
    if (open && (!change || (change.agent === sessionView.agent && change.id === sessionView.id))) sessionView.changed(change);
    // Debounced: an agent writing fast sends many changes.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (state.route && state.route.view === 'sessions') listView.refresh();
      else listView.dirty = true;
    }, 700);
  },
};

export function setLiveState(s) {
  const btn = $('#live-toggle');
  state.stream = state.live ? s : 'off';
  btn.dataset.state = state.stream;
  btn.setAttribute('aria-pressed', state.live ? 'true' : 'false');
  sessionView.showLive();
}

// ---------------------------------------------------------------- live streams and the page's life

// A browser gives a host six HTTP/1.1 connections, shared by all the tabs of a profile, and an
// open EventSource keeps one for as long as it is open. A page that was left (kept in the
// back-forward cache) or sits in a background tab would keep its streams: six of them, and
// every request of every agtail tab waits until one closes (Chromium drops a cached page after
// about a minute: the 55 s stalls in bench/VIEWER.md). So the streams close when the page is
// hidden or left and open again when it is shown; what changed meanwhile is then re-read (the
// list, the open session's header, its events after the last one shown). And a page holds only
// this one stream: the open session is followed over it (views/session.js, catchUp).
export const pageLife = {
  pause() {
    if (state.streamsPaused) return;
    state.streamsPaused = true;
    changes.stop();
    sessionView.stopFollow();
  },
  resume() {
    if (!state.streamsPaused) return;
    state.streamsPaused = false;
    if (!state.live || state.loggedOut) return;
    changes.start();
    if (state.route && state.route.view === 'session') sessionView.startFollow();
    changes.onChange(null);
  },
};
onSignOut(() => changes.stop());
window.addEventListener('pagehide', () => pageLife.pause());
window.addEventListener('pageshow', (e) => {
  if (e.persisted) pageLife.resume();
});
document.addEventListener('visibilitychange', () => (document.hidden ? pageLife.pause() : pageLife.resume()));

export function toggleLive() {
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
