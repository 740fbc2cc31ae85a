import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function ProjectionsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Projections</PageHeading>
      <Coming>Coming: Each projection's checkpoint, lag and parked events; rebuild and retry.</Coming>
    </section>
  );
}
