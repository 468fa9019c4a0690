import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface TimeSeries {
  label: string;
  color: string;
  values: (number | null)[];
}

/** The time axis: its labels through the console's date formats (`../dates`), never uPlot's own (12/5). */
export interface TimeAxis {
  format: (seconds: number) => string;
  /** Steps between ticks in seconds (whole days for a daily chart); uPlot's own when absent. */
  incrs?: number[];
  /** Ticks are placed in UTC (days the server counts in UTC), else in the browser's zone. */
  utc?: boolean;
}

/**
 * A line per series over time (`xs` in seconds), as wide as its container and following its
 * resizes; uPlot is loaded only with the pages that chart, so the others do not download it. The y axis starts
 * at zero and steps by `yAxis.incrs`; `line` adds options to every series. The labels the time axis
 * drew are kept in the container's `data-x-labels` (canvas text cannot be read otherwise).
 */
export function TimeChart({
  xs,
  series,
  xAxis,
  yAxis,
  line,
  label,
}: {
  xs: number[];
  series: TimeSeries[];
  xAxis: TimeAxis;
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
        ...(xAxis.utc ? { tzDate: (seconds: number) => uPlot.tzDate(new Date(seconds * 1_000), 'Etc/UTC') } : {}),
        axes: [
          {
            space: 90,
            ...(xAxis.incrs ? { incrs: xAxis.incrs } : {}),
            values: (_u: uPlot, splits: number[]) => {
              const labels = splits.map((seconds) => xAxis.format(seconds));
              element.dataset.xLabels = labels.join('|');
              return labels;
            },
          },
          yAxis,
        ],
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
  }, [xs, series, xAxis, yAxis, line]);
  return <div ref={container} role="img" aria-label={label} />;
}
