/* SPDX-License-Identifier: MIT */
/* analyze.c: shadowing, ordering and near misses over a loaded tool. */
#include "analyze.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void analyze_self_answers(struct mock_tool *t, ssize_t *answer)
{
	for (size_t i = 0; i < t->fixture->nrules; i++) {
		const struct fixture_rule *r = &t->fixture->rules[i];

		(void)mock_tool_classify(t, r->argv, r->argc, &answer[i]);
	}
}

ssize_t analyze_subset_shadow(struct mock_tool *t, size_t rule)
{
	const struct fixture_rule *r = &t->fixture->rules[rule];

	return matcher_match_subset(t->matcher, r->argv, r->argc);
}

size_t analyze_specificity(const struct mock_tool *t, size_t rule)
{
	size_t n = 0;

	return matcher_rule_tokens(t->matcher, rule, &n) ? n : 0;
}

int analyze_unsorted(const struct mock_tool *t, size_t *ret_first, size_t *ret_later)
{
	ssize_t prev = -1;

	/* Not non-increasing somewhere <=> some adjacent pair (in subset order) increases. */
	for (size_t i = 0; i < t->fixture->nrules; i++) {
		if (t->fixture->rules[i].mode != MATCH_SUBSET)
			continue;
		if (prev >= 0 && analyze_specificity(t, (size_t)prev) < analyze_specificity(t, i)) {
			*ret_first = (size_t)prev;
			*ret_later = i;
			return 1;
		}
		prev = (ssize_t)i;
	}
	return 0;
}

static const struct mock_tool *sort_tool;

static int by_specificity(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t nx = analyze_specificity(sort_tool, x), ny = analyze_specificity(sort_tool, y);

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x < y ? -1 : x > y; /* stable: file order within equal counts */
}

void analyze_sort_order(const struct mock_tool *t, size_t *perm)
{
	size_t n = t->fixture->nrules, k = 0, *subset = calloc(n + 1, sizeof(*subset)), ns = 0;

	for (size_t i = 0; i < n; i++) {
		perm[i] = i;
		if (subset && t->fixture->rules[i].mode == MATCH_SUBSET)
			subset[ns++] = i;
	}
	if (!subset)
		return; /* out of memory: the identity order, which changes nothing */
	sort_tool = t;
	qsort(subset, ns, sizeof(*subset), by_specificity);
	for (size_t i = 0; i < n; i++)
		if (t->fixture->rules[i].mode == MATCH_SUBSET)
			perm[i] = subset[k++];
	free(subset);
}

/* Tokens of a rule as matching sees them: raw argv for exact rules, tokenized otherwise. */
static int rule_tokens(struct mock_tool *t, size_t rule, struct tokens *out)
{
	const struct fixture_rule *r = &t->fixture->rules[rule];
	size_t nn;
	const char *const *noise = matcher_noise(t->matcher, &nn);

	if (r->mode != MATCH_EXACT)
		return mock_tokenize(r->argv, r->argc, noise, nn, out);
	return mock_tokenize(r->argv, r->argc, NULL, 0, out);
}

static int token_in(const struct token *tok, const struct tokens *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].n == tok->n && !memcmp(set->v[i].p, tok->p, tok->n))
			return 1;
	return 0;
}

static void count_diff(const struct tokens *rule, const struct tokens *call, size_t *missing, size_t *extra)
{
	*missing = *extra = 0;
	for (size_t i = 0; i < rule->n; i++)
		*missing += !token_in(&rule->v[i], call);
	for (size_t i = 0; i < call->n; i++)
		*extra += !token_in(&call->v[i], rule);
}

static int near_cmp(const struct near_miss *a, const struct near_miss *b)
{
	if (a->nmissing != b->nmissing)
		return a->nmissing < b->nmissing ? -1 : 1;
	if (a->nextra != b->nextra)
		return a->nextra < b->nextra ? -1 : 1;
	return a->rule < b->rule ? -1 : a->rule > b->rule;
}

ssize_t analyze_near_misses(struct mock_tool *t, const char *const *argv, size_t argc, struct near_miss *out,
			    size_t max)
{
	struct tokens call = { 0 }, rule = { 0 };
	size_t nn, n = 0;
	const char *const *noise = matcher_noise(t->matcher, &nn);
	ssize_t r = 0;

	if (max == 0 || mock_tokenize(argv, argc, noise, nn, &call) < 0)
		return max == 0 ? 0 : -ENOMEM;
	for (size_t i = 0; i < t->fixture->nrules; i++) {
		struct near_miss c = { .rule = i };
		size_t k;

		if (rule_tokens(t, i, &rule) < 0) {
			r = -ENOMEM;
			goto out;
		}
		count_diff(&rule, &call, &c.nmissing, &c.nextra);
		/* Insertion into the sorted top-`max` list. */
		for (k = n; k > 0 && near_cmp(&c, &out[k - 1]) < 0; k--)
			if (k < max)
				out[k] = out[k - 1];
		if (k < max) {
			out[k] = c;
			if (n < max)
				n++;
		}
	}
	r = (ssize_t)n;
out:
	tokens_free(&call);
	tokens_free(&rule);
	return r;
}

int analyze_diff(struct mock_tool *t, size_t rule, const char *const *argv, size_t argc, struct tokens *missing,
		 struct tokens *extra)
{
	struct tokens call = { 0 }, rt = { 0 };
	size_t nn;
	const char *const *noise = matcher_noise(t->matcher, &nn);
	int r = mock_tokenize(argv, argc, noise, nn, &call);

	if (r == 0)
		r = rule_tokens(t, rule, &rt);
	for (size_t i = 0; r == 0 && i < rt.n; i++)
		if (!token_in(&rt.v[i], &call) && !token_in(&rt.v[i], missing))
			r = tokens_append(missing, rt.v[i].p, rt.v[i].n);
	for (size_t i = 0; r == 0 && i < call.n; i++)
		if (!token_in(&call.v[i], &rt) && !token_in(&call.v[i], extra))
			r = tokens_append(extra, call.v[i].p, call.v[i].n);
	tokens_free(&call);
	tokens_free(&rt);
	return r;
}
