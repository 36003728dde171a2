/* SPDX-License-Identifier: MIT */
/* test_bundle.c: symlink validation (lexical and on disk), deny patterns, and the manifest's
 * canonical digest form (a contract: pinned bytes). */
#include "helpers.h"

#include <sys/stat.h>

#include "../../src/bundle/manifest.h"
#include "../../src/lib/diag.h"

static const struct bundle_rules dflt = { bundle_default_allow, 5, bundle_default_deny, 3 };

static const char *lexical(const char *link, const char *target)
{
	static char out[256];
	const char *why = NULL;
	char *res = NULL;

	if (bundle_link_lexical(&dflt, link, target, &res, &why) < 0)
		return why;
	snprintf(out, sizeof(out), "ok %s", res);
	free(res);
	return out;
}

static void test_bundle__lexical_links(void **state)
{
	(void)state;
	assert_string_equal(lexical("skills/a/l", "ref.md"), "ok skills/a/ref.md");
	assert_string_equal(lexical("skills/a/l", "../b/./x"), "ok skills/b/x");
	assert_string_equal(lexical("skills/a/l", "../../commands/c.md"), "ok commands/c.md");
	assert_string_equal(lexical("skills/a/l", "/etc/passwd"), "absolute symlink");
	assert_string_equal(lexical("skills/a/l", "../../../x"), "symlink escapes the source tree");
	assert_string_equal(lexical("skills/l", "../tests/answers"), "symlink points outside the allowed entries");
	assert_string_equal(lexical("skills/l", "../README.md"), "symlink points outside the allowed entries");
	assert_string_equal(lexical("skills/l", ".."), "symlink points outside the allowed entries");
}

static void test_bundle__deny_patterns(void **state)
{
	(void)state;
	assert_string_equal(bundle_denied(&dflt, "RESOLUTION.md", false), "resolution.md");
	assert_string_equal(bundle_denied(&dflt, "Resolution.MD", false), "resolution.md");
	assert_string_equal(bundle_denied(&dflt, "check_answers.py", false), "check_*.py");
	assert_string_equal(bundle_denied(&dflt, "CHECK_x.PY", false), "check_*.py");
	assert_string_equal(bundle_denied(&dflt, "tests", true), "tests/");
	assert_string_equal(bundle_denied(&dflt, "Tests", true), "tests/");
	assert_null(bundle_denied(&dflt, "tests", false)); /* a file named tests is fine */
	assert_null(bundle_denied(&dflt, "check.py", false));
	assert_null(bundle_denied(&dflt, "SKILL.md", false));
	assert_null(bundle_denied(&dflt, "testsuite", true));
}

static void mkd(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scratch_dir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void ln(const char *target, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scratch_dir, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* Walk the scratch tree; the errors' text, joined by '|'. */
static const char *walk_errors(void)
{
	static char out[2048];
	struct manifest *m = NULL;
	struct diag d;
	size_t off = 0;

	diag_init(&d);
	bundle_walk(scratch_dir, &dflt, &d, &m);
	out[0] = '\0';
	for (size_t i = 0; i < d.n; i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s", i ? "|" : "", d.msgs[i].text);
	manifest_free(m);
	diag_free(&d);
	return out;
}

static void test_bundle__links_on_disk(void **state)
{
	(void)state;
	mkd("skills");
	mkd("skills/a");
	mkd("tests");
	scratch_file("skills/a/ref.md", "r");
	scratch_file("tests/secret", "s");
	ln("ref.md", "skills/a/ok");
	assert_string_equal(walk_errors(), "");
	ln("missing.md", "skills/a/broken");
	ln("self", "skills/a/self");
	ln("two", "skills/a/one");
	ln("one", "skills/a/two");
	ln("../../tests/secret", "skills/a/other-entry");
	ln("/etc/passwd", "skills/a/abs");
	assert_string_equal(walk_errors(),
			    "skills/a/abs: absolute symlink (-> /etc/passwd)|"
			    "skills/a/broken: broken symlink (-> missing.md)|"
			    "skills/a/one: symlink loop (-> two)|"
			    "skills/a/other-entry: symlink points outside the allowed entries (-> ../../tests/secret)|"
			    "skills/a/self: symlink loop (-> self)|"
			    "skills/a/two: symlink loop (-> one)");
}

static void test_bundle__link_through_a_linked_directory(void **state)
{
	char out[256];

	(void)state;
	snprintf(out, sizeof(out), "%s/outside", scratch_dir);
	mkdir(out, 0755);
	mkd("skills");
	scratch_file("outside/secret", "s");
	ln("../outside", "skills/escape");         /* lexically outside: refused itself */
	ln("escape/secret", "skills/through");     /* lexically inside, but through that link */
	assert_string_equal(walk_errors(),
			    "skills/escape: symlink points outside the allowed entries (-> ../outside)|"
			    "skills/through: symlink resolves outside the allowed entries (-> escape/secret)");
}

static void test_bundle__hidden_material_and_special_files(void **state)
{
	char fifo[512];

	(void)state;
	mkd("skills");
	mkd("skills/x");
	mkd("skills/x/tests");
	scratch_file("skills/x/RESOLUTION.md", "answer");
	scratch_file("skills/x/check_it.py", "grader");
	snprintf(fifo, sizeof(fifo), "%s/skills/x/pipe", scratch_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_string_equal(walk_errors(),
			    "skills/x/RESOLUTION.md: hidden grading material is not allowed (matches 'resolution.md')|"
			    "skills/x/check_it.py: hidden grading material is not allowed (matches 'check_*.py')|"
			    "skills/x/pipe: special file (fifo, socket or device) is not allowed|"
			    "skills/x/tests: hidden grading material is not allowed (matches 'tests/')");
}

static void test_bundle__digest_canonical_form_is_pinned(void **state)
{
	struct manifest m = { 0 };
	char *text = NULL;

	(void)state;
	assert_int_equal(manifest_add_file(&m, "skills/b.md", "ab0000000000000000000000000000000000000000000000000000000000cdef"), 0);
	assert_int_equal(manifest_add_file(&m, "agents/a.md", "0000000000000000000000000000000000000000000000000000000000000001"), 0);
	assert_int_equal(manifest_add_link(&m, "skills/l", "b.md"), 0);
	manifest_sort(&m);
	assert_int_equal(manifest_canonical(&m, &text), 0);
	assert_string_equal(text, "{\"files\":{\"agents/a.md\":\"0000000000000000000000000000000000000000000000000000000000000001\","
				  "\"skills/b.md\":\"ab0000000000000000000000000000000000000000000000000000000000cdef\"},"
				  "\"symlinks\":{\"skills/l\":\"b.md\"}}");
	assert_int_equal(manifest_digest(&m), 0);
	/* sha256 of the text above, computed independently (sha256sum) */
	assert_string_equal(m.digest, "bf62d5b1b684a351d9b0cf9c1b83c1ed6b3abc9c18352cc27fdbd609f6a276f9");
	free(text);
	for (size_t i = 0; i < m.nfiles; i++)
		free(m.files[i].rel);
	free(m.files);
	free(m.links[0].rel);
	free(m.links[0].target);
	free(m.links);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bundle__lexical_links),
		cmocka_unit_test(test_bundle__deny_patterns),
		cmocka_unit_test_setup_teardown(test_bundle__links_on_disk, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_bundle__link_through_a_linked_directory, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_bundle__hidden_material_and_special_files, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_bundle__digest_canonical_form_is_pinned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
