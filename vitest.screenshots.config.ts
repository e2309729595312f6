// `npm run screenshots`: only the screenshot writer, never part of `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['test/support/write-screenshots.tsx'], pool: 'forks' },
});
