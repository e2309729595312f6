// Imported first by the bench runner: React picks its build when it is first loaded, and the CLI
// runs the production build (bin/ghostwatch.js sets NODE_ENV; the bundle defines it). The
// development build checks and records every render, so a figure measured with it is not the one
// users get.
process.env.NODE_ENV ??= 'production';
