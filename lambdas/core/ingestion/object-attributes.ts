/**
 * Who a document belongs to and what it is, from its object key and its optional metadata
 * sidecar (`<key>.metadata.json`, the format Bedrock Knowledge Bases uses:
 * `{"metadataAttributes": {"title": "...", "year": 2019, ...}}`, values either plain or typed as
 * `{"value": {"type": "STRING", "stringValue": "..."}}`).
 *
 * The tenant always comes from the key, never from the sidecar, so an uploader cannot place a
 * document in another tenant's scope.
 */
import * as z from '../zod';
import type { DocumentAttributes, Visibility } from './document-store';
import { DocumentRejectedError } from './types';
import { findUnstorable, toStorableText } from '../text/storable';
import { DEFAULT_PUBLISHING_TENANTS } from '../visibility';

export const SIDECAR_SUFFIX = '.metadata.json';

/** Tenant ids: letters, digits, `-` and `_`, not starting with `_` (reserved for internal use). */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Recorded as the tenant of a document whose key names none, so that it can be listed and fixed. */
export const UNASSIGNED_TENANT = '_unassigned';

export interface KeyLayout {
  /**
   * Extracts the tenant (and optionally the owner) from a key. Default:
   * `tenants/<tenantId>/...`, and `tenants/<tenantId>/users/<userId>/...` for private documents.
   */
  readonly pattern: RegExp;
  /** Tenants allowed to publish `global` documents: the publishing tenants (core/visibility.ts). */
  readonly globalPublishers: readonly string[];
}

export const DEFAULT_KEY_LAYOUT: KeyLayout = {
  pattern: /^tenants\/(?<tenant>[^/]+)\/(?:users\/(?<user>[^/]+)\/)?.+$/,
  globalPublishers: DEFAULT_PUBLISHING_TENANTS,
};

/** True for the sidecar of another object. */
export function isSidecarKey(key: string): boolean {
  return key.endsWith(SIDECAR_SUFFIX);
}

/** Decodes an S3 event key: URL-encoded, with spaces written as `+`. */
export function decodeS3EventKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

export function parseKey(
  key: string,
  layout: KeyLayout = DEFAULT_KEY_LAYOUT,
): { tenantId: string; userId: string | null } {
  if (key.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new DocumentRejectedError(
      'no_tenant',
      `Cannot tell which tenant "${key}" belongs to: a key with "." or ".." segments names a ` +
        'different folder on some stores. Upload it under tenants/<tenantId>/ without them.',
    );
  }
  const match = layout.pattern.exec(key);
  const tenantId = match?.groups?.tenant;
  if (!tenantId || !TENANT_ID_PATTERN.test(tenantId)) {
    throw new DocumentRejectedError(
      'no_tenant',
      `Cannot tell which tenant "${key}" belongs to: upload it under tenants/<tenantId>/ ` +
        '(tenant ids use letters, digits, "-" and "_").',
    );
  }
  return { tenantId, userId: match?.groups?.user ?? null };
}

const typedValue = z.object({
  value: z.object({
    type: z.string(),
    stringValue: z.optional(z.string()),
    numberValue: z.optional(z.number()),
    booleanValue: z.optional(z.boolean()),
    stringListValue: z.optional(z.array(z.string())),
  }),
  includeForEmbedding: z.optional(z.boolean()),
});

const attributeValue = z.union([
  typedValue,
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string(), z.number()])),
]);

/** The sidecar file, as Bedrock Knowledge Bases defines it. */
const sidecarSchema = z.object({
  metadataAttributes: z._default(
    z.record(z.string().check(z.minLength(1), z.maxLength(100)), attributeValue),
    {},
  ),
});

function plain(value: z.infer<typeof attributeValue>): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value.value;
    return v.stringValue ?? v.numberValue ?? v.booleanValue ?? v.stringListValue ?? null;
  }
  return value;
}

const RESERVED: Readonly<Record<string, string>> = {
  title: 'title',
  source_type: 'sourceType',
  sourcetype: 'sourceType',
  type: 'sourceType',
  language: 'language',
  lang: 'language',
  owner: 'owner',
  owner_user_id: 'owner',
  visibility: 'visibility',
};

/**
 * Attribute names that decide a document's scope or stand for a field of its own. In a sidecar
 * written straight to the bucket (by whoever may write there) they set those fields; through
 * the API the server sets them from the verified caller and the key, and refuses metadata that
 * names them (`reservedAttributeName`).
 */
const TENANT_ATTRIBUTES = ['tenant', 'tenant_id', 'tenantid', 'org_id'];
const SCOPE_ATTRIBUTES = [...TENANT_ATTRIBUTES, 'uploaded_by', 'owner_id'];

/** The reserved name `name` matches (case-insensitive), or null for a custom attribute. */
export function reservedAttributeName(name: string): string | null {
  const lower = name.toLowerCase();
  return Object.hasOwn(RESERVED, lower) || SCOPE_ATTRIBUTES.includes(lower) ? lower : null;
}

/** The largest metadata sidecar read: the API's own limit on a request body (1 MiB). */
export const MAX_SIDECAR_BYTES = 1024 * 1024;

/** Parses sidecar bytes; a malformed sidecar rejects the document with a reason. */
export function parseSidecar(bytes: Uint8Array | null): Record<string, unknown> {
  if (!bytes) return {};
  if (bytes.length > MAX_SIDECAR_BYTES) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `The metadata sidecar is ${(bytes.length / 1048576).toFixed(1)} MB; the limit is 1 MB (the attributes are copied into every search hit of the document).`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new DocumentRejectedError('invalid_metadata', 'The metadata sidecar is not valid JSON.');
  }
  const parsed = sidecarSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DocumentRejectedError(
      'invalid_metadata',
      `The metadata sidecar is invalid at "${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'unknown'}. ` +
        'Expected {"metadataAttributes": {"name": value, ...}}.',
    );
  }
  // PostgreSQL cannot store NUL or a lone surrogate: refused here, the document is recorded as
  // failed with this reason (and without the sidecar's attributes).
  const unstorable = findUnstorable(parsed.data.metadataAttributes);
  if (unstorable) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `The metadata sidecar is invalid at ${JSON.stringify(unstorable.path)}: ` +
        (unstorable.reason === 'too_deep'
          ? 'it is nested too deeply.'
          : 'it holds a character that cannot be stored (NUL or an unpaired UTF-16 surrogate).'),
    );
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parsed.data.metadataAttributes))
    out[name] = plain(value);
  return out;
}

/**
 * Combines key, sidecar and what the parser found into the document's attributes.
 * Precedence for the title: sidecar, then the document's own title, then the file name.
 */
export function resolveAttributes(input: {
  bucket: string;
  key: string;
  sidecar: Record<string, unknown>;
  parsedTitle?: string | null;
  lastModified: Date | null;
  layout?: KeyLayout;
}): DocumentAttributes {
  const layout = input.layout ?? DEFAULT_KEY_LAYOUT;
  const { tenantId, userId } = parseKey(input.key, layout);
  const reserved: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input.sidecar)) {
    const field = RESERVED[name.toLowerCase()];
    if (field) reserved[field] = value;
    else metadata[name] = value;
    // A sidecar may carry its tenant (Bedrock Knowledge Bases' sidecars often do), but the key
    // decides it: one naming another tenant would show in every hit as if it were the scope.
    if (TENANT_ATTRIBUTES.includes(name.toLowerCase()) && String(value) !== tenantId) {
      throw new DocumentRejectedError(
        'invalid_metadata',
        `The metadata sidecar's "${name}" (${JSON.stringify(value)}) is not the tenant its key names (${tenantId}): remove it or upload the file under tenants/${String(value)}/.`,
      );
    }
  }
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
  const sourceType = (str(reserved.sourceType) ?? 'doc').toLowerCase();
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(sourceType)) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `source_type "${sourceType}" is invalid: use a lower-case word such as doc, faq, email, transcript or web.`,
    );
  }
  const ownerUserId = userId ?? str(reserved.owner);
  const visibility = (str(reserved.visibility) ?? (userId ? 'user' : 'tenant')) as Visibility;
  if (!['user', 'tenant', 'global'].includes(visibility)) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `visibility "${String(visibility)}" is invalid: use user, tenant or global.`,
    );
  }
  if (visibility === 'user' && !ownerUserId) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      'visibility "user" needs an owner: set "owner" in the sidecar or upload under tenants/<tenantId>/users/<userId>/.',
    );
  }
  if (visibility === 'global' && !layout.globalPublishers.includes(tenantId)) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `Tenant "${tenantId}" may not publish global documents; allowed publishers: ${layout.globalPublishers.join(', ') || 'none'}.`,
    );
  }
  const language = (str(reserved.language) ?? 'en').toLowerCase();
  if (!/^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?$/.test(language)) {
    throw new DocumentRejectedError(
      'invalid_metadata',
      `language "${language}" is not an ISO 639 code such as en or de.`,
    );
  }
  const fileName = input.key.split('/').pop() ?? input.key;
  return {
    tenantId,
    sourceUri: `s3://${input.bucket}/${input.key}`,
    title: str(reserved.title) ?? str(toStorableText(input.parsedTitle ?? '')) ?? fileName,
    sourceType,
    language,
    ownerUserId,
    visibility,
    metadata,
    sourceUpdatedAt: input.lastModified,
  };
}
