import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function LeadsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Leads</PageHeading>
      <Coming>Coming: Search leads by id, email or name, known or anonymous.</Coming>
    </section>
  );
}
