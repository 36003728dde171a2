/* SPDX-License-Identifier: MIT */
/* match.h: argv tokenizing and the three fixture match modes (ARCHITECTURE.md section 4).
 * Owns the lookup structures built from a loaded fixture; does not know about sockets, budgets
 * or passthrough. One matcher is used by one thread at a time (it keeps scratch space). */
#ifndef PROCTOR_MOCK_MATCH_H
#define PROCTOR_MOCK_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/diag.h"
#include "fixture.h"

/* A token is a slice of an argv string: `--flag=value` yields two slices of one string. */
struct token {
	const char *p;
	size_t n;
};

struct tokens {
	struct token *v;
	size_t n, cap;
};

void tokens_free(struct tokens *t);
/* Append a slice (not copied). 0 or -ENOMEM. */
int tokens_append(struct tokens *t, const char *p, size_t n);
/* Tokenize argv: `-x=v`/`--flag=value` becomes the flag and the value (an empty value is
 * dropped); any other token is kept verbatim; a noise flag is dropped, and so is the token after
 * it unless that token starts with '-' (`--output=json` is dropped whole). `*ret` is reset first.
 * 0 or -ENOMEM. */
int mock_tokenize(const char *const *argv, size_t argc, const char *const *noise, size_t nnoise, struct tokens *ret);

/* The flags dropped when a fixture and its tool config name none. */
extern const char *const mock_default_noise_flags[];
extern const size_t mock_default_noise_count;

struct matcher;

/* Build the tables for fixture `f` with the given noise flags. Duplicate exact or normalized keys
 * and subset rules left with no tokens are errors in `d` ("PATH: responses[i].argv: ...").
 * 0, -EINVAL when `d` got errors, or -ENOMEM. `f` must outlive the matcher. */
int matcher_build(const struct fixture *f, const char *const *noise, size_t nnoise, struct diag *d,
		  struct matcher **ret);
void matcher_free(struct matcher *m);

/* The rule that answers argv, or -1 when none does, or -ENOMEM (never reported as "no match":
 * a caller must fail closed). `*ret_mode` is set on a hit. The other match functions below
 * return -ENOMEM the same way. */
ssize_t matcher_match(struct matcher *m, const char *const *argv, size_t argc, enum match_mode *ret_mode);
/* Only the normalized stage: the normalized rule whose key is argv's sorted tokens. */
ssize_t matcher_match_normalized(struct matcher *m, const char *const *argv, size_t argc);
/* Only the subset stage: the first subset rule in file order whose tokens are all in argv's. */
ssize_t matcher_match_subset(struct matcher *m, const char *const *argv, size_t argc);
/* The subset rule that answers, scanning linearly in file order (reference semantics; used by
 * tests to prove the index agrees). */
ssize_t matcher_match_subset_linear(struct matcher *m, const char *const *argv, size_t argc);
/* The noise flags this matcher drops. */
const char *const *matcher_noise(const struct matcher *m, size_t *ret_n);
/* A subset rule's token ids (sorted, unique) for tooling; NULL for other modes. */
const uint32_t *matcher_rule_tokens(const struct matcher *m, size_t rule, size_t *ret_n);

#endif
