/* SPDX-License-Identifier: MIT */
/* test_bundle.c: symlink validation (lexical, on disk, and in the staged tree), deny patterns,
 * limits, hard links, escaped names, and the manifest's canonical digest form (a contract: pinned
 * bytes, with and without "executable"). */
#include "helpers.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../../src/bundle/build.h"
#include "../../src/bundle/manifest.h"
#include "../../src/bundle/stage.h"
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

/* The errors' text, joined by '|'. */
static const char *diag_text(const struct diag *d)
{
	static char out[4096];
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < d->n && off < sizeof(out); i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s", i ? "|" : "", d->msgs[i].text);
	return out;
}

/* Walk the scratch tree within `lim` (NULL: defaults); the errors' text, and *ret_r the result. */
static const char *walk_errors_lim(const struct bundle_limits *lim, int *ret_r)
{
	struct manifest *m = NULL;
	struct diag d;
	const char *out;
	int r;

	diag_init(&d);
	r = lim ? bundle_walk_limited(scratch_dir, lim, true, &d, &m) : bundle_walk(scratch_dir, &dflt, &d, &m);
	if (ret_r)
		*ret_r = r;
	out = diag_text(&d);
	manifest_free(m);
	diag_free(&d);
	return out;
}

static const char *walk_errors(void)
{
	return walk_errors_lim(NULL, NULL);
}

static int bundle_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s' 2>/dev/null", scratch_dir);
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	if (system(cmd) != 0) {
		/* nothing to make writable */
	}
	return scratch_teardown(state);
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
	ln("../outside", "skills/escape");     /* lexically outside: refused itself */
	ln("escape/secret", "skills/through"); /* lexically inside, but through that link */
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
	assert_int_equal(manifest_add_file(&m, "skills/b.md",
					   "ab0000000000000000000000000000000000000000000000000000000000cdef"),
			 0);
	assert_int_equal(manifest_add_file(&m, "agents/a.md",
					   "0000000000000000000000000000000000000000000000000000000000000001"),
			 0);
	assert_int_equal(manifest_add_link(&m, "skills/l", "b.md"), 0);
	manifest_sort(&m);
	assert_int_equal(manifest_canonical(&m, &text), 0);
	assert_string_equal(
		text,
		"{\"files\":{\"agents/a.md\":\"0000000000000000000000000000000000000000000000000000000000000001\","
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

static const char *esc(const char *s)
{
	static char out[512];
	char *e = bundle_escape(s);

	assert_non_null(e);
	snprintf(out, sizeof(out), "%s", e);
	free(e);
	return out;
}

static void test_bundle__names_are_escaped_in_messages(void **state)
{
	struct diag d;

	(void)state;
	assert_string_equal(esc("skills/a.md"), "skills/a.md");
	assert_string_equal(esc("a\nb\tc\rd"), "a\\nb\\tc\\rd");
	assert_string_equal(esc("\x1b]0;pwn\a"), "\\x1b]0;pwn\\x07");
	assert_string_equal(esc("back\\slash\x7f"), "back\\\\slash\\x7f");
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93"); /* printable UTF-8 kept */
	assert_string_equal(esc("csi\xc2\x9b"
				"31m"),
			    "csi\\u009b31m");                                    /* 8-bit CSI */
	assert_string_equal(esc("txt.\xe2\x80\xaegpj.sh"), "txt.\\u202egpj.sh"); /* RIGHT-TO-LEFT OVERRIDE */
	assert_string_equal(esc("bad\xff\xc3("), "bad\\xff\\xc3(");              /* invalid UTF-8 */
	assert_string_equal(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");             /* a surrogate */
	diag_init(&d);
	bundle_diag(&d, "%s: %s", "skills/x\n\x1b[2J", "why");
	assert_int_equal(d.errors, 1);
	assert_string_equal(d.msgs[0].text, "skills/x\\n\\x1b[2J: why");
	diag_free(&d);
}

static void sparse(const char *rel, off_t size)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", scratch_dir, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static void test_bundle__size_limits_are_checked_before_reading(void **state)
{
	struct bundle_limits lim = { 0 };
	int r = 0;

	(void)state;
	mkd("skills");
	scratch_file("skills/a.md", "0123456789");
	scratch_file("skills/b.md", "0123456789");
	/* The default file limit (100 MiB) refuses a sparse file just over it, unread. */
	sparse("skills/big", (off_t)BUNDLE_DEFAULT_MAX_FILE_BYTES + 1);
	assert_string_equal(walk_errors_lim(&lim, &r),
			    "skills/big: 104857601 bytes, over the file size limit of 104857600 (--max-file-size)");
	assert_int_equal(r, -EFBIG);
	lim.max_file_bytes = 200ull << 20; /* raised: then the total (set low) refuses it */
	lim.max_total_bytes = 100;
	assert_string_equal(walk_errors_lim(&lim, &r), "skills/big: the files add up to more than the total size "
						       "limit of 100 bytes (--max-total-size)");
	assert_int_equal(r, -EFBIG);
	lim.max_total_bytes = 0;
	lim.max_file_bytes = 9;
	assert_string_equal(walk_errors_lim(&lim, &r),
			    "skills/a.md: 10 bytes, over the file size limit of 9 (--max-file-size)|"
			    "skills/b.md: 10 bytes, over the file size limit of 9 (--max-file-size)|"
			    "skills/big: 104857601 bytes, over the file size limit of 9 (--max-file-size)");
}

static void test_bundle__count_and_depth_limits(void **state)
{
	struct bundle_limits lim = { .max_files = 3 };
	int r = 0;

	(void)state;
	mkd("skills");
	mkd("skills/d1");
	mkd("skills/d1/d2");
	scratch_file("skills/a.md", "a");
	scratch_file("skills/d1/d2/deep.md", "d");
	/* skills, skills/a.md, skills/d1, then one too many: the walk stops at the first over. */
	assert_string_equal(walk_errors_lim(&lim, &r),
			    "skills/d1/d2: more than 3 entries (files, symlinks and directories; --max-files)");
	assert_int_equal(r, -EFBIG);
	lim.max_files = 5;
	assert_string_equal(walk_errors_lim(&lim, &r), "");
	assert_int_equal(r, 0);
	lim.max_depth = 2;
	assert_string_equal(walk_errors_lim(&lim, &r), "skills/d1/d2: nested deeper than 2 directories (--max-depth)");
	assert_int_equal(r, -EFBIG);
}

static void test_bundle__hard_links_are_refused(void **state)
{
	char a[512], b[512];

	(void)state;
	mkd("skills");
	scratch_file("skills/a.md", "a");
	snprintf(a, sizeof(a), "%s/skills/a.md", scratch_dir);
	snprintf(b, sizeof(b), "%s/outside.md", scratch_dir);
	assert_int_equal(link(a, b), 0); /* the other name is outside the allowed entries */
	assert_string_equal(walk_errors(), "skills/a.md: hard-linked file (2 links) is not allowed: it can be "
					   "changed through another name");
}

/* A manifest a racing walk can produce (each link was checked against the tree as it was at
 * that moment): skills/x/1/.../16/z was a directory when skills/e was checked through it, then
 * became a symlink to skills. Lexically each is inside skills; in the staged tree e climbs 17
 * levels above the bundle and reaches /etc/passwd. */
static void race_manifest(struct manifest *m, char *deep, size_t deep_len)
{
	char e_target[512] = "x", z_target[256] = "..";
	int off = snprintf(deep, deep_len, "skills/x");

	for (int i = 1; i <= 16; i++) {
		off += snprintf(deep + off, deep_len - (size_t)off, "/%d", i);
		snprintf(e_target + strlen(e_target), sizeof(e_target) - strlen(e_target), "/%d", i);
		strcat(z_target, "/..");
	}
	strcat(e_target, "/z");
	for (int i = 0; i < 18; i++) /* back up to skills, lexically */
		strcat(e_target, "/..");
	strcat(e_target, "/etc/passwd");
	snprintf(deep + off, deep_len - (size_t)off, "/z");
	assert_int_equal(manifest_add_link(m, "skills/e", e_target), 0);
	assert_int_equal(manifest_add_link(m, deep, z_target), 0);
	manifest_sort(m);
}

static void test_bundle__staged_tree_catches_a_link_checked_against_a_changing_source(void **state)
{
	struct manifest *m = calloc(1, sizeof(*m));
	char src[512], dest[512], deep[512], *lex = NULL, path[1024], real[4096];
	const char *why = NULL;
	struct diag d;

	(void)state;
	assert_non_null(m);
	snprintf(src, sizeof(src), "%s/src", scratch_dir);
	snprintf(dest, sizeof(dest), "%s/dest", scratch_dir);
	mkd("src");
	race_manifest(m, deep, sizeof(deep));
	/* Each link alone passes the lexical rule: that is why the walk let them through. */
	for (size_t i = 0; i < m->nlinks; i++) {
		assert_int_equal(bundle_link_lexical(&dflt, m->links[i].rel, m->links[i].target, &lex, &why), 0);
		free(lex);
	}
	diag_init(&d);
	assert_int_equal(bundle_stage(src, dest, m, &d), -EIO);
	assert_string_equal(diag_text(&d), "unsafe symlink: skills/e (escapes the bundle)");
	assert_int_equal(access(dest, F_OK), -1);
	snprintf(path, sizeof(path), "%s.manifest.json", dest);
	assert_int_equal(access(path, F_OK), -1);
	diag_free(&d);
	/* What it would have staged: the kernel resolves e to /etc/passwd. */
	assert_int_equal(mkdir(dest, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s", dest, deep);
	*strrchr(path, '/') = '\0';
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	assert_int_equal(system((snprintf(real, sizeof(real), "mkdir -p '%s'", path), real)), 0);
	for (size_t i = 0; i < m->nlinks; i++) {
		snprintf(path, sizeof(path), "%s/%s", dest, m->links[i].rel);
		assert_int_equal(symlink(m->links[i].target, path), 0);
	}
	snprintf(path, sizeof(path), "%s/skills/e", dest);
	assert_non_null(realpath(path, real));
	assert_string_equal(real, "/etc/passwd");
	manifest_free(m);
}

static void test_bundle__build_stages_executables_0555_and_hashes_once(void **state)
{
	char src[512], dest[512], path[1024];
	struct manifest *m = NULL;
	struct stat st;
	struct diag d;

	(void)state;
	snprintf(src, sizeof(src), "%s/src", scratch_dir);
	snprintf(dest, sizeof(dest), "%s/dest", scratch_dir);
	mkd("src");
	mkd("src/skills");
	mkd("src/skills/empty");
	scratch_file("src/skills/run.sh", "#!/bin/sh\n");
	scratch_file("src/skills/SKILL.md", "x");
	snprintf(path, sizeof(path), "%s/skills/run.sh", src);
	assert_int_equal(chmod(path, 0744), 0);
	diag_init(&d);
	assert_int_equal(bundle_build(src, dest, NULL, &d, &m), 0);
	assert_string_equal(diag_text(&d), "");
	assert_true(manifest_file(m, "skills/run.sh")->exec);
	assert_false(manifest_file(m, "skills/SKILL.md")->exec);
	/* sha256 of "x", as sha256sum prints it: the hash of the bytes copied */
	assert_string_equal(manifest_file(m, "skills/SKILL.md")->sha256,
			    "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
	snprintf(path, sizeof(path), "%s/skills/run.sh", dest);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	snprintf(path, sizeof(path), "%s/skills/SKILL.md", dest);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	snprintf(path, sizeof(path), "%s/skills/empty", dest); /* empty directories are not staged */
	assert_int_equal(access(path, F_OK), -1);
	manifest_free(m);
	diag_free(&d);
}

static void test_bundle__canonical_form_fails_closed(void **state)
{
	struct manifest m = { 0 };
	char *text = NULL;
	static const char h[] = "0000000000000000000000000000000000000000000000000000000000000001";

	(void)state;
	assert_int_equal(manifest_add_file(&m, "skills/a.md", h), 0);
	assert_int_equal(manifest_add_file(&m, "skills/b\xff.md", h), 0); /* jansson refuses the key */
	manifest_sort(&m);
	assert_int_equal(manifest_canonical(&m, &text), -EINVAL);
	free(m.files[1].rel);
	m.files[1].rel = strdup("skills/a.md"); /* a duplicate would collapse into one key */
	assert_int_equal(manifest_canonical(&m, &text), -EINVAL);
	free(m.files[1].rel);
	m.files[1].rel = strdup("skills/b.md");
	m.files[1].sha256[0] = '\0'; /* not hashed yet */
	assert_int_equal(manifest_canonical(&m, &text), -EINVAL);
	assert_null(manifest_json(&m));
	memcpy(m.files[1].sha256, h, sizeof(h));
	assert_int_equal(manifest_canonical(&m, &text), 0);
	free(text);
	for (size_t i = 0; i < m.nfiles; i++)
		free(m.files[i].rel);
	free(m.files);
}

static void test_bundle__digest_with_executables_is_pinned(void **state)
{
	struct manifest m = { 0 };
	char *text = NULL;

	(void)state;
	assert_int_equal(manifest_add_file(&m, "skills/run.sh",
					   "ab0000000000000000000000000000000000000000000000000000000000cdef"),
			 0);
	assert_int_equal(manifest_add_file(&m, "agents/a.md",
					   "0000000000000000000000000000000000000000000000000000000000000001"),
			 0);
	m.files[0].exec = true;
	manifest_sort(&m);
	assert_int_equal(manifest_canonical(&m, &text), 0);
	assert_string_equal(
		text, "{\"executable\":[\"skills/run.sh\"],"
		      "\"files\":{\"agents/a.md\":\"0000000000000000000000000000000000000000000000000000000000000001\","
		      "\"skills/run.sh\":\"ab0000000000000000000000000000000000000000000000000000000000cdef\"},"
		      "\"symlinks\":{}}");
	assert_int_equal(manifest_digest(&m), 0);
	/* sha256 of the text above, computed independently (sha256sum) */
	assert_string_equal(m.digest, "e0f5c2c82f8258b408805803c47ce1cd274e9c37b884c14db6de954b9df1cd1f");
	free(text);
	for (size_t i = 0; i < m.nfiles; i++)
		free(m.files[i].rel);
	free(m.files);
}

/* A manifest whose names leave the bundle, or name one path as both a file and a link, is
 * refused by the loader even with a digest recomputed over it (the digest has no key). */
static void test_bundle__load_refuses_names_outside_the_bundle(void **state)
{
	static const char *const bad[][2] = {
		{ "../../etc/passwd", NULL },
		{ "/etc/passwd", NULL },
		{ "a//b", NULL },
		{ "a/./b", NULL },
		{ "a/", NULL },
		{ "", NULL },
		{ "ok.md", "ok.md" },
		{ NULL, "../out" },
	};
	const char sum[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct manifest *m = calloc(1, sizeof(*m)), *back = NULL;
		char path[] = "/tmp/proctor-unit-manifest-XXXXXX";
		struct diag d;
		json_t *doc;
		int fd;

		assert_non_null(m);
		assert_int_equal(manifest_add_file(m, "skills/fine.md", sum), 0);
		if (bad[i][0])
			assert_int_equal(manifest_add_file(m, bad[i][0], sum), 0);
		if (bad[i][1])
			assert_int_equal(manifest_add_link(m, bad[i][1], "skills/fine.md"), 0);
		manifest_sort(m);
		assert_int_equal(manifest_digest(m), 0);
		assert_non_null(doc = manifest_json(m));
		assert_true((fd = mkstemp(path)) >= 0);
		assert_int_equal(json_dumpfd(doc, fd, JSON_SORT_KEYS), 0);
		close(fd);
		json_decref(doc);
		diag_init(&d);
		assert_int_equal(manifest_load(path, &d, &back), -EINVAL);
		assert_null(back);
		assert_true(d.errors > 0);
		diag_free(&d);
		unlink(path);
		manifest_free(m);
	}
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
		cmocka_unit_test(test_bundle__names_are_escaped_in_messages),
		cmocka_unit_test_setup_teardown(test_bundle__size_limits_are_checked_before_reading, scratch_setup,
						bundle_teardown),
		cmocka_unit_test_setup_teardown(test_bundle__count_and_depth_limits, scratch_setup, bundle_teardown),
		cmocka_unit_test_setup_teardown(test_bundle__hard_links_are_refused, scratch_setup, bundle_teardown),
		cmocka_unit_test_setup_teardown(
			test_bundle__staged_tree_catches_a_link_checked_against_a_changing_source, scratch_setup,
			bundle_teardown),
		cmocka_unit_test_setup_teardown(test_bundle__build_stages_executables_0555_and_hashes_once,
						scratch_setup, bundle_teardown),
		cmocka_unit_test(test_bundle__canonical_form_fails_closed),
		cmocka_unit_test(test_bundle__digest_with_executables_is_pinned),
		cmocka_unit_test(test_bundle__load_refuses_names_outside_the_bundle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
