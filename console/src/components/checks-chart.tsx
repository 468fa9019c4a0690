import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  color: string;
  values: number[];
}

/** Checks per day, one line per series; uPlot (about 20 KB gzipped) loaded only with the pages that chart. */
export default function ChecksChart({ days, series, label }: { days: string[]; series: ChartSeries[]; label: string }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const xs = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1_000);
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 240,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // Whole checks only on the count axis.
        axes: [{}, { label: 'checks', size: 50, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000] }],
        series: [{}, ...series.map((item) => ({ label: item.label, stroke: item.color, width: 2, points: { show: true, size: 5 } }))],
        legend: { live: false },
      },
      [xs, ...series.map((item) => item.values)],
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 240 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [days, series]);
  return <div ref={container} role="img" aria-label={label} />;
}
