import { useMemo } from 'react';
import { TimeChart, type TimeSeries } from './time-chart';

// Whole checks only on the count axis.
const COUNT_AXIS = { label: 'checks', size: 50, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000] };
const DAILY_POINTS = { points: { show: true, size: 5 } };

/** Checks per day, one line per series. */
export default function ChecksChart({ days, series, label }: { days: string[]; series: TimeSeries[]; label: string }) {
  const xs = useMemo(() => days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1_000), [days]);
  return <TimeChart xs={xs} series={series} yAxis={COUNT_AXIS} line={DAILY_POINTS} label={label} />;
}
