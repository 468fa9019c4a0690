import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data subjects' rights: the `data-subjects` projection's tables. `data_holds`: holds on a check or
 * on a data subject (by blind-index token), which stop erasure and retention until lifted or past
 * `until`. `data_requests`: the record of exports and of erasures asked for through the API, with
 * a masked identifier and references only. Both are rebuilt from the log.
 */
export class DataSubjectRights1796000001200 implements MigrationInterface {
  name = 'DataSubjectRights1796000001200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table data_holds (
        id text primary key,
        organization_id text not null,
        environment text not null,
        reference text,
        subject_kind text,
        masked_identifier text,
        subject_token text,
        reason text not null,
        until timestamptz,
        placed_at timestamptz not null,
        placed_by_type text not null,
        placed_by_id text not null,
        lifted_at timestamptz,
        lifted_by_type text,
        lifted_by_id text
      )`);
    await q.query('create index data_holds_reference on data_holds (reference) where lifted_at is null and reference is not null');
    await q.query('create index data_holds_subject on data_holds (organization_id, environment, subject_token) where lifted_at is null and subject_token is not null');
    await q.query('create index data_holds_owner on data_holds (organization_id, environment, placed_at)');
    await q.query(`
      create table data_requests (
        id text primary key,
        organization_id text not null,
        environment text not null,
        kind text not null check (kind in ('export', 'erasure')),
        subject_kind text,
        masked_identifier text,
        subject_token text,
        "references" text[] not null,
        pending text[] not null,
        format text,
        actor_type text not null,
        actor_id text not null,
        at timestamptz not null
      )`);
    await q.query('create index data_requests_owner on data_requests (organization_id, environment, at desc, id)');
    await q.query('create index data_requests_at on data_requests (at desc, id)');
    await q.query('create index data_requests_subject on data_requests (organization_id, environment, subject_token) where subject_token is not null');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists data_requests');
    await q.query('drop table if exists data_holds');
  }
}
