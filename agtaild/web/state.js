// What the page knows beyond the open view: the agents and machines (for the menus), the live
// switch, the current route, and whether the page is signed out or its streams paused.

import { api, ApiError } from './api.js';

export const state = {
  agents: [],
  machines: [], // a team server's pushing machines (agtaild --backend); empty on a local daemon
  live: localStorage.getItem('agtail.live') !== 'off',
  route: null,
  loggedOut: false,
  // The live stream is closed while the page is hidden or left (live.js); a page opened in a
  // background tab opens it when it is first shown.
  streamsPaused: document.visibilityState === 'hidden',
  stream: 'off', // the change stream: on, connecting or off (live.js)
};

// A team server (its /health says backend: postgresql) lists the machines that push into it.
export async function loadMachines() {
  try {
    const health = await api('/health');
    if (!health || health.backend !== 'postgresql') return;
    const body = await api('/machines');
    state.machines = (body.machines || []).map((m) => m.machine).filter(Boolean);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw err;
    state.machines = [];
  }
}

export async function loadAgents() {
  try {
    const body = await api('/agents');
    const list = body.agents || [];
    state.agents = list.map((a) => (typeof a === 'string' ? { id: a } : a)).filter((a) => a && a.id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw err;
    state.agents = [];
  }
}
