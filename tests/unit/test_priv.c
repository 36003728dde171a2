/* SPDX-License-Identifier: MIT */
/* test_priv.c: the /proc/self/status parser (real and malformed texts), identity expectations,
 * the Landlock rights each rule kind grants at each ABI, the ordered drop and its proof (as
 * root), the spawn helpers (environment, fd closing, failure reports, the pid-1 init), terminal
 * escaping, and reap's status parser and cgroup kill. */
#include "helpers.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../../src/lib/fd.h"
#include "../../src/lib/util.h"
#include "../../src/priv/drop.h"
#include "../../src/priv/identity.h"
#include "../../src/priv/reap.h"
#include "../../src/priv/spawn.h"

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
	struct identity_expect e = { .uid = true,
				     .want_uid = 2000,
				     .gid = true,
				     .want_gid = 2000,
				     .groups = true,
				     .want_groups = { 2300, 2200 },
				     .nwant_groups = 2,
				     .no_caps = true,
				     .nnp = true,
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

/* `text` as a file at offset 0, for drop_prove() to read as its /proc/self/status. */
static int status_fd(const char *text, size_t len)
{
	int fd = memfd_create("status", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	return fd;
}

/* status_text as the kernel would show it after `proctor drop --uid 2000 --gid 2000 --groups
 * 2200,2300`: gid slot 1 and the bounding set put right. */
static void dropped_status(char *out, size_t n)
{
	static const char gid[] = "Gid:\t2000\t2000\t2000\t2000\n", bnd[] = "CapBnd:\t0000000000000000\n";

	assert_true(n > sizeof(status_text));
	snprintf(out, n, "%s", status_text);
	/* overwrite the lines in place, without their terminating NULs */
	memcpy(strstr(out, "Gid:"), gid, sizeof(gid) - 1);
	memcpy(strstr(out, "CapBnd:"), bnd, sizeof(bnd) - 1);
}

/* drop_prove() trusts nothing but the status it reads: each field that differs from the request
 * fails the proof, and so does a status it cannot parse. The drop itself never gets this far
 * wrong on a sound kernel, so only a forged status shows that the proof really looks. */
static void test_drop__prove_refuses_a_forged_status(void **state)
{
	static const struct {
		const char *from, *to;
	} bad[] = {
		{ "Uid:\t2000\t2000\t2000\t2000\n", "Uid:\t2000\t2000\t0\t2000\n" },
		{ "Gid:\t2000\t2000\t2000\t2000\n", "Gid:\t2000\t0\t2000\t2000\n" },
		{ "Groups:\t2200 2300 \n", "Groups:\t2200 2300 0\n" },
		{ "CapEff:\t0000000000000000\n", "CapEff:\t0000000000000001\n" },
		{ "CapBnd:\t0000000000000000\n", "CapBnd:\t0000000000200000\n" },
		{ "CapAmb:\t0000000000000000\n", "CapAmb:\t0000000000200000\n" },
		{ "NoNewPrivs:\t1\n", "NoNewPrivs:\t0\n" },
	};
	const struct drop_opts o = { .uid = 2000, .gid = 2000, .groups = { 2200, 2300 }, .ngroups = 2 };
	char good[sizeof(status_text) + 64], text[sizeof(good) + 64];
	const char *step = NULL, *at;
	int fd;

	(void)state;
	dropped_status(good, sizeof(good));
	fd = status_fd(good, strlen(good));
	assert_int_equal(drop_prove(&o, 2000, 2000, fd, &step), 0);
	close(fd);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_non_null(at = strstr(good, bad[i].from));
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, bad[i].to, at + strlen(bad[i].from));
		fd = status_fd(text, strlen(text));
		step = NULL;
		if (drop_prove(&o, 2000, 2000, fd, &step) != -EPERM)
			fail_msg("forged status %zu (%s) passed the proof", i, bad[i].to);
		assert_string_equal(step, "proof: /proc/self/status does not match the requested identity");
		close(fd);
	}
	/* Cut off before the capability lines: not a status the proof can vouch for. */
	fd = status_fd(good, (size_t)(strstr(good, "CapInh:") - good));
	assert_int_equal(drop_prove(&o, 2000, 2000, fd, &step), -EIO);
	assert_string_equal(step, "proof: /proc/self/status could not be read");
	close(fd);
}

/* A status that matches is not enough: the old ids must be out of reach. As root they are not
 * (setresuid(0) succeeds), so a proof that claims to drop from root must refuse. */
static void test_drop__prove_refuses_regainable_ids(void **state)
{
	const struct drop_opts o = { .uid = 2000, .gid = 2000, .groups = { 2200, 2300 }, .ngroups = 2 };
	char good[sizeof(status_text) + 64];
	const char *step = NULL;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip(); /* an unprivileged process cannot regain uid 0 whatever the code does */
	dropped_status(good, sizeof(good));
	fd = status_fd(good, strlen(good));
	assert_int_equal(drop_prove(&o, 0, 2000, fd, &step), -EPERM);
	assert_string_equal(step, "proof: the old uid could be regained");
	assert_int_equal(drop_prove(&o, 2000, 0, fd, &step), -EPERM);
	assert_string_equal(step, "proof: the old gid could be regained");
	assert_int_equal(geteuid(), 0); /* setresuid(0, 0, 0) as root changed nothing */
	close(fd);
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

static void test_spawn__env_starts_clean_keeps_and_replaces(void **state)
{
	char *from[] = { "PATH=/evil", "HOME=/root", "A=1", "SECRET=x", NULL };
	const char *keep[] = { "A", "MISSING" }, *set[] = { "B=2", "PATH=/bin", "A=3" };
	struct strv env = { 0 };

	(void)state;
	assert_int_equal(spawn_env_build(from, keep, 2, set, 3, &env), 0);
	assert_int_equal(env.n, 3);
	assert_string_equal(env.v[0], "PATH=/bin");
	assert_string_equal(env.v[1], "A=3");
	assert_string_equal(env.v[2], "B=2");
	assert_null(env.v[3]);
	strv_free(&env);
	assert_int_equal(spawn_env_build(from, NULL, 0, NULL, 0, &env), 0);
	assert_int_equal(env.n, 1);
	assert_string_equal(env.v[0], SPAWN_DEFAULT_PATH);
	strv_free(&env);
}

static void test_spawn__env_refuses_bad_entries_and_excess(void **state)
{
	const char *bad_keep[] = { "A=B" }, *bad_set[] = { "NOEQUALS" }, *empty_key[] = { "=x" };
	static char big[SPAWN_MAX_ENV_BYTES];
	const char *huge[] = { big };
	struct strv env = { 0 };
	const char **many = calloc(SPAWN_MAX_ENV + 1, sizeof(*many));
	char(*names)[16] = calloc(SPAWN_MAX_ENV + 1, 16);

	(void)state;
	assert_int_equal(spawn_env_build(NULL, bad_keep, 1, NULL, 0, &env), -EINVAL);
	assert_int_equal(spawn_env_build(NULL, NULL, 0, bad_set, 1, &env), -EINVAL);
	assert_int_equal(spawn_env_build(NULL, NULL, 0, empty_key, 1, &env), -EINVAL);
	memset(big, 'v', sizeof(big) - 1);
	big[0] = 'K', big[1] = '=';
	assert_int_equal(spawn_env_build(NULL, NULL, 0, huge, 1, &env), -E2BIG);
	for (size_t i = 0; i < SPAWN_MAX_ENV; i++) {
		snprintf(names[i], 16, "V%zu=1", i);
		many[i] = names[i];
	}
	/* PATH plus SPAWN_MAX_ENV entries is one too many */
	assert_int_equal(spawn_env_build(NULL, NULL, 0, many, SPAWN_MAX_ENV, &env), -E2BIG);
	assert_int_equal(spawn_env_build(NULL, NULL, 0, many, SPAWN_MAX_ENV - 1, &env), 0);
	assert_int_equal(env.n, SPAWN_MAX_ENV);
	strv_free(&env);
	free(many);
	free(names);
}

static void test_spawn__close_fds_keeps_only_the_list(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* in a child: the test runner's own fds stay open */
		int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY), c = open("/dev/null", O_RDONLY);
		int keep[] = { 1, b, 1000 }; /* below 3 and not open: ignored */

		if (a < 3 || spawn_close_fds_except(keep, 3) < 0)
			_exit(10);
		if (fcntl(a, F_GETFD) != -1 || errno != EBADF || fcntl(c, F_GETFD) != -1)
			_exit(11);
		if (fcntl(b, F_GETFD) < 0 || fcntl(0, F_GETFD) < 0 || fcntl(2, F_GETFD) < 0)
			_exit(12);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(spawn_close_fds_except(NULL, SPAWN_MAX_KEEP_FDS + 1), -EINVAL);
}

static void test_spawn__report_carries_step_and_error_or_eof(void **state)
{
	char step[SPAWN_STEP_MAX + 1], longstep[400];
	int p[2], err;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	spawn_report_write(p[1], "--chdir", -EACCES);
	assert_int_equal(spawn_report_read(p[0], step, &err), 0);
	assert_string_equal(step, "--chdir");
	assert_int_equal(err, EACCES);
	memset(longstep, 'x', sizeof(longstep) - 1);
	longstep[sizeof(longstep) - 1] = '\0';
	spawn_report_write(p[1], longstep, 0); /* no error given: still a failure */
	assert_int_equal(spawn_report_read(p[0], step, &err), 0);
	assert_int_equal(strlen(step), SPAWN_STEP_MAX);
	assert_int_equal(err, EPERM);
	close(p[1]);
	assert_int_equal(spawn_report_read(p[0], step, &err), 0); /* EOF: exec succeeded */
	assert_int_equal(err, 0);
	assert_string_equal(step, "");
	close(p[0]);
}

static void test_spawn__exit_code_of_a_wait_status(void **state)
{
	(void)state;
	assert_int_equal(spawn_exit_code(7 << 8), 7);
	assert_int_equal(spawn_exit_code(SIGKILL), 128 + SIGKILL);
	assert_int_equal(spawn_exit_code(SIGTERM | 0x80), 128 + SIGTERM); /* core dumped */
}

/* An init: reaps an orphan-like second child, forwards SIGTERM to main, returns main's status. */
static int run_init(bool send_term)
{
	sigset_t set;
	pid_t main_pid, other;
	int st;

	spawn_forward_sigset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((other = fork()) == 0)
		_exit(3);
	if ((main_pid = fork()) == 0) {
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		if (send_term)
			pause();
		usleep(50000);
		_exit(5);
	}
	{
		/* The other child has exited (not reaped: WNOWAIT) before the init runs, so whether
		 * the init reaps it does not depend on how fast a sanitized child dies. */
		siginfo_t info;

		while (waitid(P_PID, (id_t)other, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	if (send_term)
		kill(getpid(), SIGTERM); /* pending: the init passes it on, it does not die of it */
	if (spawn_init_reap(main_pid, &st) < 0)
		return 100;
	if (waitpid(other, NULL, WNOHANG) != -1 || errno != ECHILD)
		return 101; /* the other child must have been reaped too */
	return spawn_exit_code(st);
}

static void test_spawn__init_reaps_everything_forwards_signals_returns_main_status(void **state)
{
	for (int term = 0; term < 2; term++) {
		pid_t pid = fork();
		int st;

		(void)state;
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(run_init(term));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), term ? 128 + SIGTERM : 5);
	}
}

static void test_escape__controls_backslash_and_bad_utf8(void **state)
{
	char *e;

	(void)state;
	e = str_escape("a\nb\x1b[31m\\\t\x7f\xc2\x9b\xff \xc3\xa9\xe2\x82\xac");
	assert_string_equal(e, "a\\nb\\x1b[31m\\\\\\t\\x7f\\xc2\\x9b\\xff \xc3\xa9\xe2\x82\xac");
	free(e);
	e = str_escape("");
	assert_string_equal(e, "");
	free(e);
}

static void test_reap__status_parse_state_and_every_uid_slot(void **state)
{
	char text[sizeof(status_text) + 1] = "\n", st;
	bool match;

	(void)state;
	strcat(text, status_text);
	assert_int_equal(reap_status_parse(text, 2000, &st, &match), 0);
	assert_int_equal(st, 'S');
	assert_true(match);
	assert_int_equal(reap_status_parse(text, 2001, &st, &match), 0);
	assert_false(match);
	assert_int_equal(reap_status_parse("\nState:\tZ (zombie)\nUid:\t0\t0\t0\t2000\n", 2000, &st, &match), 0);
	assert_int_equal(st, 'Z');
	assert_true(match); /* the fs uid slot counts */
	/* Another sweep in its window, signalling as 2000: root's process, not the agent's. */
	assert_int_equal(reap_status_parse("\nState:\tR\nUid:\t4294967294\t2000\t0\t2000\n", 2000, &st, &match), 0);
	assert_false(match);
	/* The agent cannot get a saved uid of 0: with any other saved uid it is matched. */
	assert_int_equal(reap_status_parse("\nState:\tR\nUid:\t4294967294\t2000\t2000\t2000\n", 2000, &st, &match), 0);
	assert_true(match);
	assert_int_equal(reap_status_parse("\nState:\tR\nUid:\t1\t2\n", 2, &st, &match), -EINVAL);
	assert_int_equal(reap_status_parse("\nUid:\t1\t2\t3\t4\n", 2, &st, &match), -EINVAL);
}

/* A chain that forks to a new pid and exits, over and over, under uid 2990: every member holds
 * the pipe's write end, so EOF on the read end proves every one is dead, which no scan can. The
 * sweep's thread has its identity back afterwards, and the uid it borrows as real uid is refused. */
static void test_reap__uid_sweep_kills_a_fork_chain_and_restores_identity(void **state)
{
	struct reap_result rr;
	uid_t ru, eu, su;
	int p[2], st;
	pid_t pid;
	char c;

	(void)state;
	if (geteuid() != 0)
		skip(); /* needs root to change identity */
	assert_int_equal(reap_uid(REAP_KILL_RUID, 0, 100, &rr), -EINVAL);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the chain's orphans come back to us to be reaped */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		time_t stop = time(NULL) + 10; /* bounded, should this test fail */

		close(p[0]);
		signal(SIGTERM, SIG_IGN);
		if (setresgid(2990, 2990, 2990) < 0 || setresuid(2990, 2990, 2990) < 0)
			_exit(1);
		while (time(NULL) < stop)
			if (fork() != 0)
				_exit(0);
		_exit(0);
	}
	close(p[1]);
	usleep(100 * 1000);
	assert_int_equal(reap_uid(2990, 20, 5000, &rr), 0);
	assert_true(rr.kill_as_uid);
	assert_int_equal(getresuid(&ru, &eu, &su), 0);
	assert_true(ru == 0 && eu == 0 && su == 0);
	assert_int_equal(read(p[0], &c, 1), 0); /* EOF: no member of the chain is left */
	close(p[0]);
	while (waitpid(-1, &st, 0) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* Two sweeps signalling at once, each as its own uid: each sender's real uid is REAP_KILL_RUID
 * during its window, which the other's kill(-1) would reach without the lock. SIGUSR1 ends a
 * process by default, so a sender hit by the other dies of it. */
static void test_reap__concurrent_signals_as_uid_spare_each_other(void **state)
{
	pid_t pid[2];
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			for (int k = 0; k < 3000; k++)
				if (reap_signal_uid((uid_t)(2991 + i), SIGUSR1, 5000) < 0)
					_exit(2);
			_exit(0);
		}
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		if (!WIFEXITED(st))
			fail_msg("sender %d was killed by signal %d", i, WTERMSIG(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

/* The lock directories of reap and run: root's alone, or refused. */
static void test_fd__root_dir_ensure_refuses_what_is_not_roots_alone(void **state)
{
	char dir[64], path[128], cmd[160];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	strcpy(dir, "/tmp/proctor-unit-rootdir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/new", dir);
	assert_int_equal(fd_root_dir_ensure(path), 0); /* created */
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 && st.st_uid == 0);
	assert_int_equal(fd_root_dir_ensure(path), 0); /* there already */
	assert_int_equal(chmod(path, 0733), 0);
	assert_int_equal(fd_root_dir_ensure(path), -EPERM); /* others may write */
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(chown(path, 2990, 0), 0);
	assert_int_equal(fd_root_dir_ensure(path), -EPERM); /* not root's */
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink("/", path), 0);
	assert_int_equal(fd_root_dir_ensure(path), -EPERM); /* a symlink, even to root's */
	snprintf(path, sizeof(path), "%s/file", dir);
	assert_int_equal(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	assert_int_equal(fd_root_dir_ensure(path), -EPERM);
	snprintf(path, sizeof(path), "%s/no/such", dir);
	assert_int_equal(fd_root_dir_ensure(path), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	assert_int_equal(system(cmd), 0);
}

/* A sender holding the lock (wedged, say) costs a sweep at most its wait: the signal is refused
 * with -ETIMEDOUT, and reap_uid still kills, by scans, within its deadline. */
static void test_reap__a_held_lock_bounds_the_wait_and_the_sweep_still_kills(void **state)
{
	struct reap_result rr;
	uint64_t t0;
	pid_t pid;
	int fd, st, p[2], ready[2];
	char c;

	(void)state;
	if (geteuid() != 0)
		skip();
	/* The first send creates the directory and the lock file. */
	assert_int_equal(reap_signal_uid(2991, 0, 1000), 0);
	fd = open(REAP_KILL_LOCK_DIR "/reap.lock", O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	for (t0 = now_mono_ms(); flock(fd, LOCK_EX | LOCK_NB) < 0; usleep(1000)) /* another sweep's */
		assert_true(now_mono_ms() - t0 < 10000);
	t0 = now_mono_ms();
	assert_int_equal(reap_signal_uid(2991, 0, 0), -ETIMEDOUT);
	assert_int_equal(reap_signal_uid(2991, 0, 200), -ETIMEDOUT);
	assert_true(now_mono_ms() - t0 >= 200);
	assert_true(now_mono_ms() - t0 < 5000);

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		close(ready[0]);
		signal(SIGTERM, SIG_IGN); /* only the KILL pass ends it */
		if (setresgid(2990, 2990, 2990) < 0 || setresuid(2990, 2990, 2990) < 0)
			_exit(1);
		close(ready[1]); /* uid 2990 from here on */
		pause();
		_exit(0);
	}
	close(p[1]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 0); /* EOF: the child has its uid (or died) */
	close(ready[0]);
	t0 = now_mono_ms();
	assert_int_equal(reap_uid(2990, 100, 5000, &rr), 0);
	assert_false(rr.kill_as_uid); /* the scans did it */
	assert_true(now_mono_ms() - t0 < 5000);
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(fd); /* releases the lock */
	assert_int_equal(reap_signal_uid(2991, 0, 1000), 0);
}

static void test_reap__cgroup_kill_ends_a_forking_tree(void **state)
{
	struct reap_cgroup cg, other;
	char name[64], root[128];
	size_t left;
	pid_t pid;
	int st, r;

	(void)state;
	if (geteuid() != 0 || reap_cgroup_root(root, sizeof(root)) < 0)
		skip(); /* needs root and a cgroup v2 mount */
	snprintf(name, sizeof(name), "proctor-unit-%d", (int)getpid());
	if (reap_cgroup_create(name, &cg) == -EOPNOTSUPP)
		skip();
	assert_true(cg.dirfd >= 0);
	assert_int_equal(reap_cgroup_create("a/b", &other), -EINVAL);
	assert_int_equal(reap_cgroup_create(name, &other), -EEXIST);
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the runner's orphans come back to us to be reaped */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		time_t stop = time(NULL) + 5; /* bounded, should this test fail */

		if (reap_cgroup_add(&cg, 0) < 0)
			_exit(1);
		while (time(NULL) < stop) /* a runner: a new pid every iteration */
			if (fork() != 0)
				_exit(0);
		_exit(2);
	}
	usleep(100000);
	r = reap_cgroup_kill(&cg, 2000, &left);
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	assert_int_equal(r, 0);
	assert_int_equal(left, 0);
	assert_int_equal(reap_cgroup_destroy(&cg), 0);
	assert_int_equal(cg.dirfd, -1);
}

/* drop_apply() as root in a child, to uid/gid 2991 with one supplementary group and Landlock
 * read-write on one scratch directory: afterwards the kernel's account is the one asked for,
 * root cannot be regained, and the filesystem outside the rules is refused. Each failed check
 * is one bit of the child's exit status. */
enum {
	DROP_BAD_APPLY = 1,
	DROP_BAD_IDS = 2,
	DROP_BAD_REGAIN = 4,
	DROP_BAD_RW = 8,
	DROP_BAD_OUTSIDE = 16,
	DROP_BAD_ROOT = 32,
	DROP_BAD_CAPS = 64
};

static int drop_child_checks(const struct drop_opts *o)
{
	const char *step = NULL;
	char path[512];
	gid_t groups[4];
	uid_t ru, eu, su;
	int bad = 0, fd;

	if (drop_apply(o, &step) < 0) {
		fprintf(stderr, "drop_apply: %s\n", step);
		return DROP_BAD_APPLY;
	}
	if (getresuid(&ru, &eu, &su) < 0 || ru != 2991 || eu != 2991 || su != 2991 || getegid() != 2991 ||
	    getgroups(4, groups) != 1 || groups[0] != 2992)
		bad |= DROP_BAD_IDS;
	if (setuid(0) == 0 || setresgid(0, 0, 0) == 0)
		bad |= DROP_BAD_REGAIN;
	snprintf(path, sizeof(path), "%s/inside", scratch_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		bad |= DROP_BAD_RW;
	else
		close(fd);
	/* /tmp itself is writable by everyone: only Landlock can refuse this. */
	snprintf(path, sizeof(path), "%s-outside", scratch_dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0 || errno != EACCES) {
		bad |= DROP_BAD_OUTSIDE;
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
	}
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 || errno != EACCES) {
		bad |= DROP_BAD_ROOT;
		if (fd >= 0)
			close(fd);
	}
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		bad |= DROP_BAD_CAPS;
	return bad;
}

static void test_drop__apply_proves_ids_caps_and_landlock(void **state)
{
	struct drop_opts o = { .uid = 2991, .gid = 2991, .groups = { 2992 }, .ngroups = 1 };
	char build_obj[600], exe[512];
	const char *step = NULL;
	ssize_t n;
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0 || landlock_abi() == 0)
		skip(); /* needs root to change identity, and a kernel with Landlock */
	assert_int_equal(chmod(scratch_dir, 0777), 0);
	/* Refused before anything changes: root as the target, and a rule path that is missing. */
	o.uid = 0;
	assert_int_equal(drop_prepare(&o, &step), -EPERM);
	assert_string_equal(step, "target uid 0 (root) refused without --allow-root-target");
	o.uid = 2991;
	o.ll[o.nll++] = (struct landlock_path){ .path = "/nonexistent/proctor", .kind = LANDLOCK_RW, .fd = -1 };
	assert_int_equal(drop_prepare(&o, &step), -ENOENT);
	assert_string_equal(step, "/nonexistent/proctor");
	o.nll = 0;
	o.ll[o.nll++] = (struct landlock_path){ .path = scratch_dir, .kind = LANDLOCK_RW, .fd = -1 };
	/* Not part of what is tested: lets a coverage build (make coverage) write the child's
	 * counts beside the objects, BUILD/obj, found from this test's own path BUILD/tests/. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(build_obj, sizeof(build_obj), "%s/obj", exe);
	if (access(build_obj, F_OK) == 0)
		o.ll[o.nll++] = (struct landlock_path){ .path = build_obj, .kind = LANDLOCK_RW, .fd = -1 };
	assert_int_equal(drop_prepare(&o, &step), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	/* _exit: under ASan, LeakSanitizer cannot read /proc from inside the Landlock domain (make
	 * coverage still writes the counts, see scripts/coverage_flush.c). */
	if (pid == 0)
		_exit(drop_child_checks(&o));
	for (size_t i = 0; i < o.nll; i++)
		close(o.ll[i].fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity__parses_a_real_status),
		cmocka_unit_test(test_identity__malformed_status_is_refused),
		cmocka_unit_test(test_identity__expectations_report_each_mismatch),
		cmocka_unit_test(test_drop__prove_refuses_a_forged_status),
		cmocka_unit_test(test_drop__prove_refuses_regainable_ids),
		cmocka_unit_test(test_landlock__rule_rights_by_kind_and_abi),
		cmocka_unit_test_setup_teardown(test_drop__apply_proves_ids_caps_and_landlock, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_spawn__env_starts_clean_keeps_and_replaces),
		cmocka_unit_test(test_spawn__env_refuses_bad_entries_and_excess),
		cmocka_unit_test(test_spawn__close_fds_keeps_only_the_list),
		cmocka_unit_test(test_spawn__report_carries_step_and_error_or_eof),
		cmocka_unit_test(test_spawn__exit_code_of_a_wait_status),
		cmocka_unit_test(test_spawn__init_reaps_everything_forwards_signals_returns_main_status),
		cmocka_unit_test(test_escape__controls_backslash_and_bad_utf8),
		cmocka_unit_test(test_reap__status_parse_state_and_every_uid_slot),
		cmocka_unit_test(test_reap__cgroup_kill_ends_a_forking_tree),
		cmocka_unit_test(test_reap__uid_sweep_kills_a_fork_chain_and_restores_identity),
		cmocka_unit_test(test_reap__concurrent_signals_as_uid_spare_each_other),
		cmocka_unit_test(test_reap__a_held_lock_bounds_the_wait_and_the_sweep_still_kills),
		cmocka_unit_test(test_fd__root_dir_ensure_refuses_what_is_not_roots_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
