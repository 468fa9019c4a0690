export default async function globalTeardown() {
  await globalThis.__TEST_POSTGRES__?.stop();
}
