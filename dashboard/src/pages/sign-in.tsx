import { useState } from 'preact/hooks';
import { signIn, type Session, type SignIn } from '../api';
import { ErrorText } from '../components';
import { Link } from '../router';
import { apiReferencePath } from './api-reference';

type Who = 'account' | 'operator';

/**
 * Sign-in of an account owner (license code and an access token of scope ingest+read) or of an
 * operator (the admin token). The server answers with an HttpOnly session cookie: the tokens typed
 * here are sent once and kept nowhere.
 */
export function SignInPage({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice?: unknown }) {
  const [who, setWho] = useState<Who>('account');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const credentials: SignIn =
      who === 'account' ? { licenseCode: text('licenseCode'), accessToken: text('accessToken') } : { adminToken: text('adminToken') };
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(credentials));
    } catch (failure) {
      // The server's reason, as a sentence: "Wrong admin token".
      const text = failure instanceof Error ? failure.message : String(failure);
      setError(text.charAt(0).toUpperCase() + text.slice(1));
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <h1>Tracking dashboard</h1>
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <fieldset class="sign-in-as">
          <legend>Sign in as</legend>
          <label>
            <input type="radio" name="who" value="account" checked={who === 'account'} onChange={() => setWho('account')} /> Account owner
          </label>
          <label>
            <input type="radio" name="who" value="operator" checked={who === 'operator'} onChange={() => setWho('operator')} /> Operator
          </label>
        </fieldset>
        {who === 'account' ? (
          <>
            <label for="license-code">License code</label>
            <input id="license-code" name="licenseCode" type="text" autocomplete="username" spellcheck={false} required />
            <label for="access-token">Access token</label>
            <input id="access-token" name="accessToken" type="password" autocomplete="current-password" required />
            <p class="hint">An access token of scope ingest+read.</p>
          </>
        ) : (
          <>
            <label for="admin-token">Admin token</label>
            <input id="admin-token" name="adminToken" type="password" autocomplete="current-password" required />
          </>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <div id="sign-in-error">
          <ErrorText error={error ?? notice} />
        </div>
      </form>
      <p class="hint">
        Calling the API from a program? See the <Link href={apiReferencePath}>API reference</Link>.
      </p>
    </main>
  );
}
