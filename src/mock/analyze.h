/* SPDX-License-Identifier: MIT */
/* analyze.h: what fixture tooling (`proctor fixtures`) knows about a loaded tool: which rule
 * answers each rule's own argv (shadowing), sortedness and the most-specific-first order, and
 * near misses for calls no rule answered. Everything goes through mockd's own matcher and
 * classifier (service.h), never a second copy of the rules. */
#ifndef PROCTOR_MOCK_ANALYZE_H
#define PROCTOR_MOCK_ANALYZE_H

#include <stddef.h>
#include <sys/types.h>

#include "match.h"
#include "service.h"

/* answer[i] = the rule that answers rule i's own argv (i itself unless it is shadowed; -1 when
 * none does, which cannot happen for a valid fixture). `answer` has f->nrules entries. */
void analyze_self_answers(struct mock_tool *t, ssize_t *answer);
/* For a subset rule: the first subset rule whose tokens are all among its own, which is the
 * rule itself unless an earlier one shadows it (then it can never match). */
ssize_t analyze_subset_shadow(struct mock_tool *t, size_t rule);
/* A subset rule's specificity: its number of distinct tokens after noise flags. */
size_t analyze_specificity(const struct mock_tool *t, size_t rule);
/* The first subset rule that is followed by a more specific one (1, with the pair), or 0 when
 * the subset rules are sorted most-specific-first. */
int analyze_unsorted(const struct mock_tool *t, size_t *ret_first, size_t *ret_later);
/* The most-specific-first order: perm[slot] = the rule that goes there. Exact and normalized
 * rules keep their slots; subset slots take the subset rules sorted by specificity, descending,
 * stable within equal counts. `perm` has f->nrules entries. */
void analyze_sort_order(const struct mock_tool *t, size_t *perm);

struct near_miss {
	size_t rule;
	size_t nmissing; /* rule tokens absent from the call */
	size_t nextra;   /* call tokens absent from the rule */
};
/* The rules closest to argv, nearest first: fewest missing tokens, then fewest extra, then file
 * order. Fills at most `max`; returns how many, or -ENOMEM. */
ssize_t analyze_near_misses(struct mock_tool *t, const char *const *argv, size_t argc, struct near_miss *out,
			    size_t max);
/* The missing and extra tokens of one near miss, as strings (appended to the given tokens). */
int analyze_diff(struct mock_tool *t, size_t rule, const char *const *argv, size_t argc, struct tokens *missing,
		 struct tokens *extra);

#endif
