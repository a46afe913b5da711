-- 0017: the five capabilities of the LexyBrain chat (POST /api/lexybrain/rag) as built-in
-- profiles of their own family, with the retrieval policies of their specification: the source
-- types each retrieves, candidates ranked before the final count is kept, whether the caller's
-- own documents come first, and (market_brief) a recency window of 90 days. Detection (a request
-- naming no capability) tries them by priority; `general_chat` is the fallback. Tenants version
-- them like any other profile.
INSERT INTO prompt_configs (name, profile, version, instructions, constraints, active) VALUES
('Market brief', 'market_brief', 1,
 'Analyze the provided market data and keywords to give a market overview. '
 || 'Focus on overall market health (demand trends, competition levels), top opportunities (high demand, low competition keywords), '
 || 'key risks (saturation, declining trends) and actionable recommendations for entering or growing in this niche. '
 || 'Format: a brief overview paragraph, then bullet points for opportunities, risks and actions.',
 '{"family": "lexybrain", "priority": 40, "allowed_source_types": ["keyword", "trend"], "candidates": 40, "top_k": 12, "max_age_days": 90, "keywords": ["market", "niche", "brief"]}'::jsonb, true),
('Competitor intelligence', 'competitor_intel', 1,
 'Analyze competitor listings, shops and performance data. '
 || 'Focus on top-performing listings in the niche, pricing strategies and trends, successful shop patterns and differentiation opportunities. '
 || 'Format: summary findings followed by specific competitor examples with metrics.',
 '{"family": "lexybrain", "priority": 10, "allowed_source_types": ["listing", "shop", "keyword"], "candidates": 40, "top_k": 12, "owner_first": true, "keywords": ["competitor", "listing"]}'::jsonb, true),
('Keyword explanation', 'keyword_explanation', 1,
 'Explain why a specific keyword or set of keywords is significant. '
 || 'Focus on historical performance (demand, competition, trends), seasonal patterns if present, related keywords and clusters, '
 || 'and risk factors (trademark issues, policy violations). '
 || 'Format: explain the keyword''s meaning, then its metrics, then strategic advice.',
 '{"family": "lexybrain", "priority": 30, "allowed_source_types": ["keyword", "keyword_history", "alert"], "candidates": 30, "top_k": 10, "keywords": ["keyword & why"]}'::jsonb, true),
('Alert explanation', 'alert_explanation', 1,
 'Explain alerts, risk triggers and compliance issues. '
 || 'Focus on why the alert was triggered, its severity and potential impact, recommended mitigation actions, '
 || 'and related policy or risk documentation. '
 || 'Format: a clear explanation of the issue, its severity, the evidence and the action steps.',
 '{"family": "lexybrain", "priority": 20, "allowed_source_types": ["alert", "risk_rule", "doc"], "candidates": 20, "top_k": 8, "owner_first": true, "keywords": ["alert", "risk"]}'::jsonb, true),
('General chat', 'general_chat', 1,
 'Answer general questions about the product, marketplace selling or e-commerce strategy. '
 || 'When the documents are insufficient, say that you do not have the specific data and suggest which feature or report to use. '
 || 'Format: conversational, helpful, and honest about limitations.',
 '{"family": "lexybrain", "priority": 50, "fallback": true, "allowed_source_types": ["doc", "keyword", "watchlist"], "candidates": 30, "top_k": 10, "owner_first": true, "keywords": []}'::jsonb, true);
