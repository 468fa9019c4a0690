import { useMemo } from 'react';
import { timeOfDay } from '../dates';
import { TimeChart, type TimeAxis, type TimeSeries } from './time-chart';

const LAG_AXIS = { label: 'events behind', size: 60, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 10_000, 100_000, 1_000_000] };
// A projection's missing samples are drawn across rather than as breaks.
const ACROSS_GAPS = { spanGaps: true };
// Whole minutes: the labels show no seconds.
const TIME_AXIS: TimeAxis = { format: timeOfDay, incrs: [60, 120, 300, 600, 900, 1_800, 3_600] };

/** Projection lag in events over time, one line per projection. */
export default function LagChart({ times, series }: { times: string[]; series: TimeSeries[] }) {
  const xs = useMemo(() => times.map((at) => Date.parse(at) / 1_000), [times]);
  const worst = Math.max(0, ...series.flatMap((item) => item.values.map((value) => value ?? 0)));
  return <TimeChart xs={xs} series={series} xAxis={TIME_AXIS} yAxis={LAG_AXIS} line={ACROSS_GAPS} label={`Projection lag over the last hour, at most ${worst} events behind`} />;
}
