import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Where the dashboard is served; its own paths ('/', '/leads/42') are relative to it. */
export const basePath = '/dashboard';
const navigated = 'dashboard:navigated';

/** The dashboard path of the page shown: '/' for /dashboard and /dashboard/. */
export function currentPath(): string {
  const { pathname } = window.location;
  const path = pathname.startsWith(basePath) ? pathname.slice(basePath.length) : pathname;
  return path === '' ? '/' : path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Shows `path` (a dashboard path, with a query string or not) as a new history entry, holding `state`. */
export function navigate(path: string, state: unknown = null): void {
  window.history.pushState(state, '', basePath + path);
  window.dispatchEvent(new Event(navigated));
}

/** Calls `update` whenever the location changes: links, navigate(), setQuery(), back and forward. */
function onLocationChange(update: () => void): () => void {
  window.addEventListener('popstate', update);
  window.addEventListener(navigated, update);
  return () => {
    window.removeEventListener('popstate', update);
    window.removeEventListener(navigated, update);
  };
}

/** The current dashboard path, following links, navigate() and the browser's back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => onLocationChange(() => setPath(currentPath())), []);
  return path;
}

/** The page's query string and the state its history entry holds (setQuery's `state`). */
export interface QueryLocation {
  query: URLSearchParams;
  state: unknown;
}

export const queryLocation = (): QueryLocation => ({ query: new URLSearchParams(window.location.search), state: window.history.state as unknown });

/** The current query string and history state, following every change of the location as usePath does. */
export function useQuery(): QueryLocation {
  const [location, setLocation] = useState(queryLocation);
  useEffect(() => onLocationChange(() => setLocation(queryLocation())), []);
  return location;
}

/**
 * Shows the same page with another query string (`params`, empty values left out): as a new
 * history entry ('push', what Back returns from), or in place of the current one ('replace', for
 * what changes as one types). `state` goes with the entry (history.state), for a reload or Back.
 */
export function setQuery(params: Record<string, string | undefined>, how: 'push' | 'replace', state: unknown = null): void {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
  const text = query.toString();
  const url = `${window.location.pathname}${text ? `?${text}` : ''}`;
  if (how === 'push') window.history.pushState(state, '', url);
  else window.history.replaceState(state, '', url);
  window.dispatchEvent(new Event(navigated));
}

/** The parameters of `path` under `pattern` ('/leads/:id'), decoded, or null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const wanted = pattern.split('/');
  const given = path.split('/');
  if (wanted.length !== given.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < wanted.length; i++) {
    const part = wanted[i] as string;
    const value = given[i] as string;
    if (part.startsWith(':')) {
      if (!value) return null;
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return null;
      }
    } else if (part !== value) return null;
  }
  return params;
}

/** A dashboard path with its parameters encoded: pathTo('/leads/:id', { id }) */
export function pathTo(pattern: string, params: Record<string, string> = {}): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

export interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
  /** What following the link does instead of navigate(href) (the link's history state, say). */
  onFollow?: () => void;
}

/** A link to a dashboard path that changes the page without a reload (a modified click still opens a tab). */
export function Link({ href, children, current, onFollow, ...rest }: LinkProps) {
  const follow = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (onFollow) onFollow();
    else navigate(href);
  };
  return (
    <a {...rest} href={basePath + href} aria-current={current ? 'page' : undefined} onClick={follow}>
      {children}
    </a>
  );
}
