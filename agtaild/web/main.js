// agtail web viewer: one page, no build step, no dependencies; this is its entry module.
//
// The page is ES modules served by agtaild (agtaild/web/): api.js talks to the daemon, dom.js
// is the only place strings become nodes (hostile text stays text), router.js maps #/… to a
// view in views/, live.js keeps the one change stream. docs/viewer.md says where to add a view.

import { $, snippetNodes } from './dom.js';
import { sessionTitle } from './format.js';
import { changes, setLiveState, toggleLive } from './live.js';
import { indexProgress } from './progress.js';
import { queryHash, setHash, startRouter } from './router.js';
import { loadAgents, loadMachines, state } from './state.js';
import { handleError } from './ui.js';
import { projectsView } from './views/projects.js';
import { fileView } from './views/file.js';
import { searchView } from './views/search.js';
import { secretsView } from './views/secrets.js';
import { sessionView } from './views/session.js';
import { listView } from './views/sessions.js';
import { statsView } from './views/stats.js';
import { usageView } from './views/usage.js';

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
  startRouter({
    sessions: { title: 'agtail', show: (r) => listView.show(r.params) },
    session: {
      title: 'agtail · session',
      show: (r) =>
        sessionView.show(r.agent, r.id, r.params).then(() => {
          if (sessionView.session) document.title = sessionTitle(sessionView.session) + ' · agtail';
        }),
      leave: () => sessionView.stopFollow(),
    },
    search: { title: 'Search · agtail', show: (r) => searchView.show(r.params), leave: () => searchView.leave() },
    stats: { title: 'Usage · agtail', show: (r) => statsView.show(r.params) },
    projects: { title: 'Projects · agtail', show: (r) => projectsView.show(r.params) },
    live: { title: 'Live usage · agtail', show: () => usageView.show(), leave: () => usageView.leave() },
    file: { title: 'File history · agtail', show: (r) => fileView.show(r.params) },
    secrets: { title: 'Secrets · agtail', show: (r) => secretsView.show(r.params) },
  });
  changes.start();
  indexProgress.start();
}

// Exposed for tests and debugging; carries no data of its own.
window.agtail = { state, snippetNodes, version: 1 };

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
