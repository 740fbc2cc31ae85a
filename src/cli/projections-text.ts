import type { ProjectionStatus, ProjectionsStatus } from '../../projections/runner/status.js';
import { instantText } from './instant-text.js';

/** `tracking projections status` as text: a section per concern, tables with aligned columns. */

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** Rows under a header, each column as wide as its widest cell, indented by two spaces. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) => `  ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)];
}

function projectionLines(s: ProjectionStatus): string[] {
  const lag = `${s.lagEventsAtLeast ? 'at least ' : ''}${plural(s.lagEvents, 'event')}, ${s.lagSeconds.toFixed(1)} s`;
  const lines = [
    `${s.projection}: ${plural(s.eventsApplied, 'event')} applied, updated ${instantText(s.updatedAt)}`,
    `  lag: ${lag}, ${plural(s.accountsBehind, 'account')} behind`,
  ];
  const r = s.rebuild;
  if (r?.state === 'requested') lines.push(`  rebuild requested at ${instantText(r.requestedAt)}, waiting for a worker`);
  if (r?.state === 'running') lines.push(`  rebuilding since ${instantText(r.startedAt)}: ${s.eventsApplied} of ${r.target ?? '?'} events replayed`);
  if (r?.state === 'finished') lines.push(`  last rebuilt ${instantText(r.startedAt)} to ${instantText(r.finishedAt)} (${r.target ?? '?'} events at its start)`);
  if (s.parked.events) {
    lines.push(`  parked: ${plural(s.parked.events, 'event')} it could not apply (tracking projections retry ${s.projection}); latest:`);
    for (const p of s.parked.latest) {
      const account = p.accountId ? `, account ${p.accountId}` : '';
      lines.push(`    ${p.eventType} ${p.eventId} at ${p.globalPosition}${account}, parked ${instantText(p.parkedAt)}, ${p.attempts} attempt(s): ${p.sqlstate ? `[${p.sqlstate}] ` : ''}${p.error}`);
    }
  }
  return lines;
}

function workerLines(status: ProjectionsStatus): string[] {
  if (status.workers.length === 0) return ['Workers: none alive (start one: npm run worker, or npm start with projections on)'];
  return [
    `Workers: ${status.workers.length} alive`,
    ...table(
      ['worker', 'parts held', 'started', 'last heartbeat'],
      status.workers.map((w) => [w.worker, w.parts.length ? `${w.parts.length} (${w.parts.join(', ')})` : 'none', instantText(w.startedAt), instantText(w.heartbeatAt)]),
    ),
  ];
}

function partLines(status: ProjectionsStatus): string[] {
  const held = status.parts.filter((p) => p.owner).length;
  return [
    `Parts: ${held} of ${status.parts.length} held`,
    ...table(
      ['part', 'owner', 'epoch', 'lease until', 'accounts behind'],
      status.parts.map((p) => [
        String(p.part),
        p.owner?.worker ?? 'nobody',
        String(p.epoch),
        p.owner ? instantText(p.leaseExpiresAt) : '—',
        p.accountsBehind === null ? '—' : String(p.accountsBehind),
      ]),
    ),
  ];
}

function accountLines(status: ProjectionsStatus): string[] {
  if (status.accountsBehind.length === 0) return ['Accounts furthest behind: none, every account is caught up'];
  return [
    'Accounts furthest behind:',
    ...table(
      ['account', 'projection', 'events', 'seconds'],
      status.accountsBehind.map((a) => [a.accountId, a.projection, String(a.lagEvents), a.lagSeconds.toFixed(1)]),
    ),
  ];
}

export function statusText(status: ProjectionsStatus): string {
  return [
    'Projections:',
    ...status.projections.flatMap(projectionLines).map((line) => `  ${line}`),
    '',
    ...workerLines(status),
    '',
    ...partLines(status),
    '',
    ...accountLines(status),
  ].join('\n');
}
