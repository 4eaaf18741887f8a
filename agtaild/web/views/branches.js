// Conversation branches (rewinds, edited prompts) in a transcript: see
// agtaild/adapters/claude/branches.py. Events below a fork carry extra.branch/fork/alt; the
// active branch is shown, and a switch at each fork of the active chain shows another
// continuation in its place. `branches` holds methods of sessionView (views/session.js).

import { h } from '../dom.js';

// An event's branch mark, or null (sessions that never forked carry none).
export function branchMark(ev) {
  const x = ev && ev.extra;
  if (!x || (x.branch !== 'active' && x.branch !== 'inactive') || typeof x.fork !== 'string') return null;
  return { branch: x.branch, fork: x.fork, alt: Number(x.alt) || 1, alts: Number(x.alts) || 1 };
}

// The forks on the active chain (session.extra.forks), with their order along it.
export function forkTable(s) {
  const out = new Map();
  const forks = s && s.extra && Array.isArray(s.extra.forks) ? s.extra.forks : [];
  let depth = 0;
  for (const f of forks) {
    if (!f || typeof f.fork !== 'string' || !f.on_active_chain || !(f.alts > 1)) continue;
    out.set(f.fork, { alts: Number(f.alts), active: Number(f.active) || 0, depth: depth++ });
  }
  return out;
}

export const branches = {
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
};
