/**
 * The master key (DATA_ENCRYPTION_KEY) of every test process on a test database: a fixed value, so
 * that a second instance, a CLI or a worker started on the same database opens what the first sealed.
 */
export const TEST_DATA_ENCRYPTION_KEY = Buffer.alloc(32, 0x5a).toString('base64');
