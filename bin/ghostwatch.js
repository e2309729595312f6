#!/usr/bin/env node
// Ink colours through chalk, which ignores NO_COLOR (no-color.org) but honours FORCE_COLOR=0.
// Translate before chalk is first imported; --no-color gets the same treatment.
if ((process.env.NO_COLOR ?? '') !== '' || process.argv.includes('--no-color')) {
  process.env.FORCE_COLOR = '0';
}
// React's development build records every render with performance.measure and keeps the records:
// with 10,000 rows that grows the heap by ~100 MB a second. Run the production build.
process.env.NODE_ENV ??= 'production';
try {
  await import('../dist/src/cli/main.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/src/cli/main.js')) {
    console.error('ghostwatch: not built yet; run `npm run build` in the ghostwatch folder');
    process.exit(2);
  }
  throw error;
}
