import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person's decision on a session in review (`VerificationSessionReviewed`): the decision, its
 * reason from the fixed list, who decided (the organization or an operator) and when. Nothing
 * personal: the reviewer is named by kind only; the event's actor says which account.
 */
export class VerificationSessionReviews1796000002700 implements MigrationInterface {
  name = 'VerificationSessionReviews1796000002700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `alter table verification_sessions add column review_decision text, add column review_reason text, add column reviewed_by text, add column reviewed_at timestamptz`,
    );
    await q.query(`create index verification_sessions_in_review on verification_sessions (decided_at, id) where status = 'needs_review'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists verification_sessions_in_review');
    await q.query('alter table verification_sessions drop column review_decision, drop column review_reason, drop column reviewed_by, drop column reviewed_at');
  }
}
