import { useMemo, useState } from 'preact/hooks';
import { overview, type IngestEndpoint, type Overview, type TrafficBucket } from '../api';
import { ErrorText, PageHeading } from '../components';
import { formatCount, formatSeconds } from '../components/format';
import { usePolling } from '../components/polling';
import { TrafficChart, type ChartSeries } from '../components/traffic-chart';
import type { PageProps } from './page';
import { When } from '../components/when';

const refreshMs = 10_000;
const endpoints: IngestEndpoint[] = ['users', 'users/bulk', 'events', 'events/bulk', 'products', 'products/bulk', 'productsevents', 'productsevents/bulk', 'segment', 'segment/batch'];
const colors: Record<IngestEndpoint, string> = {
  users: '#1a5fb4',
  'users/bulk': '#613583',
  events: '#26a269',
  'events/bulk': '#1c7549',
  products: '#c64600',
  'products/bulk': '#8f3300',
  productsevents: '#865e3c',
  'productsevents/bulk': '#5e4129',
  segment: '#0e7c86',
  'segment/batch': '#094f55',
};

/** How the page names an endpoint: its path, or what Segment's calls are (docs/segment.md). */
const endpointLabels: Partial<Record<IngestEndpoint, string>> = {
  segment: 'Segment calls',
  'segment/batch': 'Segment batches',
};
const endpointLabel = (endpoint: IngestEndpoint): string => endpointLabels[endpoint] ?? endpoint;

/** The account's traffic per minute (last hour) and per hour (7 days), and how far behind its own read models are. */
export function OverviewPage({ license }: PageProps) {
  const [data, setData] = useState<{ overview: Overview; at: number } | null>(null);
  const [error, setError] = useState<unknown>(null);

  usePolling(
    async (wanted) => {
      if (!license) return;
      try {
        const reply = await overview(license);
        if (!wanted()) return;
        setData({ overview: reply, at: Date.now() });
        setError(null);
      } catch (failure) {
        if (wanted()) setError(failure);
      }
    },
    refreshMs,
    license !== null,
    license,
  );

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Overview</PageHeading>
      <ErrorText error={error} />
      {!data && !error ? <p>Loading…</p> : null}
      {data ? (
        <>
          <p class="lag">
            Read models: <strong>{lagText(data.overview.projections)}</strong>
            <span class="hint"> · updated <When at={new Date(data.at).toISOString()} />, every 10 seconds</span>
          </p>
          <Traffic title="Last hour, per minute" buckets={data.overview.perMinute} stepSeconds={60} steps={60} at={data.at} />
          <Traffic title="Last 7 days, per hour" buckets={data.overview.perHour} stepSeconds={3600} steps={168} at={data.at} />
        </>
      ) : null}
    </section>
  );
}

/** This account's own lag: "caught up", or "12 s behind (340 events)". */
function lagText({ caughtUp, lagSeconds, lagEvents }: Overview['projections']): string {
  if (caughtUp) return 'caught up';
  return `${formatSeconds(lagSeconds)} behind (${formatCount(lagEvents)} ${lagEvents === 1 ? 'event' : 'events'})`;
}

interface TrafficProps {
  title: string;
  buckets: TrafficBucket[];
  stepSeconds: number;
  steps: number;
  at: number;
}

/** One period: a chart per endpoint (accepted solid, rejected dashed) and the totals as a table. */
function Traffic({ title, buckets, stepSeconds, steps, at }: TrafficProps) {
  const { times, series, totals } = useMemo(() => chartOf(buckets, stepSeconds, steps, at), [buckets, stepSeconds, steps, at]);
  const id = title.replace(/\W+/g, '-').toLowerCase();
  return (
    <section class="traffic" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {totals.length === 0 ? (
        <p>No item received in this period.</p>
      ) : (
        <>
          <TrafficChart title={title} times={times} series={series} />
          <div class="table-box" tabIndex={0} role="region" aria-label={`${title}: totals by endpoint`}>
            <table class="totals">
              <caption>Totals by endpoint</caption>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Accepted</th>
                  <th scope="col">Rejected</th>
                </tr>
              </thead>
              <tbody>
                {totals.map((total) => (
                  <tr key={total.endpoint}>
                    <th scope="row">{endpointLabel(total.endpoint)}</th>
                    <td>{formatCount(total.accepted)}</td>
                    <td>{formatCount(total.rejected)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** The buckets on a full time axis (a step without traffic is 0), two series per endpoint seen. */
function chartOf(buckets: TrafficBucket[], stepSeconds: number, steps: number, at: number) {
  const last = Math.floor(at / 1000 / stepSeconds) * stepSeconds;
  const times = Array.from({ length: steps }, (_, i) => last - (steps - 1 - i) * stepSeconds);
  const seen = endpoints.filter((endpoint) => buckets.some((bucket) => bucket.endpoint === endpoint));
  const series: ChartSeries[] = [];
  const totals = seen.map((endpoint) => {
    const accepted = new Array<number>(steps).fill(0);
    const rejected = new Array<number>(steps).fill(0);
    let acceptedTotal = 0;
    let rejectedTotal = 0;
    for (const bucket of buckets) {
      if (bucket.endpoint !== endpoint) continue;
      acceptedTotal += bucket.accepted;
      rejectedTotal += bucket.rejected;
      const index = Math.round((Date.parse(bucket.start) / 1000 - times[0]!) / stepSeconds);
      if (index < 0 || index >= steps) continue;
      accepted[index] = (accepted[index] ?? 0) + bucket.accepted;
      rejected[index] = (rejected[index] ?? 0) + bucket.rejected;
    }
    series.push({ label: `${endpointLabel(endpoint)} accepted`, color: colors[endpoint], dashed: false, values: accepted });
    series.push({ label: `${endpointLabel(endpoint)} rejected`, color: colors[endpoint], dashed: true, values: rejected });
    return { endpoint, accepted: acceptedTotal, rejected: rejectedTotal };
  });
  return { times, series, totals };
}
