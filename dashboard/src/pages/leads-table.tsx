import type { Lead, LeadTotal, ListedLead } from '../api';
import { formatCount } from '../components/format';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';

/** The id a lead is known by: its userId, else its anonymous id. */
export const leadIdOf = (lead: Pick<Lead, 'userId' | 'anonymousId'>): string => lead.userId ?? lead.anonymousId ?? '';

export const nameOf = (lead: Pick<Lead, 'firstName' | 'lastName'>): string => [lead.firstName, lead.lastName].filter(Boolean).join(' ');

/** An estimate to two significant digits: 1,187,342 is about 1,200,000. */
const roughly = (count: number): number => (count < 100 ? count : Number(count.toPrecision(2)));

/** How many leads the list's filters hold: exact, or an estimate said to be one. */
export function LeadsTotal({ total }: { total: LeadTotal }) {
  const text = total.exact
    ? `${formatCount(total.count)} ${total.count === 1 ? 'lead' : 'leads'}`
    : `about ${formatCount(roughly(total.count))} leads (an estimate)`;
  return <p class="total">{text}</p>;
}

export function LeadTable({ leads }: { leads: ListedLead[] }) {
  return (
    <ScrollBox label="Leads">
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Identifier</th>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {leads.map((lead) => {
            const id = leadIdOf(lead);
            return (
              <tr key={id}>
                <td>
                  <Link href={pathTo('/leads/:id', { id })}>{id}</Link>
                  {lead.userId === null ? <span class="tag"> anonymous</span> : null}
                </td>
                <td>{nameOf(lead)}</td>
                <td>{typeof lead.email === 'string' ? lead.email : ''}</td>
                <td>
                  <When at={lead.createdAt} />
                </td>
                <td>
                  <When at={lead.updatedAt} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
