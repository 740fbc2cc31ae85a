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

/** The person's ids, each after its name; what the client sent, as text. */
function PersonIds({ erasure }: { erasure: Erasure }) {
  return (
    <>
      {erasure.userId !== null ? (
        <span class="person-id">
          <span class="id-kind">userId</span> <code>{erasure.userId}</code>
        </span>
      ) : null}
      {erasure.anonymousId !== null ? (
        <span class="person-id">
          <span class="id-kind">anonymousId</span> <code>{erasure.anonymousId}</code>
        </span>
      ) : null}
    </>
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
                <span class="by">by {erasure.requestedBy}</span>
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
