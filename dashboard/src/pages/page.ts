import type { ComponentType } from 'preact';
import type { Session } from '../api';

/** What app.tsx gives every page. */
export interface PageProps {
  session: Session;
  /**
   * The license code of the account the page is about: the signed-in account's own, or the one an
   * operator picked. Null on operator pages, and for an operator while no account is picked.
   */
  license: string | null;
  /** The route's parameters, decoded: { id } for '/leads/:id'. */
  params: Record<string, string>;
}

export interface PageRoute {
  /** Dashboard path pattern, relative to /dashboard: '/leads/:id'. */
  path: string;
  title: string;
  page: ComponentType<PageProps>;
  /** Shown in the navigation (routes with parameters are not). */
  nav: boolean;
  /** Operators only (Projections, Accounts). */
  operatorOnly?: boolean;
  /** Needs an account: an operator must pick one first. */
  accountScoped?: boolean;
}
