import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function CredentialsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Credentials</PageHeading>
      <Coming>Coming: The account's access tokens: create, label and revoke them.</Coming>
    </section>
  );
}
