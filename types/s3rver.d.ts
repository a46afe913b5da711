// Minimal types for s3rver 3.x (the package ships none): only what local/ uses.
declare module 's3rver' {
  import type { EventEmitter } from 'node:events';
  import type { RequestListener, Server } from 'node:http';
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  class S3rver extends EventEmitter {
    constructor(options: S3rverOptions);
    run(): Promise<Server>;
    /** Creates the configured buckets (what run() does before listening). */
    configureBuckets(): Promise<void>;
    /** The Koa request handler. */
    callback(): RequestListener;
    close(): Promise<void>;
  }
  export default S3rver;
}
