/** The ingestion pipeline's view of the bucket (S3 in AWS, the s3rver emulator locally). */

export interface ObjectInfo {
  readonly size: number;
  readonly lastModified: Date;
  readonly contentType?: string;
  /** The version's entity tag: it changes with every write of the object, even within a second. */
  readonly etag?: string;
}

/** One object of a listing. */
export interface ListedObject {
  readonly key: string;
  readonly lastModified: Date;
}

export interface ObjectStore {
  /** Size and dates without the body, or null when the object does not exist. */
  head(bucket: string, key: string): Promise<ObjectInfo | null>;
  /** The whole object, or null when it does not exist. */
  get(bucket: string, key: string): Promise<{ info: ObjectInfo; bytes: Uint8Array } | null>;
  /** Every object of the bucket (recovery compares them with the index). */
  list?(bucket: string): Promise<ListedObject[]>;
}
