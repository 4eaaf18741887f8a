// The banner, errors, and the sign-in view.

import { ApiError } from './api.js';
import { $, clear, h } from './dom.js';
import { state } from './state.js';

// Called when the page is signed out (live.js closes its stream there).
const signOutHooks = [];
export function onSignOut(fn) {
  signOutHooks.push(fn);
}

export function handleError(err, where) {
  if (err instanceof ApiError && err.status === 401) {
    showLogin();
    return;
  }
  banner((where ? where + ': ' : '') + (err && err.message ? err.message : String(err)), 'error');
  console.error(err);
}

export function banner(message, kind) {
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

export function showLogin() {
  state.loggedOut = true;
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-login';
  for (const fn of signOutHooks) fn();
}
