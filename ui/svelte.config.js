import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** @type {import('@sveltejs/vite-plugin-svelte').SvelteConfig} */
export default {
  // TypeScript in <script lang="ts"> blocks.
  preprocess: vitePreprocess(),
  compilerOptions: {
    // Runes everywhere: no legacy reactive statements or stores by accident.
    runes: true,
  },
};
