import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface TimeSeries {
  label: string;
  color: string;
  values: (number | null)[];
}

/**
 * A line per series over time (`xs` in seconds), as wide as its container and following its
 * resizes; uPlot is loaded only with the pages that chart, so the others do not download it. The y axis starts
 * at zero and steps by `yAxis.incrs`; `line` adds options to every series.
 */
export function TimeChart({
  xs,
  series,
  yAxis,
  line,
  label,
}: {
  xs: number[];
  series: TimeSeries[];
  yAxis: { label: string; size: number; incrs: number[] };
  line: Partial<uPlot.Series>;
  label: string;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 240,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, yAxis],
        series: [{}, ...series.map((item) => ({ ...line, label: item.label, stroke: item.color, width: 2 }))],
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
  }, [xs, series, yAxis, line]);
  return <div ref={container} role="img" aria-label={label} />;
}
