import { useMemo } from 'react';
import { utcDay } from '../dates';
import { TimeChart, type TimeAxis, type TimeSeries } from './time-chart';

// Whole checks only on the count axis.
const COUNT_AXIS = { label: 'checks', size: 50, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000] };
const DAILY_POINTS = { points: { show: true, size: 5 } };
const DAY_S = 86_400;
// The days are UTC days: ticks on whole UTC days, labelled as every other date in the console.
const DAY_AXIS: TimeAxis = { format: utcDay, incrs: [DAY_S, 2 * DAY_S, 3 * DAY_S, 7 * DAY_S, 14 * DAY_S, 28 * DAY_S], utc: true };

/** Checks per day, one line per series. */
export default function ChecksChart({ days, series, label }: { days: string[]; series: TimeSeries[]; label: string }) {
  const xs = useMemo(() => days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1_000), [days]);
  return <TimeChart xs={xs} series={series} xAxis={DAY_AXIS} yAxis={COUNT_AXIS} line={DAILY_POINTS} label={label} />;
}
