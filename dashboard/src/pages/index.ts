import { AccountsPage } from './accounts';
import { ApiReferencePage, apiReferencePath } from './api-reference';
import { CredentialsPage } from './credentials';
import { ErasuresPage, erasuresPath } from './erasures';
import { LeadPage } from './lead';
import { LeadsPage } from './leads';
import { LiveEventsPage } from './live-events';
import { OverviewPage } from './overview';
import type { PageRoute } from './page';
import { ProductPage } from './product';
import { ProductsPage } from './products';
import { ProjectionsPage } from './projections';
import { TrackLookupPage } from './track-lookup';
import { WarningsPage } from './warnings';

/** Every page of the dashboard, in the order of the navigation. One file per page in this folder. */
export const routes: readonly PageRoute[] = [
  { path: '/', title: 'Overview', page: OverviewPage, nav: true, accountScoped: true },
  { path: '/leads', title: 'Leads', page: LeadsPage, nav: true, accountScoped: true },
  { path: '/leads/:id', title: 'Lead', page: LeadPage, nav: false, accountScoped: true },
  { path: '/products', title: 'Products', page: ProductsPage, nav: true, accountScoped: true },
  { path: '/products/:id', title: 'Product', page: ProductPage, nav: false, accountScoped: true },
  { path: '/live', title: 'Live events', page: LiveEventsPage, nav: true, accountScoped: true },
  { path: '/warnings', title: 'Warnings', page: WarningsPage, nav: true, accountScoped: true },
  { path: '/track', title: 'Track lookup', page: TrackLookupPage, nav: true, accountScoped: true },
  { path: '/track/:trackID', title: 'Track lookup', page: TrackLookupPage, nav: false, accountScoped: true },
  { path: '/credentials', title: 'Credentials', page: CredentialsPage, nav: true, accountScoped: true },
  { path: erasuresPath, title: 'Erasures', page: ErasuresPage, nav: true, accountScoped: true },
  { path: '/projections', title: 'Projections', page: ProjectionsPage, nav: true, operatorOnly: true },
  { path: '/accounts', title: 'Accounts', page: AccountsPage, nav: true, operatorOnly: true },
  // Also shown without a session (app.tsx).
  { path: apiReferencePath, title: 'API reference', page: ApiReferencePage, nav: true },
];
