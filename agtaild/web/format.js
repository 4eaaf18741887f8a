// Dates, sizes, counts and names as the page shows them (plain strings, no DOM).

export function toDate(value) {
  if (value === null || value === undefined || value === '') return null;
  const d = typeof value === 'number' ? new Date(value < 1e12 ? value * 1000 : value) : new Date(value);
  return isNaN(d.getTime()) ? null : d;
}

export function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

export function fmtClock(d) {
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

export function fmtDate(d) {
  const now = new Date();
  const opts = { month: 'short', day: 'numeric' };
  if (d.getFullYear() !== now.getFullYear()) opts.year = 'numeric';
  return d.toLocaleDateString(undefined, opts);
}

export function fmtFull(d) {
  return d ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '';
}

export function relTime(d) {
  if (!d) return '';
  const secs = (Date.now() - d.getTime()) / 1000;
  if (secs < 45) return 'just now';
  if (secs < 3600) return Math.max(1, Math.round(secs / 60)) + ' min ago';
  const now = new Date();
  if (sameDay(d, now)) return fmtClock(d);
  const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  if (sameDay(d, yesterday)) return 'yesterday ' + fmtClock(d);
  return fmtDate(d) + ' ' + fmtClock(d);
}

// In the list, rows sit under their day's heading: today's say how long ago, others the time.
export function rowTime(d) {
  if (!d) return '';
  return sameDay(d, new Date()) ? relTime(d) : fmtClock(d);
}

export function dayLabel(d) {
  if (!d) return 'Undated';
  const now = new Date();
  if (sameDay(d, now)) return 'Today';
  const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  if (sameDay(d, yesterday)) return 'Yesterday';
  return d.toLocaleDateString(undefined, {
    weekday: 'long', month: 'long', day: 'numeric',
    year: d.getFullYear() === now.getFullYear() ? undefined : 'numeric',
  });
}

export function fmtDuration(ms) {
  if (!(ms > 0)) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return s + ' s';
  const m = Math.round(s / 60);
  if (m < 60) return m + ' min';
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return hrs + ' h ' + (m % 60) + ' min';
  return Math.round(hrs / 24) + ' days';
}

export function fmtInt(n) {
  return typeof n === 'number' ? n.toLocaleString() : '0';
}

export function fmtTokens(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '0';
  const abs = Math.abs(n);
  if (abs < 1000) return String(n);
  if (abs < 1e6) return (n / 1e3).toFixed(abs < 1e4 ? 1 : 0) + 'k';
  if (abs < 1e9) return (n / 1e6).toFixed(abs < 1e7 ? 2 : 1) + 'M';
  return (n / 1e9).toFixed(2) + 'B';
}

export function fmtCost(c) {
  if (c === null || c === undefined) return '—';
  if (c === 0) return '$0';
  if (c < 0.01) return '<$0.01';
  if (c < 100) return '$' + c.toFixed(2);
  return '$' + Math.round(c).toLocaleString();
}

export function shortId(id) {
  const s = String(id || '');
  return s.length > 12 ? s.slice(0, 8) + '…' : s;
}

export function oneLine(text, max) {
  const s = String(text || '').replace(/\s+/g, ' ').trim();
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

export function sessionTitle(s) {
  return oneLine(s.title || s.first_prompt || '', 300) || 'Untitled session ' + shortId(s.id);
}

export function sessionDate(s) {
  return toDate(s.ended) || toDate(s.mtime) || toDate(s.started);
}

export function pretty(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (_) {
    return String(value);
  }
}

export function shellQuote(s) {
  const str = String(s);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(str) ? str : "'" + str.replace(/'/g, "'\\''") + "'";
}

// "3 lines", "1 line": a number before a noun (the CLI's agtaild.words.count).
export function counted(n, noun, many) {
  return fmtInt(n) + ' ' + (n === 1 ? noun : many || noun + 's');
}

// A usage document's cost: with a model unpriced, the known part and "+ ?" (never only "—"
// when part of it is known); the title says what is unpriced.
export function fmtUsageCost(u) {
  if (!u) return '—';
  if (u.cost_usd !== null && u.cost_usd !== undefined) return fmtCost(u.cost_usd);
  return u.cost_known_usd ? fmtCost(u.cost_known_usd) + ' + ?' : '—';
}

export function unpricedTitle(u) {
  if (!u || (u.cost_usd !== null && u.cost_usd !== undefined)) return 'Estimated at list prices';
  const models = (u.unpriced_models || []).join(', ');
  const dark = u.unpriced_tokens !== undefined ? u.unpriced_tokens : u.total_tokens || 0;
  return (u.cost_known_usd ? fmtCost(u.cost_known_usd) + ' known; ' : '') + counted(dark, 'token') + (models ? ' of ' + models : '') + ' without a known price';
}

