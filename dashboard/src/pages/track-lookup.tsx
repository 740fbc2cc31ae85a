import { Coming, PageHeading } from '../components';
import type { PageProps } from './page';

export function TrackLookupPage({ params }: PageProps) {
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Track lookup</PageHeading>
      {params.trackID ? (
        <p>
          trackID: <code>{params.trackID}</code>
        </p>
      ) : null}
      <Coming>Coming: The stored events of a trackID and the streams they belong to.</Coming>
    </section>
  );
}
