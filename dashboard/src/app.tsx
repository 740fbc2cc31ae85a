import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { accountsChanged, currentSession, listAccounts, onUnauthorized, signOut, type AccountSummary, type Session } from './api';
import { ErrorText, PageHeading } from './components';
import { PageBoundary } from './components/page-boundary';
import { ApiReferencePage, apiReferencePath } from './pages/api-reference';
import { routes } from './pages/index';
import type { PageRoute } from './pages/page';
import { SignInPage } from './pages/sign-in';
import { Link, matchPath, usePath } from './router';

type SessionState = { state: 'checking' } | { state: 'signed-out'; notice?: unknown } | { state: 'signed-in'; session: Session };

export function App() {
  const [auth, setAuth] = useState<SessionState>({ state: 'checking' });
  const path = usePath();

  useEffect(() => {
    onUnauthorized(() => setAuth({ state: 'signed-out', notice: 'The session has ended: sign in again.' }));
    currentSession()
      .then((session) => setAuth(session ? { state: 'signed-in', session } : { state: 'signed-out' }))
      .catch((error: unknown) => setAuth({ state: 'signed-out', notice: `Could not check the session: ${String((error as Error).message)}` }));
  }, []);

  // The API reference is public: without a session it is shown on its own.
  if (auth.state !== 'signed-in' && path === apiReferencePath) return <PublicApiReference />;
  if (auth.state === 'checking') return <p class="checking">Loading…</p>;
  if (auth.state === 'signed-out') {
    return <SignInPage notice={auth.notice} onSignedIn={(session) => setAuth({ state: 'signed-in', session })} />;
  }
  return <Dashboard session={auth.session} onSignedOut={() => setAuth({ state: 'signed-out' })} />;
}

function Dashboard({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const path = usePath();
  const operator = session.kind === 'operator';
  const [picked, setPicked] = useState<string | null>(null);
  const license = session.kind === 'account' ? session.account.licenseCode : picked;
  const [signOutError, setSignOutError] = useState<unknown>(null);

  const visible = routes.filter((route) => operator || !route.operatorOnly);
  const found = findRoute(visible, path);

  // A new page takes the focus on its heading (see PageHeading), in the same task as the page is
  // put in the document: an effect runs after the next frame, so a Tab pressed on the shown page
  // before then went somewhere and was then undone (the focus pulled back to the heading).
  useLayoutEffect(() => {
    document.getElementById('page-heading')?.focus();
    document.title = `${found?.route.title ?? (findRoute(routes, path) ? 'Operators only' : 'Not found')} · Tracking dashboard`;
  }, [path]);

  const leave = async () => {
    try {
      await signOut();
      onSignedOut();
    } catch (error) {
      setSignOutError(error);
    }
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tracking</span>
        <span class="who">
          <span class="visually-hidden">Signed in as </span>
          {session.kind === 'account' ? session.account.name : 'Operator'}
        </span>
        {operator ? <AccountPicker picked={picked} onPick={setPicked} /> : null}
        <button type="button" class="sign-out" onClick={leave}>
          Sign out
        </button>
      </header>
      <ErrorText error={signOutError} />
      <nav aria-label="Sections">
        <ul>
          {visible
            .filter((route) => route.nav)
            .map((route) => (
              <li key={route.path}>
                <Link href={route.path} current={found?.route.path === route.path}>
                  {route.title}
                </Link>
              </li>
            ))}
        </ul>
      </nav>
      <main id="main">
        {!found && findRoute(routes, path) ? (
          <section aria-labelledby="page-heading">
            <PageHeading>Operators only</PageHeading>
            <p role="alert">This page is for operators: an account's session cannot open it.</p>
          </section>
        ) : !found ? (
          <section aria-labelledby="page-heading">
            <PageHeading>Not found</PageHeading>
            <p>The dashboard has no such page.</p>
          </section>
        ) : found.route.accountScoped && !license ? (
          <section aria-labelledby="page-heading">
            <PageHeading>{found.route.title}</PageHeading>
            <p>Pick an account first.</p>
          </section>
        ) : (
          <PageBoundary key={path} title={found.route.title}>
            <found.route.page session={session} license={found.route.accountScoped ? license : null} params={found.params} />
          </PageBoundary>
        )}
      </main>
    </>
  );
}

/** The API reference for someone not signed in, with a way to sign in. */
function PublicApiReference() {
  useEffect(() => {
    document.title = 'API reference · Tracking dashboard';
  }, []);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tracking</span>
        <Link href="/" class="sign-in-link">
          Sign in
        </Link>
      </header>
      <main id="main">
        <ApiReferencePage />
      </main>
    </>
  );
}

function findRoute(candidates: readonly PageRoute[], path: string): { route: PageRoute; params: Record<string, string> } | null {
  for (const route of candidates) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

/** The operator's choice of account: every account-scoped page shows the picked one. */
function AccountPicker({ picked, onPick }: { picked: string | null; onPick: (license: string) => void }) {
  const [accounts, setAccounts] = useState<AccountSummary[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const load = () =>
      listAccounts()
        .then(({ accounts: found }) => {
          setAccounts(found);
          if (!picked && found[0]) onPick(found[0].licenseCode);
        })
        .catch(setError);
    void load();
    accountsChanged.addEventListener('change', load);
    return () => accountsChanged.removeEventListener('change', load);
  }, [picked]);

  if (error) return <ErrorText error={error} />;
  if (!accounts) return <span class="picker">Loading accounts…</span>;
  if (accounts.length === 0) return <span class="picker">No accounts yet</span>;
  return (
    <span class="picker">
      <label for="account-picker">Account</label>
      <select id="account-picker" value={picked ?? ''} onChange={(event) => onPick((event.currentTarget as HTMLSelectElement).value)}>
        {accounts.map((account) => (
          <option key={account.licenseCode} value={account.licenseCode}>
            {account.name} ({account.licenseCode})
          </option>
        ))}
      </select>
    </span>
  );
}
