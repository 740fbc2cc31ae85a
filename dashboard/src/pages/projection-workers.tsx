import type { AccountLag, PartStatus, WorkerStatus } from '../api';
import { formatCount, formatSeconds } from '../components/format';
import { When } from '../components/when';

/**
 * Who builds the read models: the workers alive, the parts (accounts hashed) each holds under a
 * lease, and the accounts furthest behind. As GET /admin/v1/projections gives them.
 */

export function WorkersTable({ workers }: { workers: WorkerStatus[] }) {
  return (
    <section aria-labelledby="workers-heading">
      <h2 id="workers-heading">Workers</h2>
      {workers.length === 0 ? (
        <p>No worker is alive: nothing is applied until one starts (npm run worker, or the service with projections on).</p>
      ) : (
        <div class="table-box" tabIndex={0} role="region" aria-label="Workers table">
          <table class="workers stack" aria-labelledby="workers-heading">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Parts held</th>
                <th scope="col">Started</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((worker) => (
                <tr key={worker.workerId}>
                  <th scope="row" data-label="Worker">
                    {worker.worker}
                  </th>
                  <td data-label="Parts held">
                    {formatCount(worker.parts.length)}
                    {worker.parts.length > 0 ? <div class="hint">{worker.parts.join(', ')}</div> : null}
                  </td>
                  <td data-label="Started"><When at={worker.startedAt} /></td>
                  <td data-label="Last heartbeat"><When at={worker.heartbeatAt} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function PartsTable({ parts }: { parts: PartStatus[] }) {
  const held = parts.filter((part) => part.owner).length;
  return (
    <section aria-labelledby="parts-heading">
      <h2 id="parts-heading">Parts</h2>
      <p class="hint">
        Accounts are hashed into {parts.length} parts; each is held by one worker under a lease. {formatCount(held)} of {formatCount(parts.length)} held.
      </p>
      {/* Sixteen short rows: a table that scrolls sideways on a narrow screen, rather than sixteen cards. */}
      <div class="table-box" tabIndex={0} role="region" aria-label="Parts table">
        <table class="parts" aria-labelledby="parts-heading">
          <thead>
            <tr>
              <th scope="col">Part</th>
              <th scope="col">Owner</th>
              <th scope="col">Epoch</th>
              <th scope="col">Lease until</th>
              <th scope="col">Accounts behind</th>
            </tr>
          </thead>
          <tbody>
            {parts.map((part) => (
              <tr key={part.part}>
                <th scope="row" data-label="Part">
                  {part.part}
                </th>
                <td data-label="Owner">{part.owner ? part.owner.worker : 'nobody'}</td>
                <td data-label="Epoch">{formatCount(part.epoch)}</td>
                <td data-label="Lease until">{part.owner ? <When at={part.leaseExpiresAt} /> : '—'}</td>
                <td data-label="Accounts behind">
                  {part.accountsBehind === null ? 'not reported' : formatCount(part.accountsBehind)}
                  {part.accountsBehind !== null && part.reportedAt ? <div class="hint">reported <When at={part.reportedAt} /></div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function AccountsBehindTable({ accounts }: { accounts: AccountLag[] }) {
  return (
    <section aria-labelledby="behind-heading">
      <h2 id="behind-heading">Accounts furthest behind</h2>
      {accounts.length === 0 ? (
        <p>No account is behind: every account's read models have applied every stored event.</p>
      ) : (
        <div class="table-box" tabIndex={0} role="region" aria-label="Accounts furthest behind table">
          <table class="behind stack" aria-labelledby="behind-heading">
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Projection</th>
                <th scope="col">Events</th>
                <th scope="col">Seconds</th>
              </tr>
            </thead>
            <tbody>
              {accounts.map((lag) => (
                <tr key={`${lag.accountId} ${lag.projection}`}>
                  <th scope="row" data-label="Account">
                    <code>{lag.accountId}</code>
                  </th>
                  <td data-label="Projection">{lag.projection}</td>
                  <td data-label="Events">{formatCount(lag.lagEvents)}</td>
                  <td data-label="Seconds">{formatSeconds(lag.lagSeconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
