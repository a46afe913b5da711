/*
 * The Groundwork playground: a dependency-free single page that talks to the API. Served by
 * the embedded default at `/` and deployable as static files next to a `playground/config.json`:
 *   { "apiUrl": "https://…/v1", "auth": { "mode": "cognito", "domain": "https://…",
 *     "clientId": "…", "redirectUri": "https://…/" } }
 * Locally the config says `{ "apiUrl": "", "auth": { "mode": "local" } }` and sign-in asks the
 * local issuer for a development token.
 */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = 'groundwork.token';
  let config = { apiUrl: '', auth: { mode: 'local' } };
  let token = localStorage.getItem(TOKEN_KEY);
  let currentThread = null;

  /** Builds an element: el('li', { class: 'x', text: 'y' }, child, …). */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'text') node.textContent = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function claims() {
    try {
      return JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    } catch {
      return null;
    }
  }

  class ApiError extends Error {
    constructor(status, body, retryAfter) {
      super(body?.error?.message ?? `HTTP ${status}`);
      this.status = status;
      this.code = body?.error?.code;
      this.retryAfter = retryAfter;
    }
  }

  async function api(method, path, body) {
    const response = await fetch(config.apiUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => null);
    if (response.status === 401) signOut();
    if (!response.ok) {
      const retryAfter = Number(response.headers.get('retry-after')) || undefined;
      throw new ApiError(response.status, data, retryAfter);
    }
    return data;
  }

  // ---------------------------------------------------------------- sign-in

  function showSignedIn() {
    const c = claims();
    if (!token || !c || c.exp * 1000 < Date.now()) return signOut();
    $('sign-in').hidden = true;
    $('app').hidden = false;
    $('sign-out').hidden = false;
    $('who').textContent = `${c['cognito:username'] ?? c.sub} · tenant ${c['custom:tenant_id']}`;
    void loadThreads();
    void loadDocuments();
  }

  function signOut() {
    token = null;
    localStorage.removeItem(TOKEN_KEY);
    $('app').hidden = true;
    $('sign-out').hidden = true;
    $('sign-in').hidden = false;
    $('who').textContent = '';
    const local = config.auth.mode === 'local';
    $('local-sign-in').hidden = !local;
    $('cognito-sign-in').hidden = local;
  }

  async function localSignIn(event) {
    event.preventDefault();
    $('sign-in-error').textContent = '';
    try {
      const response = await fetch(`${config.apiUrl}/local/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          user_id: $('sign-in-user').value.trim(),
          tenant_id: $('sign-in-tenant').value.trim(),
          admin: $('sign-in-admin').checked,
        }),
      });
      const data = await response.json();
      if (!response.ok) throw new ApiError(response.status, data);
      token = data.token;
      localStorage.setItem(TOKEN_KEY, token);
      showSignedIn();
    } catch (err) {
      $('sign-in-error').textContent = err.message;
    }
  }

  const base64url = (bytes) =>
    btoa(String.fromCharCode(...new Uint8Array(bytes)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');

  /** Cognito's hosted sign-in, authorization-code flow with PKCE (a public client, no secret). */
  async function cognitoSignIn() {
    const { domain, clientId, redirectUri } = config.auth;
    const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const challenge = base64url(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)),
    );
    sessionStorage.setItem('groundwork.pkce', verifier);
    const url = new URL('/oauth2/authorize', domain);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      code_challenge: challenge,
    }).toString();
    location.assign(url.toString());
  }

  /** Back from the hosted sign-in with `?code=`: exchanges it for tokens (the ID token carries the tenant). */
  async function tokenFromRedirect() {
    const code = new URLSearchParams(location.search).get('code');
    const verifier = sessionStorage.getItem('groundwork.pkce');
    if (!code || !verifier || config.auth.mode !== 'cognito') return;
    sessionStorage.removeItem('groundwork.pkce');
    history.replaceState(null, '', location.pathname);
    const { domain, clientId, redirectUri } = config.auth;
    const response = await fetch(new URL('/oauth2/token', domain), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok || !data.id_token) {
      $('sign-in-error').textContent = `Sign-in failed: ${data.error ?? response.status}`;
      return;
    }
    token = data.id_token;
    localStorage.setItem(TOKEN_KEY, token);
  }

  // ---------------------------------------------------------------- tabs

  function selectTab(tab) {
    for (const t of document.querySelectorAll('[role="tab"]')) {
      const selected = t === tab;
      t.setAttribute('aria-selected', String(selected));
      t.tabIndex = selected ? 0 : -1;
      $(t.getAttribute('aria-controls')).hidden = !selected;
    }
    tab.focus();
  }

  function tabKeys(event) {
    const tabs = [...document.querySelectorAll('[role="tab"]')];
    const i = tabs.indexOf(event.target);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    selectTab(tabs[(next + tabs.length) % tabs.length]);
  }

  // ---------------------------------------------------------------- chat

  async function loadThreads() {
    const list = $('thread-list');
    try {
      const { threads } = await api('GET', '/api/threads');
      list.replaceChildren(
        ...threads.map((t) =>
          el(
            'li',
            {},
            el('button', {
              type: 'button',
              class: 'thread',
              'aria-current': t.thread_id === currentThread ? 'true' : undefined,
              'data-thread-id': t.thread_id,
              text: t.title,
              onclick: () => openThread(t.thread_id),
            }),
          ),
        ),
      );
    } catch (err) {
      list.replaceChildren(el('li', { class: 'error', text: err.message }));
    }
  }

  async function openThread(id) {
    currentThread = id;
    const thread = await api('GET', `/api/threads/${encodeURIComponent(id)}`);
    const messages = $('messages');
    messages.replaceChildren();
    for (const m of thread.messages) {
      if (m.role === 'user') messages.append(userMessage(m.content));
      else messages.append(renderAnswer(assistantShell(), m));
    }
    void loadThreads();
    $('question').focus();
  }

  function newThread() {
    currentThread = null;
    $('messages').replaceChildren();
    void loadThreads();
    $('question').focus();
  }

  const userMessage = (text) => el('li', { class: 'message user' }, el('p', { text }));

  function assistantShell() {
    const item = el('li', { class: 'message assistant', 'aria-busy': 'true' });
    item.append(el('p', { class: 'answer-text' }));
    return item;
  }

  const CONFIDENCE_LABEL = {
    high: 'High confidence',
    medium: 'Medium confidence',
    low: 'Low confidence',
  };

  /** Fills an assistant message from a final answer (the `done` event or a stored message). */
  function renderAnswer(item, answer) {
    item.removeAttribute('aria-busy');
    const text = answer.answer?.text ?? answer.content ?? '';
    const confidence = answer.answer?.confidence ?? answer.confidence ?? null;
    const messageId = answer.message_id;
    item.dataset.messageId = messageId ?? '';
    item.querySelector('.answer-text').textContent = text;
    item.querySelector('.meta')?.remove();
    const meta = el('div', { class: 'meta' });
    meta.append(
      el('span', {
        class: `badge confidence-${confidence ?? 'none'}`,
        'data-confidence': confidence ?? 'none',
        text: confidence ? CONFIDENCE_LABEL[confidence] : 'Conversational',
      }),
    );
    const citations = answer.citations ?? [];
    if (citations.length > 0) {
      meta.append(
        el(
          'ol',
          { class: 'citations', 'aria-label': 'Citations' },
          ...citations.map((c, i) =>
            el(
              'li',
              {},
              el('button', {
                type: 'button',
                class: 'citation',
                // The numbers that cite the source in the text; the closest sources of a
                // refusal, which the text does not cite, by their place.
                text: `[${c.markers?.length ? c.markers.join(', ') : i + 1}] ${c.source_title ?? c.source_uri}`,
                onclick: () => openPassage(c),
              }),
            ),
          ),
        ),
      );
    }
    if (messageId) meta.append(feedbackButtons(messageId, answer.feedback?.rating ?? null));
    item.append(meta);
    return item;
  }

  function feedbackButtons(messageId, current) {
    const group = el('div', {
      class: 'feedback',
      role: 'group',
      'aria-label': 'Was this helpful?',
    });
    const status = el('span', { class: 'hint', 'aria-live': 'polite' });
    for (const [rating, label] of [
      ['positive', 'Helpful'],
      ['negative', 'Not helpful'],
    ]) {
      group.append(
        el('button', {
          type: 'button',
          class: 'rate',
          'data-rating': rating,
          'aria-pressed': String(current === rating),
          text: label,
          onclick: async (event) => {
            try {
              await api('POST', `/api/messages/${messageId}/feedback`, { rating });
              for (const b of group.querySelectorAll('.rate'))
                b.setAttribute('aria-pressed', String(b === event.currentTarget));
              status.textContent = 'Thanks for the feedback';
            } catch (err) {
              status.textContent = err.message;
            }
          },
        }),
      );
    }
    group.append(status);
    return group;
  }

  /** Reads Server-Sent Events from a fetch response: calls onEvent(name, data) for each. */
  async function readEvents(response, onEvent) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (data.length > 0) onEvent(name, JSON.parse(data.join('\n')));
      }
    }
  }

  async function ask(event) {
    event.preventDefault();
    const question = $('question').value.trim();
    if (!question) return;
    const messages = $('messages');
    messages.append(userMessage(question));
    const item = assistantShell();
    messages.append(item);
    $('question').value = '';
    $('ask-button').disabled = true;
    const textNode = item.querySelector('.answer-text');
    try {
      const response = await fetch(`${config.apiUrl}/api/rag/answer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query_text: question,
          stream: true,
          ...(currentThread ? { thread_id: currentThread } : {}),
        }),
      });
      if (!response.ok)
        throw new ApiError(response.status, await response.json().catch(() => null));
      await readEvents(response, (name, data) => {
        if (name === 'delta') textNode.textContent += data.text;
        else if (name === 'done') {
          currentThread = data.thread_id;
          renderAnswer(item, data);
        } else if (name === 'error') throw new ApiError(500, data);
      });
      void loadThreads();
    } catch (err) {
      item.removeAttribute('aria-busy');
      textNode.textContent = `Error: ${err.message}`;
      item.classList.add('error');
    } finally {
      $('ask-button').disabled = false;
      $('question').focus();
    }
  }

  /** Shows the chunks a citation points at, with its supporting sentences highlighted. */
  async function openPassage(citation) {
    const dialog = $('passage');
    const box = $('passage-text');
    $('passage-source').textContent = citation.source_title ?? citation.source_uri;
    box.replaceChildren(el('p', { class: 'hint', text: 'Loading…' }));
    dialog.showModal();
    const sentences = citation.sentences ?? [];
    if (sentences.length === 0) {
      box.replaceChildren(el('p', { text: citation.snippet }));
      return;
    }
    const start = Math.min(...sentences.map((s) => s.start));
    const end = Math.max(...sentences.map((s) => s.end));
    try {
      const { chunks } = await api(
        'GET',
        `/api/documents/${encodeURIComponent(citation.source_id)}/passage?start=${start}&end=${end}`,
      );
      // Chunks overlap; walk the source offsets once, from the first chunk's start.
      const parts = [];
      let at = chunks[0]?.start ?? start;
      for (const chunk of chunks) {
        if (chunk.end <= at) continue;
        const text = chunk.text.slice(at - chunk.start);
        parts.push({ start: at, text });
        at = chunk.end;
      }
      box.replaceChildren(
        ...parts.map((part) => {
          const p = el('p');
          let cursor = 0;
          for (const s of sentences) {
            const a = Math.max(s.start - part.start, cursor);
            const b = Math.min(s.end - part.start, part.text.length);
            if (b <= a) continue;
            p.append(part.text.slice(cursor, a), el('mark', { text: part.text.slice(a, b) }));
            cursor = b;
          }
          p.append(part.text.slice(cursor));
          return p;
        }),
      );
      box.querySelector('mark')?.scrollIntoView({ block: 'center' });
    } catch (err) {
      box.replaceChildren(el('p', { class: 'error', text: err.message }));
    }
  }

  // ---------------------------------------------------------------- search

  async function search(event) {
    event.preventDefault();
    const status = $('search-status');
    const results = $('search-results');
    status.textContent = 'Searching…';
    try {
      const data = await api('POST', '/api/rag/search', {
        query_text: $('search-query').value.trim(),
        mode: $('search-mode').value,
      });
      status.textContent = `${data.results.length} results`;
      results.replaceChildren(
        ...data.results.map((r) =>
          el(
            'li',
            { class: 'result' },
            el('h3', { text: r.source_title ?? r.source_uri }),
            el('p', { class: 'score', text: `Score ${r.score.toFixed(3)} · rank ${r.rank}` }),
            el('p', { class: 'snippet', text: r.snippet }),
          ),
        ),
      );
    } catch (err) {
      status.textContent = err.message;
    }
  }

  // ---------------------------------------------------------------- documents

  const STATUS_TEXT = {
    queued: 'Queued',
    processing: 'Processing',
    indexed: 'Indexed',
    failed: 'Failed',
    deleted: 'Deleted',
  };

  function statusText(doc) {
    if (doc.status === 'processing' && doc.progress)
      return `Processing (${doc.progress.chunks_embedded}/${doc.progress.chunks_total} chunks)`;
    if (doc.status === 'failed') return `Failed: ${doc.failure_reason ?? 'unknown reason'}`;
    return STATUS_TEXT[doc.status] ?? doc.status;
  }

  async function loadDocuments() {
    const rows = $('document-rows');
    try {
      const { documents } = await api('GET', '/api/documents?limit=100');
      rows.replaceChildren(
        ...documents
          .filter((d) => d.status !== 'deleted')
          .map((d) =>
            el(
              'tr',
              { 'data-document-id': d.id },
              el('td', { text: d.title ?? d.source_uri }),
              el('td', { class: `status status-${d.status}`, text: statusText(d) }),
              el('td', { text: String(d.chunk_count) }),
              el(
                'td',
                {},
                d.status === 'failed'
                  ? el('button', {
                      type: 'button',
                      text: 'Retry',
                      'aria-label': `Retry ${d.title}`,
                      onclick: () => act('POST', `/api/documents/${d.id}/retry`),
                    })
                  : null,
                el('button', {
                  type: 'button',
                  text: 'Delete',
                  'aria-label': `Delete ${d.title}`,
                  onclick: () => act('DELETE', `/api/documents/${d.id}`),
                }),
              ),
            ),
          ),
      );
    } catch (err) {
      rows.replaceChildren(
        el('tr', {}, el('td', { colspan: 4, class: 'error', text: err.message })),
      );
    }
  }

  async function act(method, path) {
    try {
      await api(method, path);
    } catch (err) {
      alert(err.message);
    }
    setTimeout(loadDocuments, 500);
  }

  /** PUTs the file to its presigned URL with upload progress (fetch cannot report it). */
  function put(upload, file, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(upload.method, upload.url);
      for (const [name, value] of Object.entries(upload.headers)) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onload = () =>
        xhr.status < 300 ? resolve() : reject(new Error(`Upload failed (HTTP ${xhr.status})`));
      xhr.onerror = () => reject(new Error('Upload failed (network error)'));
      xhr.send(file);
    });
  }

  async function uploadOne(file, visibility) {
    const progress = el('progress', { max: 1, value: 0, 'aria-label': `Upload of ${file.name}` });
    const state = el('span', { class: 'upload-status', text: 'Uploading' });
    const row = el('li', { class: 'upload' }, el('span', { text: file.name }), progress, state);
    $('uploads').append(row);
    try {
      // The server reads the format from the name's extension when the type names none, with
      // its own table: a browser's guess (Windows gives .csv as an Excel type, Firefox .log as
      // text/x-log) is not sent to be refused.
      const contentType = 'application/octet-stream';
      const created = await api('POST', '/api/documents', {
        filename: file.name,
        content_type: contentType,
        size_bytes: file.size,
        visibility,
      });
      row.dataset.documentId = created.document.id;
      await put(created.upload, file, (p) => (progress.value = p));
      progress.value = 1;
      // Watch the document until the pipeline is done with it (gently: polls count toward the
      // rate limit, and a 429 says how long to wait).
      for (let i = 0; i < 400; i++) {
        let wait = 1500;
        try {
          const doc = await api('GET', `/api/documents/${created.document.id}`);
          state.textContent = statusText(doc);
          row.dataset.status = doc.status;
          if (doc.status === 'indexed' || doc.status === 'failed') break;
        } catch (err) {
          if (err.status !== 429) throw err;
          wait = (err.retryAfter ?? 5) * 1000;
        }
        await new Promise((r) => setTimeout(r, wait));
      }
    } catch (err) {
      state.textContent = `Error: ${err.message}`;
      row.dataset.status = 'error';
    }
    void loadDocuments();
  }

  async function upload(event) {
    event.preventDefault();
    const files = [...$('upload-files').files];
    const visibility = $('upload-visibility').value;
    $('upload-files').value = '';
    await Promise.all(files.map((f) => uploadOne(f, visibility)));
  }

  // ---------------------------------------------------------------- start

  async function start() {
    try {
      const response = await fetch('playground/config.json');
      if (response.ok) config = await response.json();
      config.apiUrl = (config.apiUrl ?? '').replace(/\/+$/, '');
    } catch {
      // No config: the page is served by the API itself.
    }
    await tokenFromRedirect();
    $('local-sign-in').addEventListener('submit', localSignIn);
    $('cognito-button').addEventListener('click', () => void cognitoSignIn());
    $('sign-out').addEventListener('click', signOut);
    for (const tab of document.querySelectorAll('[role="tab"]')) {
      tab.addEventListener('click', () => selectTab(tab));
      tab.addEventListener('keydown', tabKeys);
    }
    $('new-thread').addEventListener('click', newThread);
    $('ask-form').addEventListener('submit', ask);
    $('question').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) {
        e.preventDefault();
        $('ask-form').requestSubmit();
      }
    });
    $('search-form').addEventListener('submit', search);
    $('upload-form').addEventListener('submit', upload);
    $('refresh-documents').addEventListener('click', loadDocuments);
    if (token) showSignedIn();
    else signOut();
  }

  void start();
})();
