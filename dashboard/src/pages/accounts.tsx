import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function AccountsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Accounts</PageHeading>
      <Coming>Coming: Every account, and a form to create one.</Coming>
    </section>
  );
}
