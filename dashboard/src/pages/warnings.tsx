import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function WarningsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Warnings</PageHeading>
      <Coming>Coming: Items refused after the account was known, grouped by reason, with examples.</Coming>
    </section>
  );
}
