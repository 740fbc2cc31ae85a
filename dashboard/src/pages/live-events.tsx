import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function LiveEventsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Live events</PageHeading>
      <Coming>Coming: The items stored most recently, newest first, as they arrive.</Coming>
    </section>
  );
}
