import { useEffect, useState } from 'preact/hooks';
import { systemAttributes } from '../../../src/spec/system-attributes';
import { ApiError, getLead, type Lead } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';
import { EraseLead } from './lead-erase';
import { Timeline } from './lead-timeline';
import { leadIdOf } from './leads-table';
import { goToLeadsList, leadsListPath } from './leads-view';
import type { PageProps } from './page';

/** A value a client sent, as text: strings as they are, anything else as JSON. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A value as the page shows it: a date-time (a UTC instant) as every instant is, anything else as text. */
function AttributeValue({ value, dateTime }: { value: unknown; dateTime: boolean }) {
  return dateTime && typeof value === 'string' ? <When at={value} /> : <>{shown(value)}</>;
}

const notSet = (value: unknown): boolean => value === null || value === undefined;

/**
 * One lead: every system attribute of docs/spec.md 2.2, its custom attributes with their registered types,
 * the anonymous ids merged into it and its timeline (profiles sent and events, latest first).
 */
export function LeadPage({ license, params }: PageProps) {
  const id = params.id ?? '';
  // Kept with the id it was loaded for: on the render that follows a new id, before the effect
  // below runs, the previous lead must not be shown under the new id.
  const [loaded, setLoaded] = useState<{ id: string; lead: Lead } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const lead = loaded?.id === id ? loaded.lead : null;

  useEffect(() => {
    if (!license) return;
    let current = true;
    setLoaded(null);
    setError(null);
    getLead(license, id).then(
      (found) => current && setLoaded({ id, lead: found }),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [license, id]);

  const known = lead ? leadIdOf(lead) : id;
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Lead {known}</PageHeading>
      <p>
        <Link href={leadsListPath()} onFollow={goToLeadsList}>
          Back to leads
        </Link>
      </p>
      {error ? (
        <ErrorText error={error instanceof ApiError && error.status === 404 ? new Error(`No lead with the id ${id} in this account.`) : error} />
      ) : !lead ? (
        <p role="status">Loading the lead…</p>
      ) : (
        <>
          {lead.userId !== null && id !== lead.userId ? (
            <p class="note" role="note">
              The anonymous id {id} was merged into this known user.
            </p>
          ) : null}
          <p>
            {lead.userId === null ? 'Anonymous lead' : 'Known user'}, created <When at={lead.createdAt} />, updated <When at={lead.updatedAt} />.
          </p>
          {license ? <EraseLead key={known} license={license} lead={lead} /> : null}
          <SystemAttributes lead={lead} />
          <CustomAttributes lead={lead} />
          <MergedIds lead={lead} />
          {license ? <Timeline license={license} id={known} /> : null}
        </>
      )}
    </section>
  );
}

/**
 * Every system attribute of docs/spec.md 2.2, those never sent (and without a default) hidden at
 * first: a lead is usually sent a few of them, and the rest would bury those under "not set".
 */
function SystemAttributes({ lead }: { lead: Lead }) {
  const [hideEmpty, setHideEmpty] = useState(true);
  // The lead's fields by name: each system attribute is one of them, under its request name.
  const values: Record<string, unknown> = lead;
  const empty = systemAttributes.filter((attribute) => notSet(values[attribute.name])).length;
  const listed = systemAttributes.filter((attribute) => !hideEmpty || !notSet(values[attribute.name]));
  return (
    <section aria-labelledby="system-attributes">
      <h2 id="system-attributes">System attributes</h2>
      <p class="toggle">
        <label>
          <input type="checkbox" checked={hideEmpty} onChange={(event) => setHideEmpty((event.currentTarget as HTMLInputElement).checked)} />
          <span>Hide attributes not set</span>
        </label>{' '}
        <span class="none">
          ({empty} of {systemAttributes.length} not set{hideEmpty && empty > 0 ? ', hidden' : ''})
        </span>
      </p>
      <ScrollBox label="System attributes">
        <table class="data attributes">
          <thead>
            <tr>
              <th scope="col">Attribute</th>
              <th scope="col">Type</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {listed.map((attribute) => {
              const value = values[attribute.name];
              return (
                <tr key={attribute.name}>
                  <th scope="row">{attribute.name}</th>
                  <td>{attribute.type}</td>
                  <td>{notSet(value) ? <span class="none">not set</span> : <AttributeValue value={value} dateTime={attribute.type === 'TIMESTAMPTZ'} />}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
    </section>
  );
}

function CustomAttributes({ lead }: { lead: Lead }) {
  const names = Object.keys(lead.attributes ?? {}).sort();
  return (
    <section aria-labelledby="custom-attributes">
      <h2 id="custom-attributes">Custom attributes</h2>
      {names.length === 0 ? (
        <p>None sent.</p>
      ) : (
        <ScrollBox label="Custom attributes">
          <table class="data attributes">
            <thead>
              <tr>
                <th scope="col">Attribute</th>
                <th scope="col">Type</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {names.map((name) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{lead.attributeTypes?.[name] ?? 'not registered'}</td>
                  <td>
                    <AttributeValue value={lead.attributes[name]} dateTime={lead.attributeTypes?.[name] === 'datetime'} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}

function MergedIds({ lead }: { lead: Lead }) {
  const ids = lead.anonymousIds ?? [];
  return (
    <section aria-labelledby="merged-ids">
      <h2 id="merged-ids">Merged anonymous ids</h2>
      {ids.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul class="merged">
          {ids.map((anonymousId) => (
            <li key={anonymousId}>
              <Link href={pathTo('/leads/:id', { id: anonymousId })}>{anonymousId}</Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
