import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function LeadPage({ params }: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Lead</PageHeading>
      <p>
        Lead id: <code>{params.id}</code>
      </p>
      <Coming>Coming: One lead: its profile, attributes and timeline.</Coming>
    </section>
  );
}
