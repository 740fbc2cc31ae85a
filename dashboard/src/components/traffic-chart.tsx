import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  dashed: boolean;
  values: number[];
}

/**
 * A uPlot line chart of counts over time (`times` in seconds), with its legend, as wide as its box.
 * uPlot draws on a canvas and sets its styles through the CSSOM, which the dashboard's CSP allows.
 * The same numbers are in a table beside it: the chart is not the only way to read them.
 */
export function TrafficChart({ title, times, series }: { title: string; times: number[]; series: ChartSeries[] }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(240, Math.floor(element.clientWidth));
    const chart = new uPlot(
      {
        width: width(),
        height: 220,
        scales: { y: { range: (_self, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { label: 'items', size: 50 }],
        // The legend's marker of a dashed line (rejected) is dashed too.
        legend: { markers: { dash: (self, index) => (self.series[index]?.dash ? 'dashed' : 'solid'), width: 3 } },
        series: [{ label: 'time' }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dashed ? [6, 4] : undefined }))],
      },
      [times, ...series.map((s) => s.values)],
      element,
    );
    const resized = new ResizeObserver(() => chart.setSize({ width: width(), height: 220 }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [times, series]);

  return <div class="chart" ref={box} role="img" aria-label={`${title}: chart of the numbers in the table below`} />;
}
