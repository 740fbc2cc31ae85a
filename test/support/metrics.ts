/**
 * The value of one sample in a Prometheus text page: the metric `name` with exactly the `labels`
 * written as they are on the page (`projection="leads"`), or with none when `labels` is empty.
 * Undefined when the page has no such sample.
 */
export function sample(page: string, name: string, labels = ''): number | undefined {
  const series = labels === '' ? name : `${name}{${labels}}`;
  const line = page.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
