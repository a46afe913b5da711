#!/usr/bin/env node
// The `groundwork` command: registers the TypeScript loader, then runs local/cli.ts.
process.env.NODE_NO_WARNINGS ??= '1';
// The SDK versions pinned in package-lock.json support Node 20; its notice about future releases is in the README.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs');
require('./cli.ts')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err && err.message ? `groundwork: ${err.message}` : err);
    process.exitCode = 1;
  });
