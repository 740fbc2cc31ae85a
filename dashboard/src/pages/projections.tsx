import { useState } from 'preact/hooks';
import { listProjections, rebuildProjection, retryParked, type ProjectionStatus, type ProjectionsStatus, type RebuildStatus } from '../api';
import { ErrorText, PageHeading } from '../components';
import { formatCount, formatSeconds, instantText } from '../components/format';
import { usePolling } from '../components/polling';
import { useAction } from '../components/use-action';
import { AccountRebuildForm } from './account-rebuild';
import type { PageProps } from './page';
import { AccountsBehindTable, PartsTable, WorkersTable } from './projection-workers';
import { When } from '../components/when';

/** The status is read every second while a rebuild is under way, else every 10 seconds. */
const fastMs = 1_000;
const slowMs = 10_000;

const underWay = (rebuild: RebuildStatus | null): boolean => rebuild?.state === 'requested' || rebuild?.state === 'running';

/**
 * Operators: every projection's events applied, lag and parked events, with rebuild and retry; the
 * workers, the parts they hold and the accounts furthest behind; the rebuild of one account.
 */
export function ProjectionsPage({ license }: PageProps) {
  const [whole, setWhole] = useState<ProjectionsStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [refreshes, setRefreshes] = useState(0);
  const statuses = whole?.projections ?? null;

  usePolling(
    async (wanted) => {
      try {
        const reply = await listProjections();
        if (!wanted()) return;
        setWhole(reply);
        setError(null);
      } catch (failure) {
        if (wanted()) setError(failure);
      }
    },
    statuses?.some((status) => underWay(status.rebuild)) ? fastMs : slowMs,
    true,
    refreshes,
  );
  const refresh = () => setRefreshes((count) => count + 1);

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Projections</PageHeading>
      <ErrorText error={error} />
      {!whole && !error ? <p>Loading…</p> : null}
      {whole && statuses ? (
        <>
          <div class="table-box" tabIndex={0} role="region" aria-label="Projections table">
            <table class="projections stack" aria-label="Projections">
              <thead>
                <tr>
                  <th scope="col">Projection</th>
                  <th scope="col">Events applied</th>
                  <th scope="col">Lag</th>
                  <th scope="col">Accounts behind</th>
                  <th scope="col">Parked</th>
                  <th scope="col">Rebuild</th>
                </tr>
              </thead>
              <tbody>
                {statuses.map((status) => (
                  <tr key={status.projection}>
                    <th scope="row" data-label="Projection">{status.projection}</th>
                    <td data-label="Events applied">
                      {formatCount(status.eventsApplied)}
                      <div class="hint">{status.updatedAt ? <>updated <When at={status.updatedAt} /></> : 'never updated'}</div>
                    </td>
                    <td data-label="Lag">
                      {status.lagEventsAtLeast ? 'at least ' : ''}
                      {formatCount(status.lagEvents)} {status.lagEvents === 1 ? 'event' : 'events'}, {formatSeconds(status.lagSeconds)}
                    </td>
                    <td data-label="Accounts behind">{formatCount(status.accountsBehind)}</td>
                    <td data-label="Parked">{formatCount(status.parked.events)}</td>
                    <td class="rebuild-state" data-label="Rebuild">{rebuildText(status)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <AccountsBehindTable accounts={whole.accountsBehind} />
          <WorkersTable workers={whole.workers} />
          <PartsTable parts={whole.parts} />
          <AccountRebuildForm license={license} names={statuses.map((status) => status.projection)} onDone={refresh} />
          {statuses.map((status) => (
            <ProjectionActions key={status.projection} status={status} onChanged={refresh} />
          ))}
        </>
      ) : null}
    </section>
  );
}

function rebuildText(status: ProjectionStatus): string {
  const { rebuild } = status;
  if (!rebuild) return 'never rebuilt';
  switch (rebuild.state) {
    case 'requested':
      return `requested ${instantText(rebuild.requestedAt)}: waiting for a worker`;
    case 'running':
      return `running: ${formatCount(status.eventsApplied)} of ${rebuild.target === null ? '?' : formatCount(rebuild.target)} events`;
    case 'finished':
      return `finished ${instantText(rebuild.finishedAt)}`;
  }
}

/** The rebuild (with a confirmation step) and the retry of parked events of one projection. */
function ProjectionActions({ status, onChanged }: { status: ProjectionStatus; onChanged: () => void }) {
  const name = status.projection;
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction();
  const [retried, setRetried] = useState<string | null>(null);
  const rebuilding = underWay(status.rebuild);

  const act = (action: () => Promise<void>) =>
    run(async () => {
      await action();
      onChanged();
    });

  const rebuild = () =>
    act(async () => {
      setConfirming(false);
      await rebuildProjection(name);
    });
  const retry = () =>
    act(async () => {
      const result = await retryParked(name);
      setRetried(`${result.retried} retried: ${result.applied} applied, ${result.stillParked} still parked.`);
    });

  return (
    <section class="projection" aria-labelledby={`projection-${name}`}>
      <h2 id={`projection-${name}`}>{name}</h2>
      <p class="rebuild-progress" role="status">
        Rebuild: {rebuildText(status)}
      </p>
      <div class="actions">
        {confirming ? (
          <div class="confirm-rebuild" role="group" aria-label={`Confirm the rebuild of ${name}`}>
            <p>
              Rebuild {name}? Its read models are emptied and every stored event is replayed; until it finishes they are incomplete.
            </p>
            <button type="button" class="danger" disabled={busy} onClick={rebuild}>
              Yes, rebuild {name}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" disabled={busy || rebuilding} onClick={() => setConfirming(true)}>
            Rebuild {name}…
          </button>
        )}
        {status.parked.events > 0 ? (
          <button type="button" class="secondary" disabled={busy || rebuilding} onClick={retry}>
            Retry parked events of {name}
          </button>
        ) : null}
      </div>
      {retried ? <p role="status">{retried}</p> : null}
      <ErrorText error={error} />
      {status.parked.latest.length > 0 ? (
        <>
          <h3>
            Parked events ({formatCount(status.parked.events)}), latest first
          </h3>
          <ul class="parked">
            {status.parked.latest.map((parked) => (
              <li key={parked.eventId}>
                <code>{parked.eventType}</code> at global position {parked.globalPosition}, parked <When at={parked.parkedAt} /> after{' '}
                {parked.attempts} {parked.attempts === 1 ? 'attempt' : 'attempts'}
                <pre class="excerpt">{parked.error}</pre>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
