import type { Erasure, ErasureCounts } from '../api';
import { formatCount } from '../components/format';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';

const counted = (count: number, one: string, many: string): string => `${formatCount(count)} ${count === 1 ? one : many}`;

/** What an erasure removed, as one line: "1 key, 3 events, 1 lead, 0 refused items, 0 recorded replies". */
export function countsText(counts: ErasureCounts): string {
  return [
    counted(counts.keys, 'key', 'keys'),
    counted(counts.events, 'event', 'events'),
    counted(counts.leads, 'lead', 'leads'),
    counted(counts.rejectedItems, 'refused item', 'refused items'),
    counted(counts.idempotencyReplies, 'recorded reply', 'recorded replies'),
  ].join(', ');
}

const none = <span class="none">—</span>;

/** One id of the person: as sent (text) until the erasure is done, then only its pseudonym remains. */
function PersonId({ kind, id, pseudonym }: { kind: string; id: string | null; pseudonym: string | null }) {
  if (id === null && pseudonym === null) return null;
  return (
    <span class="person-id">
      <span class="id-kind">{kind}</span>{' '}
      {id !== null ? (
        <code>{id}</code>
      ) : (
        <span class="pseudonym">
          erased, pseudonym <code>{pseudonym}</code>
        </span>
      )}
    </span>
  );
}

/** The person's ids, each after its name. */
function PersonIds({ erasure }: { erasure: Erasure }) {
  return (
    <>
      <PersonId kind="userId" id={erasure.userId} pseudonym={erasure.userRef} />
      <PersonId kind="anonymousId" id={erasure.anonymousId} pseudonym={erasure.anonymousRef} />
    </>
  );
}

/**
 * Who asked: an access token by its label (as its owner typed it: text), else `account session`,
 * `operator` or `cli`.
 */
function RequestedBy({ erasure }: { erasure: Erasure }) {
  const token = erasure.requestedByToken;
  if (!token) return <span class="by">by {erasure.requestedBy}</span>;
  return (
    <span class="by" title={`access token ${token.id}`}>
      by access token <span class="token-label">“{token.label}”</span>
      {token.revokedAt ? ' (revoked)' : ''}
    </span>
  );
}

function StateText({ state }: { state: Erasure['state'] }) {
  if (state === 'failed') return <span class="warning">failed</span>;
  return <span class={`erasure-state ${state}`}>{state}</span>;
}

/** The erasures, latest first; `highlight` marks the one just requested. */
export function ErasureTable({ erasures, highlight }: { erasures: Erasure[]; highlight: string | null }) {
  return (
    <ScrollBox label="Erasures">
      <table class="data stack erasures">
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Suppress</th>
            <th scope="col">Requested</th>
            <th scope="col">State</th>
            <th scope="col">Done</th>
            <th scope="col">Removed</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {erasures.map((erasure) => (
            <tr key={erasure.id} class={erasure.id === highlight ? 'requested' : undefined} data-erasure={erasure.id}>
              <td data-label="Person" class="person">
                <PersonIds erasure={erasure} />
              </td>
              <td data-label="Suppress">{erasure.suppress ? 'yes' : 'no'}</td>
              <td data-label="Requested">
                <When at={erasure.requestedAt} />
                <RequestedBy erasure={erasure} />
              </td>
              <td data-label="State">
                <StateText state={erasure.state} />
              </td>
              <td data-label="Done">
                <When at={erasure.doneAt} />
              </td>
              <td data-label="Removed" class="removed">
                {erasure.counts ? countsText(erasure.counts) : none}
              </td>
              <td data-label="Error" class="failure">
                {erasure.error ?? none}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
