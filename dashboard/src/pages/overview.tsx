import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function OverviewPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Overview</PageHeading>
      <Coming>Coming: Traffic per minute and per hour, accepted and rejected, and how far behind the projections are.</Coming>
    </section>
  );
}
