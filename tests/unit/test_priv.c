/* SPDX-License-Identifier: MIT */
/* test_priv.c: the /proc/self/status parser (real and malformed texts), identity expectations,
 * and the Landlock rights each rule kind grants at each ABI. */
#include "helpers.h"

#include <linux/landlock.h>

#include "../../src/priv/drop.h"
#include "../../src/priv/identity.h"

static const char status_text[] =
	"Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\nPid:\t42\nPPid:\t1\n"
	"Uid:\t2000\t2000\t2000\t2000\nGid:\t2000\t2001\t2000\t2000\nFDSize:\t64\nGroups:\t2200 2300 \n"
	"CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
	"CapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";

static void test_identity__parses_a_real_status(void **state)
{
	struct identity id;
	const char *field;

	(void)state;
	assert_int_equal(identity_parse(status_text, strlen(status_text), &id, &field), 0);
	assert_int_equal(id.uid[3], 2000);
	assert_int_equal(id.gid[1], 2001);
	assert_int_equal(id.ngroups, 2);
	assert_int_equal(id.groups[1], 2300);
	assert_true(id.cap_bnd == 0x1fffeffffffULL);
	assert_int_equal(id.cap_eff, 0);
	assert_int_equal(id.no_new_privs, 1);
	assert_int_equal(id.seccomp, 2);
}

static void expect_malformed(const char *from, const char *to, const char *field_name)
{
	char text[sizeof(status_text) + 64];
	const char *at = strstr(status_text, from), *field;
	struct identity id;

	assert_non_null(at);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - status_text), status_text, to, at + strlen(from));
	assert_int_equal(identity_parse(text, strlen(text), &id, &field), -EINVAL);
	assert_string_equal(field, field_name);
}

static void test_identity__malformed_status_is_refused(void **state)
{
	(void)state;
	expect_malformed("Uid:\t2000\t2000\t2000\t2000\n", "", "Uid");
	expect_malformed("Uid:\t2000\t2000\t2000\t2000\n", "Uid:\t2000\t2000\t2000\n", "Uid");
	expect_malformed("Gid:\t2000\t2001\t2000\t2000\n", "Gid:\t2000\t2001\t2000\tx\n", "Gid");
	expect_malformed("Groups:\t2200 2300 \n", "Groups:\t22a0\n", "Groups");
	expect_malformed("CapEff:\t0000000000000000\n", "CapEff:\tzz\n", "CapEff");
	expect_malformed("CapAmb:\t0000000000000000\n", "", "CapAmb");
	expect_malformed("NoNewPrivs:\t1\n", "NoNewPrivs:\t7\n", "NoNewPrivs");
	expect_malformed("Seccomp:\t2\n", "", "Seccomp");
}

static void test_identity__expectations_report_each_mismatch(void **state)
{
	struct identity id;
	struct identity_expect e = { .uid = true, .want_uid = 2000, .gid = true, .want_gid = 2000, .groups = true,
				     .want_groups = { 2300, 2200 }, .nwant_groups = 2, .no_caps = true, .nnp = true,
				     .landlock = true };
	const char *field;
	char *report = NULL;

	(void)state;
	assert_int_equal(identity_parse(status_text, strlen(status_text), &id, &field), 0);
	id.landlock_enforced = false;
	assert_int_equal(identity_check(&id, &e, &report), 3); /* gid slot 1, bounding caps, Landlock */
	assert_non_null(strstr(report, "gid slot 1 is 2001, expected 2000"));
	assert_non_null(strstr(report, "capabilities are not all zero"));
	assert_non_null(strstr(report, "Landlock is not enforced"));
	free(report);
	e.want_groups[1] = 2201;
	e.gid = e.no_caps = e.landlock = false;
	assert_int_equal(identity_check(&id, &e, &report), 1);
	assert_non_null(strstr(report, "supplementary groups are not the expected set"));
	free(report);
}

static void test_landlock__rule_rights_by_kind_and_abi(void **state)
{
	(void)state;
	assert_true(landlock_rule_access(LANDLOCK_RO, false, 7) == LANDLOCK_ACCESS_FS_READ_FILE);
	assert_true(landlock_rule_access(LANDLOCK_RO, true, 7) ==
		    (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR));
	assert_true(landlock_rule_access(LANDLOCK_EXEC, true, 7) ==
		    (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE));
	assert_true(landlock_rule_access(LANDLOCK_RW, true, 7) == landlock_handled_fs(7));
	/* a file rule may carry only file rights, or the kernel refuses the rule */
	assert_int_equal(landlock_rule_access(LANDLOCK_RW, false, 7) & LANDLOCK_ACCESS_FS_MAKE_REG, 0);
	assert_true(landlock_rule_access(LANDLOCK_RW, false, 7) & LANDLOCK_ACCESS_FS_WRITE_FILE);
	/* the handled set grows with the ABI: REFER at 2, TRUNCATE (1<<14) at 3, IOCTL_DEV (1<<15) at 5 */
	assert_int_equal(landlock_handled_fs(1) & LANDLOCK_ACCESS_FS_REFER, 0);
	assert_true(landlock_handled_fs(2) & LANDLOCK_ACCESS_FS_REFER);
	assert_int_equal(landlock_handled_fs(2) & (1ULL << 14), 0);
	assert_true(landlock_handled_fs(3) & (1ULL << 14));
	assert_int_equal(landlock_handled_fs(4) & (1ULL << 15), 0);
	assert_true(landlock_handled_fs(5) & (1ULL << 15));
	assert_int_equal(landlock_handled_fs(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity__parses_a_real_status),
		cmocka_unit_test(test_identity__malformed_status_is_refused),
		cmocka_unit_test(test_identity__expectations_report_each_mismatch),
		cmocka_unit_test(test_landlock__rule_rights_by_kind_and_abi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
