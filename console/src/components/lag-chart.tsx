import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

/** Projection lag in events over time, one line per projection. */
export default function LagChart({ times, series }: { times: string[]; series: { label: string; color: string; values: (number | null)[] }[] }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 240,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { label: 'events behind', size: 60, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 10_000, 100_000, 1_000_000] }],
        series: [{}, ...series.map((item) => ({ label: item.label, stroke: item.color, width: 2, spanGaps: true }))],
        legend: { live: false },
      },
      [times.map((at) => Date.parse(at) / 1_000), ...series.map((item) => item.values)],
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 240 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series]);
  const worst = Math.max(0, ...series.flatMap((item) => item.values.map((value) => value ?? 0)));
  return <div ref={container} role="img" aria-label={`Projection lag over the last hour, at most ${worst} events behind`} />;
}
