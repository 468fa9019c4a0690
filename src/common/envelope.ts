export interface SuccessEnvelope<T> {
  status: true;
  data: T;
  meta?: Record<string, unknown>;
}

export interface ErrorEnvelope {
  status: false;
  error: { code: string; message: string; details: Record<string, unknown> };
}

export function ok<T>(data: T, meta?: Record<string, unknown>): SuccessEnvelope<T> {
  return meta === undefined ? { status: true, data } : { status: true, data, meta };
}
