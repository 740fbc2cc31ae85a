import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { utcText } from './format';

/**
 * The uPlot part of the traffic chart, loaded only where a chart is drawn (traffic-chart.tsx): the
 * library is large, and it reads the browser's locale when it loads.
 */

export interface ChartSeries {
  label: string;
  color: string;
  dashed: boolean;
  values: number[];
}

export interface DrawnChart {
  resize(width: number): void;
  destroy(): void;
}

const height = 220;

/** A tick of the time axis, on the 24-hour UTC clock of the rest of the dashboard: `14:05`; at midnight the date under it. */
function tickText(seconds: number): string {
  // `2026-11-23 06:22 UTC`: the date, then the clock.
  const text = utcText(new Date(seconds * 1000), 'minute');
  const clock = text.slice(11, 16);
  return clock === '00:00' ? `${clock}\n${text.slice(0, 10)}` : clock;
}

/** A line chart of counts over time (`times` in seconds) into `element`, its axis and legend in UTC. */
export function drawChart(element: HTMLElement, width: number, times: number[], series: ChartSeries[]): DrawnChart {
  const chart = new uPlot(
    {
      width,
      height,
      // Times in UTC, as every other time of the dashboard (components/when.tsx).
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      scales: { y: { range: (_self, _min, max) => [0, Math.max(1, max)] } },
      axes: [{ label: 'time (UTC)', values: (_self, splits) => splits.map(tickText) }, { label: 'items', size: 50 }],
      // The legend's marker of a dashed line (rejected) is dashed too.
      legend: { markers: { dash: (self, index) => (self.series[index]?.dash ? 'dashed' : 'solid'), width: 3 } },
      series: [
        { label: 'time', value: (_self, seconds: number | null) => (seconds === null ? '—' : utcText(new Date(seconds * 1000), 'minute')) },
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dashed ? [6, 4] : undefined })),
      ],
    },
    [times, ...series.map((s) => s.values)],
    element,
  );
  return { resize: (to) => chart.setSize({ width: to, height }), destroy: () => chart.destroy() };
}
