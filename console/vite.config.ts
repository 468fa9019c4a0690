import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

// The console is served by the service at /console (src/console/console-static.ts) from dist/console.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // No dev-only React plugin: Vite's own transform compiles TSX with the automatic JSX runtime
  // (tsconfig.json), and production builds need nothing more.
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // Mantine and TanStack Query mark their modules "use client" for React Server Components; a
      // client-only bundle has nothing to keep of it.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { proxy: { '/console/api': 'http://127.0.0.1:3000' } },
});
