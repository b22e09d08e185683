import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  plugins: [svelte()],
  // The window loads the built files from Tauri's own protocol: absolute paths from its root
  // ('/assets/...') resolve there, and nothing is fetched from anywhere else.
  base: '/',
  // Tauri's dev server expects a fixed port and must see Rust's errors, not a cleared screen.
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The webviews Tauri v2 runs on (WebKitGTK, WebView2, WKWebView) all handle ES2022.
    target: 'es2022',
    // A single small CSS file and script; no inline data: URLs for scripts (the CSP forbids them).
    assetsInlineLimit: 0,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
