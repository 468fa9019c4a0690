import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The document sides a verification session captured (`[{document, side}]`, each once): names only, the images are sealed files. */
export class SessionDocuments1796000002720 implements MigrationInterface {
  name = 'SessionDocuments1796000002720';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table verification_sessions add column documents jsonb not null default '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table verification_sessions drop column documents');
  }
}
