import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

// The hosted page is served by the service at /verify/{sessionId} (src/verification-flows/hosted-page.controller.ts) from dist/widget.
// `<verification-flow>` (src/element.ts) is a second entry, at a name that does not change
// (element.js): integrators' pages load it from /verify/element.js.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/verify/',
  build: {
    outDir: fileURLToPath(new URL('../dist/widget', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // The camera guide's face library (1.5 MB) is its own chunk, loaded at the selfie step only.
    chunkSizeWarningLimit: 2048,
    rollupOptions: {
      input: { index: fileURLToPath(new URL('index.html', import.meta.url)), element: fileURLToPath(new URL('src/element.ts', import.meta.url)) },
      output: { entryFileNames: (chunk) => (chunk.name === 'element' ? 'element.js' : 'assets/[name]-[hash].js') },
    },
  },
});
