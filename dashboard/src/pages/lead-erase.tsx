import { useEffect, useRef, useState } from 'preact/hooks';
import { requestErasure, type Lead, type NewErasure } from '../api';
import { ErrorText } from '../components';
import { EraseConfirm } from '../components/erase-confirm';
import { useAction } from '../components/use-action';
import { showRequested } from './erasures';

/**
 * "Erase this person…" on a lead's page: a confirmation naming them (their userId, else their
 * anonymous id), then the request, and the Erasures page following it until it is done.
 */
export function EraseLead({ license, lead }: { license: string; lead: Lead }) {
  const [asking, setAsking] = useState(false);
  const [suppress, setSuppress] = useState(false);
  const [refocus, setRefocus] = useState(false);
  const { busy, error, setError, run } = useAction();
  const opener = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (refocus) opener.current?.focus();
    setRefocus(false);
  }, [refocus]);

  // A known user's userId also erases the anonymous ids merged into them (the server finds those).
  const person: NewErasure = lead.userId !== null ? { userId: lead.userId } : { anonymousId: lead.anonymousId ?? '' };
  const cancel = () => {
    setAsking(false);
    setError(null);
    setRefocus(true);
  };
  const erase = () =>
    run(async () => {
      showRequested(await requestErasure(license, { ...person, suppress }));
    });

  return (
    <div class="erase-lead">
      <button
        type="button"
        class="secondary danger"
        ref={opener}
        aria-expanded={asking}
        aria-controls={asking ? 'erase-lead-confirm' : undefined}
        onClick={() => setAsking(true)}
      >
        Erase this person…
      </button>
      {asking ? (
        <EraseConfirm id="erase-lead-confirm" person={person} suppress={suppress} onSuppress={setSuppress} busy={busy} onConfirm={() => void erase()} onCancel={cancel} />
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}
