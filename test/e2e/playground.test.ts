/**
 * The playground end to end: headless Chromium (Debian's `chromium` package, driven by
 * playwright-core; no browser download) against the real local server and stack. A user signs
 * in with a development token, uploads a file, waits until it is indexed, asks a question,
 * reads a cited answer, opens the citation, rates the answer, reloads and finds the thread.
 * The chat view's screenshot is saved to test-artifacts/playground-chat.png.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startLocalApi, type LocalApi } from '../../local/api';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { createHashEmbedder } from '../support/hash-embedder';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

/** Debian's Chromium; override with GROUNDWORK_CHROMIUM. `npm run setup` installs it. */
const CHROMIUM = process.env.GROUNDWORK_CHROMIUM ?? '/usr/bin/chromium';
/** Flags for a closed network and a root user (see the machine notes). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');

const HANDBOOK = [
  '# Travel policy',
  '',
  'Employees book flights through the travel desk at least fourteen days before departure.',
  'Hotel costs are reimbursed up to 180 euros per night in capital cities.',
  'Receipts must be submitted within thirty days of returning.',
].join('\n');

describe('the playground in headless Chromium', () => {
  let stack: LocalStack;
  let api: LocalApi;
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `No Chromium at ${CHROMIUM}: run \`npm run setup\` (installs Debian's chromium)`,
      );
    }
    stack = await startLocalStack({
      embedder: createHashEmbedder(),
      logLevel: 'SILENT',
      // Calibrated for the hash embedder on this fixture (see test/integration/answer-api.test.ts).
      answer: {
        calibrationByModel: { 'test/hash-512': { cosineWeight: 0.5, high: 0.3, medium: 0.12 } },
      },
    });
    api = await startLocalApi(stack);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => {
      throw err;
    });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await stack?.stop();
  });

  it('signs in, uploads, answers with citations, opens a citation, takes feedback and keeps the thread', async () => {
    const home = await page.goto(api.server.url);
    // The playground is served under a policy that allows only its own script, style and
    // requests to loopback, and may not be framed by another page.
    expect(home?.headers()).toMatchObject({
      'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
    });
    await page.getByLabel('User id').fill('alice');
    await page.getByLabel('Tenant id').fill('acme');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'tenant acme' }).waitFor();

    // Upload through the Documents tab, with progress, and wait for the pipeline.
    await page.getByRole('tab', { name: 'Documents' }).click();
    // The second file carries the type Firefox gives a .log, which names no supported format:
    // the server goes by the extension.
    await page.getByLabel('Files (.txt, .md, .html, .pdf, .docx)').setInputFiles([
      { name: 'travel-policy.md', mimeType: 'text/markdown', buffer: Buffer.from(HANDBOOK) },
      { name: 'deploy.log', mimeType: 'text/x-log', buffer: Buffer.from('Deploy finished.\n') },
    ]);
    await page.getByRole('button', { name: 'Upload' }).click();
    for (const name of ['travel-policy.md', 'deploy.log']) {
      const upload = page.locator('.upload', { hasText: name });
      await upload.locator('.upload-status', { hasText: 'Indexed' }).waitFor({ timeout: 60_000 });
      expect(await upload.locator('progress').getAttribute('value')).toBe('1');
    }
    await page.locator('#document-rows tr', { hasText: 'Travel policy' }).waitFor();

    // Search shows scored results with snippets.
    await page.getByRole('tab', { name: 'Search' }).click();
    await page.getByLabel('Search query').fill('hotel reimbursed per night');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const result = page.locator('#search-results .result').first();
    await result.waitFor();
    expect(await result.locator('.score').textContent()).toMatch(/^Score [01]\.\d{3}/);
    expect(await result.locator('.snippet').textContent()).toContain('180 euros');

    // Ask in the chat tab; the answer streams in and carries a confidence badge and citations.
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByLabel('Your question').fill('How much is reimbursed for a hotel per night?');
    await page.getByLabel('Your question').press('Enter');
    const answer = page.locator('.message.assistant').last();
    await answer.locator('.badge').waitFor({ timeout: 60_000 });
    expect(await answer.getAttribute('aria-busy')).toBeNull();
    expect(['high', 'medium']).toContain(
      await answer.locator('.badge').getAttribute('data-confidence'),
    );
    expect(await answer.locator('.answer-text').textContent()).toContain('180 euros');
    const citation = answer.getByRole('button', { name: /^\[1\] Travel policy/ });
    await citation.waitFor();

    // The citation opens the passage with the supporting sentence highlighted.
    await citation.click();
    const dialog = page.getByRole('dialog', { name: 'Cited passage' });
    await dialog.waitFor();
    await dialog.locator('mark').first().waitFor();
    expect(await dialog.locator('mark').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('180 euros per night')]),
    );
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Feedback is recorded on the server.
    await answer.getByRole('button', { name: 'Helpful', exact: true }).click();
    await answer.getByText('Thanks for the feedback').waitFor();
    const messageId = await answer.getAttribute('data-message-id');
    expect(messageId).toMatch(/^[0-9a-f-]{36}$/);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-chat.png'), fullPage: true });

    // After a reload the session and the thread are still there, feedback included.
    await page.reload();
    const thread = page.getByRole('navigation', { name: 'Threads' }).locator('.thread').first();
    await thread.waitFor();
    expect(await thread.textContent()).toContain('How much is reimbursed');
    await thread.click();
    const restored = page.locator(`.message.assistant[data-message-id="${messageId}"]`);
    await restored.waitFor();
    expect(
      await restored
        .getByRole('button', { name: 'Helpful', exact: true })
        .getAttribute('aria-pressed'),
    ).toBe('true');
    expect(await restored.locator('.citation').count()).toBeGreaterThan(0);
    // Nothing the playground does is refused by its own policy.
    expect(cspViolations).toEqual([]);

    // API responses are the caller's own data: never sniffed, never cached.
    const token = api.issuer.issueToken({ sub: 'alice', tenantId: 'acme' });
    for (const init of [{}, { headers: { authorization: `Bearer ${token}` } }]) {
      const response = await fetch(`${api.server.url}/api/documents`, init);
      expect([200, 401]).toContain(response.status);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      if (response.status === 200) expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('signs in through a Cognito-style hosted login with PKCE when deployed as a static site', async () => {
    // A stand-in for Cognito's /oauth2/authorize and /oauth2/token that checks the PKCE pair.
    let challenge = '';
    const cognito = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/oauth2/authorize') {
        challenge = url.searchParams.get('code_challenge') ?? '';
        expect(url.searchParams.get('code_challenge_method')).toBe('S256');
        expect(url.searchParams.get('response_type')).toBe('code');
        res.writeHead(302, { location: `${url.searchParams.get('redirect_uri')}?code=the-code` });
        res.end();
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const verifier = form.get('code_verifier') ?? '';
        const ok =
          form.get('code') === 'the-code' &&
          createHash('sha256').update(verifier).digest('base64url') === challenge;
        res.writeHead(ok ? 200 : 400, {
          'content-type': 'application/json',
          'access-control-allow-origin': '*',
        });
        res.end(
          JSON.stringify(
            ok
              ? { id_token: api.issuer.issueToken({ sub: 'dora', tenantId: 'acme' }) }
              : { error: 'invalid_grant' },
          ),
        );
      });
    });
    await new Promise<void>((r) => cognito.listen(0, '127.0.0.1', r));
    const domain = `http://127.0.0.1:${(cognito.address() as AddressInfo).port}`;
    const context = await browser.newContext();
    const hosted = await context.newPage();
    // The static site's config.json, as the CDK app's PlaygroundConfig output gives it.
    await hosted.route('**/playground/config.json', (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({
          apiUrl: `${api.server.url}/`,
          auth: { mode: 'cognito', domain, clientId: 'client', redirectUri: `${api.server.url}/` },
        }),
      }),
    );
    try {
      await hosted.goto(api.server.url);
      expect(await hosted.getByLabel('User id').isVisible()).toBe(false);
      await hosted.getByRole('button', { name: 'Sign in with Cognito' }).click();
      await hosted.locator('#who', { hasText: 'dora · tenant acme' }).waitFor();
      expect(hosted.url()).toBe(`${api.server.url}/`); // the code is gone from the address bar
      await hosted.getByRole('tab', { name: 'Documents' }).click();
      await hosted.locator('#document-rows tr', { hasText: 'Travel policy' }).waitFor();
    } finally {
      await context.close();
      await new Promise((r) => cognito.close(r));
    }
  });

  it('is usable with the keyboard and on a narrow screen', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(api.server.url);
    await page.getByRole('tab', { name: 'Chat' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Search' }).getAttribute('aria-selected')).toBe(
      'true',
    );
    expect(await page.locator('#panel-search').isVisible()).toBe(true);
    await page.keyboard.press('End');
    expect(await page.getByRole('tab', { name: 'Documents' }).getAttribute('aria-selected')).toBe(
      'true',
    );
    // Nothing sticks out sideways at phone width, on any tab.
    for (const tab of ['Chat', 'Search', 'Documents']) {
      await page.getByRole('tab', { name: tab }).click();
      const wide = await page.evaluate(`
        [...document.querySelectorAll('body *')]
          .filter((e) => e.offsetParent !== null && e.getBoundingClientRect().right > innerWidth + 1)
          .map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + Math.round(e.getBoundingClientRect().right))`);
      expect({ tab, wide }).toEqual({ tab, wide: [] });
    }
    // Every form control has an accessible name.
    const unnamed = await page.evaluate(`
      [...document.querySelectorAll('input, select, textarea, button')]
        .filter((e) => e.offsetParent !== null)
        .filter((e) => (e.labels?.length ?? 0) === 0 && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map((e) => e.outerHTML)`);
    expect(unnamed).toEqual([]);
  });
});
