/* SPDX-License-Identifier: MIT */
/* match.c: exact, normalized and subset matching.
 *
 * Every string that occurs in a rule is interned to a 32-bit id. Exact keys are the raw argv as
 * an id sequence, normalized keys the sorted token-id multiset; both live in one open-addressing
 * table keyed by bytes. A query string that was never interned cannot be part of any key, so an
 * unknown string rules out exact/normalized at once.
 *
 * Subset rules ("every rule token is in the invocation's token set", first rule in file order
 * wins) are indexed by each rule's rarest token: a query only examines the buckets of its own
 * tokens, and a bucket is scanned in rule order only up to the best rule found so far. With
 * 100,000 rules this examines a handful of candidates instead of every rule. */
#include "match.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const mock_default_noise_flags[] = { "--output", NULL };
const size_t mock_default_noise_count = 1;

void tokens_free(struct tokens *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

int tokens_append(struct tokens *t, const char *p, size_t n)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		struct token *v = realloc(t->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = ncap;
	}
	t->v[t->n].p = p;
	t->v[t->n].n = n;
	t->n++;
	return 0;
}

static int is_noise(const char *p, size_t n, const char *const *noise, size_t nnoise)
{
	for (size_t i = 0; i < nnoise; i++)
		if (strlen(noise[i]) == n && !memcmp(noise[i], p, n))
			return 1;
	return 0;
}

int mock_tokenize(const char *const *argv, size_t argc, const char *const *noise, size_t nnoise, struct tokens *ret)
{
	int r;

	ret->n = 0;
	for (size_t i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *eq = a[0] == '-' ? strchr(a, '=') : NULL;
		size_t flen = eq ? (size_t)(eq - a) : strlen(a);

		if (is_noise(a, flen, noise, nnoise)) {
			/* `--output json` drops the value too; `--output=json` carried its own. */
			if (!eq && i + 1 < argc && argv[i + 1][0] != '-')
				i++;
			continue;
		}
		r = tokens_append(ret, a, flen);
		if (r == 0 && eq && eq[1])
			r = tokens_append(ret, eq + 1, strlen(eq + 1));
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- byte-keyed open-addressing table ---------------------------------------------------- */

struct slot {
	uint64_t hash;
	const void *key; /* NULL: empty; points into the fixture or into matcher-owned arrays */
	size_t len;
	uint32_t val;
};

struct table {
	struct slot *slots;
	size_t cap, n; /* cap is a power of two */
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int table_grow(struct table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct slot *s = &t->slots[i];
		size_t j;

		if (!s->key)
			continue;
		for (j = s->hash & (ncap - 1); ns[j].key; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *s;
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static struct slot *table_find(const struct table *t, const void *key, size_t len, uint64_t h)
{
	if (!t->cap)
		return NULL;
	for (size_t j = h & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
		struct slot *s = &t->slots[j];

		if (!s->key)
			return s;
		if (s->hash == h && s->len == len && !memcmp(s->key, key, len))
			return s;
	}
}

/* Insert key -> val unless present. Returns 1 if inserted, 0 if present (*ret_val = existing). */
static int table_put(struct table *t, const void *key, size_t len, uint32_t val, uint32_t *ret_val)
{
	uint64_t h = hash_bytes(key, len);
	struct slot *s;

	if ((t->n + 1) * 4 > t->cap * 3 && table_grow(t) < 0)
		return -ENOMEM;
	s = table_find(t, key, len, h);
	if (s->key) {
		*ret_val = s->val;
		return 0;
	}
	*s = (struct slot){ .hash = h, .key = key ? key : "", .len = len, .val = val };
	t->n++;
	return 1;
}

static int table_get(const struct table *t, const void *key, size_t len, uint32_t *ret_val)
{
	struct slot *s = table_find(t, key, len, hash_bytes(key, len));

	if (!s || !s->key)
		return 0;
	*ret_val = s->val;
	return 1;
}

/* ---- the matcher ------------------------------------------------------------------------- */

struct id_list {
	uint32_t *v;
	size_t n;
};

struct matcher {
	const struct fixture *f;
	const char **noise;
	size_t nnoise;
	struct table strings;    /* string slice -> id */
	struct table exact;      /* raw argv ids -> rule */
	struct table normalized; /* sorted token ids -> rule */
	struct id_list *keys;    /* per rule: its key ids (subset: sorted, unique) */
	size_t nsubset;
	uint32_t *bucket_start; /* CSR subset index: rules anchored at id k are */
	uint32_t *bucket_rules; /* bucket_rules[bucket_start[k] .. bucket_start[k+1]) */
	uint32_t *mark;         /* mark[id] == gen: id is in the current query */
	uint32_t gen;
	struct tokens tok; /* query scratch */
	uint32_t *qids, *qset;
	size_t qcap;
};

static int intern(struct matcher *m, const char *p, size_t n, uint32_t *ret_id)
{
	int r = table_put(&m->strings, p, n, (uint32_t)m->strings.n, ret_id);

	if (r == 1)
		*ret_id = (uint32_t)m->strings.n - 1;
	return r < 0 ? r : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t sort_unique(uint32_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

static int rule_key_build(struct matcher *m, size_t i, struct diag *d)
{
	const struct fixture_rule *rule = &m->f->rules[i];
	struct id_list *k = &m->keys[i];
	struct table *t = rule->mode == MATCH_EXACT ? &m->exact : &m->normalized;
	uint32_t prev;
	int r;

	if (rule->mode == MATCH_EXACT) {
		k->v = calloc(rule->argc + 1, sizeof(uint32_t));
		if (!k->v)
			return -ENOMEM;
		for (k->n = 0; k->n < rule->argc; k->n++) {
			r = intern(m, rule->argv[k->n], strlen(rule->argv[k->n]), &k->v[k->n]);
			if (r < 0)
				return r;
		}
	} else {
		r = mock_tokenize(rule->argv, rule->argc, (const char *const *)m->noise, m->nnoise, &m->tok);
		if (r < 0)
			return r;
		k->v = calloc(m->tok.n + 1, sizeof(uint32_t));
		if (!k->v)
			return -ENOMEM;
		for (k->n = 0; k->n < m->tok.n; k->n++) {
			r = intern(m, m->tok.v[k->n].p, m->tok.v[k->n].n, &k->v[k->n]);
			if (r < 0)
				return r;
		}
		if (rule->mode == MATCH_SUBSET) {
			k->n = sort_unique(k->v, k->n);
			if (k->n == 0 && rule->argc) /* an empty argv is the loader's error already */
				diag_error(d,
					   "%s: responses[%zu].argv: no tokens are left after dropping noise flags, "
					   "so this subset rule would match every call",
					   m->f->path, i);
			m->nsubset++;
			return 0;
		}
		qsort(k->v, k->n, sizeof(uint32_t), cmp_u32);
	}
	r = table_put(t, k->v, k->n * sizeof(uint32_t), (uint32_t)i, &prev);
	if (r == 0)
		diag_error(d, "%s: responses[%zu].argv: duplicate %s key (same as responses[%u])", m->f->path, i,
			   match_mode_name(rule->mode), prev);
	return r < 0 ? r : 0;
}

/* Anchor every subset rule at its rarest token and lay the buckets out in rule order. */
static int subset_index_build(struct matcher *m)
{
	size_t nids = m->strings.n;
	uint32_t *count = calloc(nids + 1, sizeof(uint32_t));
	uint32_t *anchor = calloc(m->f->nrules + 1, sizeof(uint32_t));
	int r = -ENOMEM;

	m->bucket_start = calloc(nids + 2, sizeof(uint32_t));
	m->bucket_rules = calloc(m->nsubset + 1, sizeof(uint32_t));
	m->mark = calloc(nids + 1, sizeof(uint32_t));
	if (!count || !anchor || !m->bucket_start || !m->bucket_rules || !m->mark)
		goto out;
	for (size_t i = 0; i < m->f->nrules; i++)
		if (m->f->rules[i].mode == MATCH_SUBSET)
			for (size_t j = 0; j < m->keys[i].n; j++)
				count[m->keys[i].v[j]]++;
	for (size_t i = 0; i < m->f->nrules; i++) {
		const struct id_list *k = &m->keys[i];

		if (m->f->rules[i].mode != MATCH_SUBSET || k->n == 0)
			continue;
		anchor[i] = k->v[0];
		for (size_t j = 1; j < k->n; j++)
			if (count[k->v[j]] < count[anchor[i]])
				anchor[i] = k->v[j];
		m->bucket_start[anchor[i] + 1]++;
	}
	for (size_t id = 0; id < nids; id++)
		m->bucket_start[id + 1] += m->bucket_start[id];
	memcpy(count, m->bucket_start, nids * sizeof(uint32_t)); /* reuse as fill cursors */
	for (size_t i = 0; i < m->f->nrules; i++)
		if (m->f->rules[i].mode == MATCH_SUBSET && m->keys[i].n)
			m->bucket_rules[count[anchor[i]]++] = (uint32_t)i;
	r = 0;
out:
	free(count);
	free(anchor);
	return r;
}

int matcher_build(const struct fixture *f, const char *const *noise, size_t nnoise, struct diag *d,
		  struct matcher **ret)
{
	struct matcher *m = calloc(1, sizeof(*m));
	size_t errors_before = d->errors;
	int r = -ENOMEM;

	if (!m)
		return -ENOMEM;
	m->f = f;
	m->nnoise = nnoise;
	m->noise = calloc(nnoise + 1, sizeof(*m->noise));
	m->keys = calloc(f->nrules + 1, sizeof(*m->keys));
	if (!m->noise || !m->keys)
		goto fail;
	if (nnoise)
		memcpy(m->noise, noise, nnoise * sizeof(*noise));
	for (size_t i = 0; i < f->nrules; i++) {
		r = rule_key_build(m, i, d);
		if (r < 0)
			goto fail;
	}
	r = subset_index_build(m);
	if (r < 0)
		goto fail;
	if (d->errors > errors_before) {
		r = -EINVAL;
		goto fail;
	}
	*ret = m;
	return 0;
fail:
	matcher_free(m);
	return r;
}

void matcher_free(struct matcher *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->keys && i < m->f->nrules; i++)
		free(m->keys[i].v);
	free(m->keys);
	free(m->noise);
	free(m->strings.slots);
	free(m->exact.slots);
	free(m->normalized.slots);
	free(m->bucket_start);
	free(m->bucket_rules);
	free(m->mark);
	tokens_free(&m->tok);
	free(m->qids);
	free(m->qset);
	free(m);
}

static int scratch_reserve(struct matcher *m, size_t n)
{
	uint32_t *a, *b;

	if (n <= m->qcap)
		return 0;
	if (n > SIZE_MAX / sizeof(uint32_t))
		return -ENOMEM;
	a = realloc(m->qids, n * sizeof(uint32_t));
	if (a)
		m->qids = a;
	b = realloc(m->qset, n * sizeof(uint32_t));
	if (b)
		m->qset = b;
	if (!a || !b)
		return -ENOMEM;
	m->qcap = n;
	return 0;
}

static ssize_t match_exact(struct matcher *m, const char *const *argv, size_t argc)
{
	uint32_t rule;

	if (!m->exact.n)
		return -1;
	if (scratch_reserve(m, argc + 1) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++)
		if (!table_get(&m->strings, argv[i], strlen(argv[i]), &m->qids[i]))
			return -1;
	return table_get(&m->exact, m->qids, argc * sizeof(uint32_t), &rule) ? (ssize_t)rule : -1;
}

/* Map the tokenized query to ids: qids (all, or fewer when some are unknown) and qset (the
 * distinct known ids, marked in m->mark). Returns 1 when every token was known. */
static int query_ids(struct matcher *m, size_t *ret_nids, size_t *ret_nset)
{
	size_t nids = 0, nset = 0;
	int all_known = 1;

	if (++m->gen == 0) {
		memset(m->mark, 0, m->strings.n * sizeof(uint32_t));
		m->gen = 1;
	}
	for (size_t i = 0; i < m->tok.n; i++) {
		uint32_t id;

		if (!table_get(&m->strings, m->tok.v[i].p, m->tok.v[i].n, &id)) {
			all_known = 0;
			continue;
		}
		m->qids[nids++] = id;
		if (m->mark[id] != m->gen) {
			m->mark[id] = m->gen;
			m->qset[nset++] = id;
		}
	}
	*ret_nids = nids;
	*ret_nset = nset;
	return all_known;
}

static int rule_covered(const struct matcher *m, uint32_t rule)
{
	const struct id_list *k = &m->keys[rule];

	for (size_t j = 0; j < k->n; j++)
		if (m->mark[k->v[j]] != m->gen)
			return 0;
	return 1;
}

static ssize_t match_subset_indexed(struct matcher *m, size_t nset)
{
	uint32_t best = UINT32_MAX;

	for (size_t i = 0; i < nset; i++) {
		uint32_t id = m->qset[i];

		for (uint32_t b = m->bucket_start[id]; b < m->bucket_start[id + 1]; b++) {
			uint32_t rule = m->bucket_rules[b];

			if (rule >= best)
				break;
			if (rule_covered(m, rule)) {
				best = rule;
				break;
			}
		}
	}
	return best == UINT32_MAX ? -1 : (ssize_t)best;
}

static int query_prepare(struct matcher *m, const char *const *argv, size_t argc, size_t *ret_nids, size_t *ret_nset)
{
	if (mock_tokenize(argv, argc, (const char *const *)m->noise, m->nnoise, &m->tok) < 0 ||
	    scratch_reserve(m, m->tok.n + 1) < 0)
		return -ENOMEM;
	return query_ids(m, ret_nids, ret_nset);
}

ssize_t matcher_match(struct matcher *m, const char *const *argv, size_t argc, enum match_mode *ret_mode)
{
	size_t nids, nset;
	uint32_t rule;
	ssize_t hit;
	int all_known;

	hit = match_exact(m, argv, argc);
	if (hit >= 0) {
		*ret_mode = MATCH_EXACT;
		return hit;
	}
	/* Out of memory is not "no match": that could fall through to the real tool. */
	if (hit < -1)
		return hit;
	if (!m->normalized.n && !m->nsubset)
		return -1;
	all_known = query_prepare(m, argv, argc, &nids, &nset);
	if (all_known < 0)
		return all_known;
	if (all_known && m->normalized.n) {
		qsort(m->qids, nids, sizeof(uint32_t), cmp_u32);
		if (table_get(&m->normalized, m->qids, nids * sizeof(uint32_t), &rule)) {
			*ret_mode = MATCH_NORMALIZED;
			return rule;
		}
	}
	hit = m->nsubset ? match_subset_indexed(m, nset) : -1;
	if (hit >= 0)
		*ret_mode = MATCH_SUBSET;
	return hit;
}

ssize_t matcher_match_normalized(struct matcher *m, const char *const *argv, size_t argc)
{
	size_t nids, nset;
	uint32_t rule;

	int r;

	if (!m->normalized.n)
		return -1;
	r = query_prepare(m, argv, argc, &nids, &nset);
	if (r != 1)
		return r < 0 ? r : -1;
	qsort(m->qids, nids, sizeof(uint32_t), cmp_u32);
	return table_get(&m->normalized, m->qids, nids * sizeof(uint32_t), &rule) ? (ssize_t)rule : -1;
}

ssize_t matcher_match_subset(struct matcher *m, const char *const *argv, size_t argc)
{
	size_t nids, nset;

	int r;

	if (!m->nsubset)
		return -1;
	r = query_prepare(m, argv, argc, &nids, &nset);
	if (r < 0)
		return r;
	return match_subset_indexed(m, nset);
}

ssize_t matcher_match_subset_linear(struct matcher *m, const char *const *argv, size_t argc)
{
	size_t nids, nset;

	int r = query_prepare(m, argv, argc, &nids, &nset);

	if (r < 0)
		return r;
	for (size_t i = 0; i < m->f->nrules; i++)
		if (m->f->rules[i].mode == MATCH_SUBSET && m->keys[i].n && rule_covered(m, (uint32_t)i))
			return (ssize_t)i;
	return -1;
}

const uint32_t *matcher_rule_tokens(const struct matcher *m, size_t rule, size_t *ret_n)
{
	if (rule >= m->f->nrules || m->f->rules[rule].mode != MATCH_SUBSET)
		return NULL;
	*ret_n = m->keys[rule].n;
	return m->keys[rule].v;
}

const char *const *matcher_noise(const struct matcher *m, size_t *ret_n)
{
	*ret_n = m->nnoise;
	return (const char *const *)m->noise;
}
