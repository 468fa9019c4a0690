import type { AppConfig } from './config.js';

/** Injection token of the validated `AppConfig`. */
export const CONFIG = Symbol('AppConfig');

/** What the process resolved before Nest starts: the config and the database actually used. */
export interface Runtime {
  readonly config: AppConfig;
  readonly databaseUrl: string;
  /** True when running on the embedded PostgreSQL default (first-run conveniences apply). */
  readonly embedded: boolean;
  /** The admin API's token: ADMIN_TOKEN, or the embedded default's generated one; undefined disables the admin API. */
  readonly adminToken: string | undefined;
}
export const RUNTIME = Symbol('Runtime');
