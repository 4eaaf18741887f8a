// Routing in the URL fragment (#/…, so every view can be bookmarked), and the links into it.
//
// main.js hands startRouter() the table of views: name → { title, show(route), leave() }.
// parseHash() turns the fragment into { view, params } (a session: also agent and id); route()
// shows that view's section of index.html, hides the others and calls its show().

import { state } from './state.js';
import { banner } from './ui.js';

let views = {};

export const sessionHash = (agent, id, at) =>
  '#/session/' + encodeURIComponent(agent) + '/' + encodeURIComponent(id) + (at !== undefined && at !== null ? '?at=' + encodeURIComponent(at) : '');

export function setHash(hash, replace) {
  if (location.hash === hash) return;
  if (replace) {
    history.replaceState(null, '', hash);
    route();
  } else {
    location.hash = hash;
  }
}

export function queryHash(base, params) {
  const qs = new URLSearchParams();
  for (const k of Object.keys(params)) if (params[k]) qs.set(k, params[k]);
  const s = qs.toString();
  return base + (s ? '?' + s : '');
}

export function parseHash() {
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
  if (parts[0] !== 'session' && Object.hasOwn(views, parts[0] || '')) return { view: parts[0], params };
  return { view: 'sessions', params };
}

export function route() {
  if (state.loggedOut) return;
  const r = parseHash();
  state.route = r;
  banner(null);
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-' + r.view;
  for (const a of document.querySelectorAll('[data-nav]')) {
    const active = a.dataset.nav === r.view || (r.view === 'session' && a.dataset.nav === 'sessions');
    if (active) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  for (const name of Object.keys(views)) if (name !== r.view && views[name].leave) views[name].leave();
  const view = views[r.view];
  document.title = view.title;
  view.show(r);
}

// Start routing: `table` maps each view's name (its section is #view-NAME in index.html) to
// { title, show(route), leave() (optional: another view is shown) }.
export function startRouter(table) {
  views = table;
  window.addEventListener('hashchange', route);
  route();
}
