import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChartSeries } from './uplot-chart';

export type { ChartSeries } from './uplot-chart';

/**
 * Loads the chart library. uPlot makes `new Intl.NumberFormat(navigator.language)` when its module
 * loads, which throws for a locale Intl does not take (Chromium started with LANG=C reports
 * 'en-US@posix'); while it loads, such a browser's language reads as 'en'.
 */
async function loadChart(): Promise<typeof import('./uplot-chart')> {
  let taken = true;
  try {
    new Intl.NumberFormat(navigator.language);
  } catch {
    taken = false;
  }
  if (taken) return import('./uplot-chart');
  Object.defineProperty(navigator, 'language', { value: 'en', configurable: true });
  try {
    return await import('./uplot-chart');
  } finally {
    // The navigator's own getter again.
    Reflect.deleteProperty(navigator, 'language');
  }
}

/**
 * A uPlot line chart of counts over time (`times` in seconds), with its legend, as wide as its box.
 * uPlot draws on a canvas and sets its styles through the CSSOM, which the dashboard's CSP allows.
 * The same numbers are in a table beside it: the chart is not the only way to read them, and a
 * chart that cannot be drawn says so in its place.
 */
export function TrafficChart({ title, times, series }: { title: string; times: number[]; series: ChartSeries[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [failure, setFailure] = useState<string | null>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(240, Math.floor(element.clientWidth));
    let stopped = false;
    let cleanup = (): void => undefined;
    loadChart()
      .then(({ drawChart }) => {
        if (stopped) return;
        const chart = drawChart(element, width(), times, series);
        const resized = new ResizeObserver(() => chart.resize(width()));
        resized.observe(element);
        cleanup = () => {
          resized.disconnect();
          chart.destroy();
        };
      })
      .catch((error: unknown) => setFailure(error instanceof Error ? error.message : String(error)));
    return () => {
      stopped = true;
      cleanup();
    };
  }, [times, series]);

  if (failure) {
    return (
      <p class="error" role="alert">
        The chart could not be drawn ({failure}); the table below has its numbers.
      </p>
    );
  }
  return <div class="chart" ref={box} role="img" aria-label={`${title}: chart of the numbers in the table below`} />;
}
