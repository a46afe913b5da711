import { ANSWER_ROUTES } from './metrics';

describe('ANSWER_ROUTES', () => {
  it('holds every route that can answer: the answer routes and a search that may answer (rag=true)', () => {
    expect(ANSWER_ROUTES.map((r) => `${r.service} ${r.route}`).sort()).toEqual(
      expect.arrayContaining([
        'rag-answer-stream answer',
        'rag-answer api-search',
        'rag-answer-stream answer-stream',
        'rag-answer-stream chat-messages',
      ]),
    );
    expect(ANSWER_ROUTES.some((r) => r.route === 'search')).toBe(false);
  });
});
