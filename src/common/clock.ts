/** The time, as an injectable port so deciders and tests never call `new Date()` themselves. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
