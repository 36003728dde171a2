/* SPDX-License-Identifier: MIT */
/* test_oom.c: out-of-memory in the security paths fails closed. The guard's decision (its list of
 * protected files, the Bash analysis, the path checks) and the bundle digest are run with every
 * allocation from the N-th on failing, for every N up to the first run that needs no failure: the
 * guard must then deny and the digest must be an error, never an allow or a partial digest;
 * our JSON dumps must be an error or exactly right (jansson's own json_dumps, run in the same
 * loop, returned damaged text in 9 of its runs when this was written).
 * malloc is replaced in this binary alone (glibc calls the replacement from inside libc too);
 * under AddressSanitizer, which owns malloc, the tests are skipped. */
#include "helpers.h"

#include <limits.h>
#include <sys/stat.h>

#include "../../src/bundle/manifest.h"
#include "../../src/guard/decide.h"
#include "../../src/guard/guard.h"
#include "../../src/lib/json.h"
#include "../../src/lib/strv.h"

#if defined(__SANITIZE_ADDRESS__)
#define OOM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_SANITIZED 1
#endif
#endif

/* Allocation calls counted while armed; number fail_from fails, and with fail_rest every one after
 * it too (a single failure finds the code that carries on with a list left incomplete; failing
 * the rest, the code that needs memory to report the first failure). */
static long alloc_calls, fail_from = -1;
static bool fail_rest, failed;

#ifndef OOM_SANITIZED
/* glibc's own allocator, which the replacements below call */
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wreserved-identifier"
#endif
/* NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): glibc's names */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
/* NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#ifdef __clang__
#pragma clang diagnostic pop
#endif
void *malloc(size_t n);
void *calloc(size_t k, size_t n);
void *realloc(void *p, size_t n);
void free(void *p);

static bool alloc_fails(void)
{
	if (fail_from < 0 || alloc_calls++ < fail_from || (!fail_rest && alloc_calls - 1 > fail_from))
		return false;
	failed = true;
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	return alloc_fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	return alloc_fails() ? NULL : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}
#endif

static void arm(long from, bool rest)
{
	fail_rest = rest;
	alloc_calls = 0;
	failed = false;
	fail_from = from;
}

/* Stop failing; whether an allocation failed since arm(). */
static bool disarm(void)
{
	fail_from = -1;
	return failed;
}

/* Beyond this many allocations in one call the loop gives up (the analysis is far smaller). */
#define OOM_MAX_ALLOCS 100000

static char root[256];

/* Decide `tool`/`input` with allocation failing at every point in turn, until a run needs no
 * failure. A call the guard denies must be denied in every run: a failure must never turn into an
 * allow (a protected file left off the list, a target left unchecked). A call it allows may be
 * denied under failure (glibc tolerates some, such as a realloc that would shrink), never crash. */
static void decide_under_oom(const char *tool, json_t *input, bool deny)
{
	struct guard_marker m = { .active = true, .expires_ms = INT64_MAX };
	json_t *p = json_pack("{s:s,s:s,s:O}", "tool_name", tool, "cwd", root, "tool_input", input);
	struct guard_verdict v;
	long n;

	assert_non_null(p);
	assert_int_equal(strv_push(&m.roots, root), 0);
	for (n = 0; n < 2 * OOM_MAX_ALLOCS; n++) {
		bool injected;

		arm(n / 2, n % 2);
		guard_decide(&m, p, &v);
		injected = disarm();
		if (deny && !v.deny)
			fail_msg("%s: allocation %ld failed%s and the guard allowed", tool, n / 2,
				 n % 2 ? " (and every later one)" : "");
		if (!injected && v.deny != deny)
			fail_msg("%s: %s with no allocation failing: %s", tool, v.deny ? "denied" : "allowed",
				 v.reason);
		guard_verdict_free(&v);
		if (!injected)
			break;
	}
	assert_true(n > 0 && n < 2 * OOM_MAX_ALLOCS); /* allocations were made, and every one was failed */
	print_message("%s (%s): %ld allocations, each failed in turn\n", tool, deny ? "denied" : "allowed", n / 2);
	json_decref(p);
	guard_marker_free(&m);
}

static void decide_json(const char *tool, const char *input, bool deny)
{
	json_error_t e;
	char text[1024];
	size_t o = 0;
	json_t *in;

	for (const char *c = input; *c && o + sizeof(root) < sizeof(text); c++) { /* @R -> the root */
		if (c[0] == '@' && c[1] == 'R')
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", root), c++;
		else
			text[o++] = *c;
	}
	text[o] = '\0';
	in = json_loads(text, 0, &e);
	assert_non_null(in);
	decide_under_oom(tool, in, deny);
	json_decref(in);
}

static void test_oom__guard_decide_denies(void **state)
{
	(void)state;
#ifdef OOM_SANITIZED
	skip();
	return;
#endif
	/* the guard's own files: denied only while the protected list is whole */
	decide_json("Write", "{\"file_path\":\"@R/.claude/settings.local.json\"}", true);
	decide_json("Edit", "{\"file_path\":\"@R/.codex/config.toml\"}", true);
	decide_json("Write", "{\"file_path\":\"@R/.agents/skills/.proctor-guard.json\"}", true);
	decide_json("Bash", "{\"command\":\"rm -rf .claude/skills; echo x > @R/.codex/hooks.json\"}", true);
	decide_json("apply_patch",
		    "{\"input\":\"*** Begin Patch\\n*** Delete File: .claude/settings.json\\n"
		    "*** End Patch\"}",
		    true);
	/* outside the root */
	decide_json("Write", "{\"file_path\":\"@R/../elsewhere\"}", true);
	decide_json("Bash", "{\"command\":\"cd sub && parallel touch {} ::: ../../x && git status\"}", true);
	decide_json("mcp__fs__write_file", "{\"path\":\"/etc/x\"}", true);
	/* allowed: under failure a deny is fine, a crash or leak is not */
	decide_json("Write", "{\"file_path\":\"sub/a.txt\",\"content\":\"x\"}", false);
	decide_json("Bash", "{\"command\":\"mkdir -p sub && echo hi > sub/x.txt && cp a.txt sub/\"}", false);
	decide_json("apply_patch", "{\"input\":\"*** Begin Patch\\n*** Add File: sub/n.txt\\n+x\\n*** End Patch\"}",
		    false);
}

/* The digest under allocation failure: an error, and m->digest left empty (a stale or partial
 * digest could vouch for a bundle it does not describe). */
static void test_oom__manifest_digest_fails(void **state)
{
	static const char h[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	struct manifest *m;
	char want[sizeof(m->digest)];
	long n;

	(void)state;
#ifdef OOM_SANITIZED
	skip(); /* returns: nothing may follow that the sanitized build would run */
	return;
#endif
	m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(manifest_add_file(m, "agents/a.md", h), 0);
	assert_int_equal(manifest_add_file(m, "skills/b.md", h), 0);
	assert_int_equal(manifest_add_link(m, "skills/l", "b.md"), 0);
	m->files[1].exec = true;
	manifest_sort(m);
	assert_int_equal(manifest_digest(m), 0); /* loads libcrypto once, outside the loop */
	memcpy(want, m->digest, sizeof(want));
	for (n = 0; n < 2 * OOM_MAX_ALLOCS; n++) {
		int r;
		bool injected;

		memset(m->digest, 'x', sizeof(m->digest) - 1);
		arm(n / 2, n % 2);
		r = manifest_digest(m);
		injected = disarm();
		/* an error leaves no digest; a success (glibc tolerated the failure) is the right one */
		if (r < 0 && m->digest[0])
			fail_msg("allocation %ld failed: error %d, but the digest is \"%s\"", n / 2, r, m->digest);
		if (r >= 0 && strcmp(m->digest, want))
			fail_msg("allocation %ld failed: digest \"%s\", not \"%s\"", n / 2, m->digest, want);
		if (!injected) {
			assert_int_equal(r, 0);
			break;
		}
	}
	assert_true(n > 0 && n < 2 * OOM_MAX_ALLOCS);
	print_message("manifest_digest: %ld allocations, each failed in turn: an error\n", n / 2);
	manifest_free(m);
}

/* Our dumps under allocation failure: an error (the buffer as it was), or exactly the right
 * text. jansson's own json_dumps returns text with a key's quote missing in some of these runs. */
static void test_oom__json_dump_never_damaged(void **state)
{
	json_t *doc;
	char *want = NULL, *got;
	struct buf b;
	long n;

	(void)state;
#ifdef OOM_SANITIZED
	skip(); /* returns: nothing may be allocated before it */
	return;
#endif
	doc = json_pack("{s:s,s:{s:[i,s,b],s:s},s:n}", "a \"quoted\" key", "v\n1", "nested", "list", 1, "\u00e9", true,
			"k", "x", "z", NULL);
	assert_non_null(doc);
	/* mostly long keys: the buffer's growth falls inside a key's dump, where jansson does not
	 * look at the callback's result */
	for (int i = 0; i < 200; i++) {
		char key[64];

		snprintf(key, sizeof(key), "a-long-key-so-that-growth-lands-in-a-key-%03d", i);
		assert_int_equal(json_object_set_new(doc, key, json_integer(i)), 0);
	}
	assert_int_equal(json_dump_str(doc, JSON_INDENT(2) | JSON_SORT_KEYS, &want), 0);
	for (n = 0; n < 2 * OOM_MAX_ALLOCS; n++) {
		bool injected;
		int r, rb;

		got = NULL;
		buf_init(&b, 0);
		assert_int_equal(buf_append(&b, "kept:", 5), 0);
		arm(n / 2, n % 2);
		r = json_dump_str(doc, JSON_INDENT(2) | JSON_SORT_KEYS, &got);
		rb = json_dump_buf(doc, JSON_INDENT(2) | JSON_SORT_KEYS, &b);
		injected = disarm();
		if (r == 0 && strcmp(got, want))
			fail_msg("allocation %ld failed: json_dump_str gave\n%s\nnot\n%s", n / 2, got, want);
		if (rb < 0 && strcmp(b.data, "kept:"))
			fail_msg("allocation %ld failed: json_dump_buf failed and left \"%s\"", n / 2, b.data);
		if (rb == 0) {
			json_t *back = json_loads(b.data + 5, 0, NULL);

			if (strncmp(b.data, "kept:", 5) || !json_equal(back, doc))
				fail_msg("allocation %ld failed: json_dump_buf gave \"%s\"", n / 2, b.data);
			json_decref(back);
		}
		free(got);
		buf_free(&b);
		if (!injected) {
			assert_int_equal(r, 0);
			break;
		}
	}
	assert_true(n > 0 && n < 2 * OOM_MAX_ALLOCS);
	print_message("json_dump_str, json_dump_buf: %ld allocations, each failed in turn\n", n / 2);
	free(want);
	json_decref(doc);
}

static int oom_setup(void **state)
{
	char p[512];

	if (scratch_setup(state) < 0)
		return -1;
	snprintf(root, sizeof(root), "%s/ws", scratch_dir);
	snprintf(p, sizeof(p), "%s/sub", root);
	if (mkdir(root, 0755) < 0 || mkdir(p, 0755) < 0)
		return -1;
	return scratch_file("ws/a.txt", "a\n") ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom__guard_decide_denies),
		cmocka_unit_test(test_oom__manifest_digest_fails),
		cmocka_unit_test(test_oom__json_dump_never_damaged),
	};

	return cmocka_run_group_tests(tests, oom_setup, scratch_teardown);
}
