/* SPDX-License-Identifier: MIT */
/* test_dynlib.c: the loader behind every library proctor opens on first use (libcrypto,
 * libcap-ng): a missing library and a missing symbol are errors that leave no pointer set, and a
 * present library resolves to the very functions the dynamic linker would bind. */
#include "helpers.h"

#include "../../src/lib/dynlib.h"

typedef pid_t (*getpid_fn)(void);
typedef size_t (*strlen_fn)(const char *);

static void test_dynlib__missing_library_is_elibacc(void **state)
{
	getpid_fn gp = (getpid_fn)(uintptr_t)1; /* not NULL: the failure must clear it */
	const struct dynlib_sym syms[] = { { "getpid", &gp } };

	(void)state;
	assert_int_equal(dynlib_open("libproctor-no-such-library.so.0", syms, 1), -ELIBACC);
	assert_null(gp);
}

/* A file that exists under the name but is not a library fails the same way: the caller cannot
 * be handed something it did not ask for. */
static void test_dynlib__not_a_library_is_elibacc(void **state)
{
	const char *path = scratch_file("libfake.so.0", "not an ELF object\n");
	getpid_fn gp = NULL;
	const struct dynlib_sym syms[] = { { "getpid", &gp } };

	(void)state;
	assert_int_equal(dynlib_open(path, syms, 1), -ELIBACC);
	assert_null(gp);
}

/* All or nothing: the symbols resolved before the missing one are cleared again. */
static void test_dynlib__missing_symbol_is_elibbad_and_clears_all(void **state)
{
	getpid_fn gp = NULL;
	strlen_fn sl = (strlen_fn)(uintptr_t)1;
	void (*none)(void) = (void (*)(void))(uintptr_t)1;
	const struct dynlib_sym syms[] = {
		{ "getpid", &gp },
		{ "proctor_no_such_symbol", &none },
		{ "strlen", &sl },
	};

	(void)state;
	assert_int_equal(dynlib_open("libc.so.6", syms, 3), -ELIBBAD);
	assert_null(gp);
	assert_null(none);
	assert_null(sl);
}

static void test_dynlib__present_library_resolves_working_functions(void **state)
{
	getpid_fn gp = NULL;
	strlen_fn sl = NULL;
	const struct dynlib_sym syms[] = { { "getpid", &gp }, { "strlen", &sl } };

	(void)state;
	assert_int_equal(dynlib_open("libc.so.6", syms, 2), 0);
	assert_non_null(gp);
	assert_non_null(sl);
	assert_int_equal(gp(), getpid());
	assert_int_equal(sl("proctor"), 7);
}

/* The libraries proctor actually opens, by the names it uses (hash.c, priv/drop.c): installed
 * with the build dependencies, and carrying the functions resolved from them. */
static void test_dynlib__proctor_libraries_resolve(void **state)
{
	void *a = NULL, *b = NULL;
	const struct dynlib_sym capng[] = { { "capng_clear", &a }, { "capng_apply", &b } };
	const struct dynlib_sym evp[] = { { "EVP_sha256", &a }, { "EVP_DigestFinal_ex", &b } };

	(void)state;
	assert_int_equal(dynlib_open("libcap-ng.so.0", capng, 2), 0);
	assert_true(a && b);
	assert_int_equal(dynlib_open("libcrypto.so.3", evp, 2), 0);
	assert_true(a && b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dynlib__missing_library_is_elibacc),
		cmocka_unit_test_setup_teardown(test_dynlib__not_a_library_is_elibacc, scratch_setup, scratch_teardown),
		cmocka_unit_test(test_dynlib__missing_symbol_is_elibbad_and_clears_all),
		cmocka_unit_test(test_dynlib__present_library_resolves_working_functions),
		cmocka_unit_test(test_dynlib__proctor_libraries_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
