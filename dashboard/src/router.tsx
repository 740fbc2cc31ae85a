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

export function navigate(path: string): void {
  window.history.pushState(null, '', basePath + path);
  window.dispatchEvent(new Event(navigated));
}

/** The current dashboard path, following links, navigate() and the browser's back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('popstate', update);
    window.addEventListener(navigated, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(navigated, update);
    };
  }, []);
  return path;
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
}

/** A link to a dashboard path that changes the page without a reload (a modified click still opens a tab). */
export function Link({ href, children, current, ...rest }: LinkProps) {
  const follow = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={basePath + href} aria-current={current ? 'page' : undefined} onClick={follow}>
      {children}
    </a>
  );
}
