// Short human durations for reasons and table cells: "850ms", "45s", "3m12s", "2h05m", "4d03h".

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)}ms`;
  const s = Math.floor(abs / 1000);
  if (s < 60) return `${sign}${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${sign}${m}m${pad(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${sign}${h}h${pad(m % 60)}m`;
  return `${sign}${Math.floor(h / 24)}d${pad(h % 24)}h`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
