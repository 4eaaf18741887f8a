// Projects (#/projects, GET /projects): the git root of the sessions' directories, else the directory;
// worktrees of one repository are one project. A row opens to list its sessions.

import { api } from '../api.js';
import { $, clear, h } from '../dom.js';
import { fmtCost, fmtFull, fmtInt, fmtTokens, fmtUsageCost, relTime, toDate, unpricedTitle } from '../format.js';
import { queryHash, setHash } from '../router.js';
import { handleError } from '../ui.js';
import { agentBadge, agentSelect, sessionRow } from '../widgets.js';

export const projectsView = {
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
        h('td', { class: 'num', text: fmtUsageCost(pr), title: unpricedTitle(pr) }),
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
