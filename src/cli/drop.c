/* SPDX-License-Identifier: MIT */
/* drop.c: `proctor drop [options] -- CMD ARGS...`: like setpriv, but every step is checked and
 * the result proven before CMD runs. Any failure: one line naming the step, exit 127. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/path.h"
#include "../lib/strv.h"
#include "../lib/util.h"
#include "../priv/drop.h"

#define DROP_EXIT 127
#define DROP_MAX_FDS 64

extern char **environ;

static int syscall_close_range(unsigned first, unsigned last)
{
	return (int)syscall(SYS_close_range, first, last, 0);
}

static const char drop_usage[] =
	"usage: proctor drop --uid U --gid G [--groups G,G | --clear-groups] [options] -- CMD [ARGS...]\n"
	"Run CMD as an unprivileged identity: no_new_privs, the given groups, uid and gid in all slots,\n"
	"every capability set empty, optionally Landlock; each step is proven before CMD runs.\n"
	"  --uid U, --gid G          numbers or names\n"
	"  --groups G,G              supplementary groups (default: none; --clear-groups says so)\n"
	"  --no-new-privs            always on\n"
	"  --landlock-rw PATH        read-write beneath PATH (repeatable)\n"
	"  --landlock-ro PATH        read-only beneath PATH (repeatable)\n"
	"  --landlock-exec PATH      read and execute beneath PATH (repeatable)\n"
	"                            any of these: everything else is denied (all filesystem rights)\n"
	"  --landlock-scope          also scope abstract unix sockets and signals (ABI 6+)\n"
	"  --new-session             setsid()\n"
	"  --die-with-parent         SIGKILL when the parent dies\n"
	"  --clear-env               start from an empty environment (PATH=/usr/bin:/bin)\n"
	"  --setenv K=V, --keep-env K\n"
	"  --chdir DIR               as the new identity\n"
	"  --close-fds               close every fd above 2 ...\n"
	"  --keep-fd N               ... except N (repeatable)\n"
	"  --allow-root-target       permit --uid 0\n"
	"  --pid-ns                  run CMD in a new pid namespace under a small init: killing\n"
	"                            proctor drop's child (the init) ends the whole tree\n"
	"Exit: CMD's status, or 127 when a step failed (the command never ran). See proctor-drop(1).\n";

struct drop_args {
	struct drop_opts o;
	bool have_uid, have_gid, new_session, die_with_parent, clear_env, close_fds, pidns;
	struct strv setenv, keepenv;
	int keep_fds[DROP_MAX_FDS];
	size_t nkeep;
	const char *chdir;
};

static noreturn void drop_fail(const char *step, int err)
{
	if (err)
		die(DROP_EXIT, "%s: %s", step, strerror(err < 0 ? -err : err));
	die(DROP_EXIT, "%s", step);
}

static uid_t parse_user(const char *s)
{
	unsigned long v;
	struct passwd *pw;

	if (parse_ulong(s, 0, 4294967294UL, &v) == 0)
		return (uid_t)v;
	if (!(pw = getpwnam(s))) {
		log_error("user '%s': no such user", s);
		exit(DROP_EXIT);
	}
	return pw->pw_uid;
}

static gid_t parse_group(const char *s)
{
	unsigned long v;
	struct group *gr;

	if (parse_ulong(s, 0, 4294967294UL, &v) == 0)
		return (gid_t)v;
	if (!(gr = getgrnam(s))) {
		log_error("group '%s': no such group", s);
		exit(DROP_EXIT);
	}
	return gr->gr_gid;
}

static void parse_groups(struct drop_args *a, const char *list)
{
	char *copy = strdup(list), *save = NULL;

	for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		if (a->o.ngroups == IDENTITY_MAX_GROUPS)
			drop_fail("--groups: too many groups", 0);
		a->o.groups[a->o.ngroups++] = parse_group(g);
	}
	free(copy);
}

static void add_landlock(struct drop_args *a, const char *path, enum landlock_kind kind)
{
	if (a->o.nll == DROP_MAX_LANDLOCK_PATHS)
		drop_fail("too many --landlock paths", 0);
	a->o.ll[a->o.nll++] = (struct landlock_path){ .path = path, .kind = kind, .fd = -1 };
}

enum {
	O_UID = 400, O_GID, O_GROUPS, O_CLEARGROUPS, O_NNP, O_LLRW, O_LLRO, O_LLEXEC, O_LLSCOPE, O_SESSION,
	O_PDEATH, O_CLEARENV, O_SETENV, O_KEEPENV, O_CHDIR, O_CLOSEFDS, O_KEEPFD, O_ROOT, O_PIDNS,
};

static void drop_parse(struct drop_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uid", required_argument, NULL, O_UID }, { "gid", required_argument, NULL, O_GID },
		{ "groups", required_argument, NULL, O_GROUPS }, { "clear-groups", no_argument, NULL, O_CLEARGROUPS },
		{ "no-new-privs", no_argument, NULL, O_NNP }, { "landlock-rw", required_argument, NULL, O_LLRW },
		{ "landlock-ro", required_argument, NULL, O_LLRO }, { "landlock-exec", required_argument, NULL, O_LLEXEC },
		{ "landlock-scope", no_argument, NULL, O_LLSCOPE }, { "new-session", no_argument, NULL, O_SESSION },
		{ "die-with-parent", no_argument, NULL, O_PDEATH }, { "clear-env", no_argument, NULL, O_CLEARENV },
		{ "setenv", required_argument, NULL, O_SETENV }, { "keep-env", required_argument, NULL, O_KEEPENV },
		{ "chdir", required_argument, NULL, O_CHDIR }, { "close-fds", no_argument, NULL, O_CLOSEFDS },
		{ "keep-fd", required_argument, NULL, O_KEEPFD }, { "allow-root-target", no_argument, NULL, O_ROOT },
		{ "pid-ns", no_argument, NULL, O_PIDNS },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case O_UID: a->o.uid = parse_user(optarg); a->have_uid = true; break;
		case O_GID: a->o.gid = parse_group(optarg); a->have_gid = true; break;
		case O_GROUPS: parse_groups(a, optarg); break;
		case O_CLEARGROUPS: a->o.ngroups = 0; break;
		case O_NNP: break; /* always on */
		case O_LLRW: add_landlock(a, optarg, LANDLOCK_RW); break;
		case O_LLRO: add_landlock(a, optarg, LANDLOCK_RO); break;
		case O_LLEXEC: add_landlock(a, optarg, LANDLOCK_EXEC); break;
		case O_LLSCOPE: a->o.landlock_scope = true; break;
		case O_SESSION: a->new_session = true; break;
		case O_PDEATH: a->die_with_parent = true; break;
		case O_CLEARENV: a->clear_env = true; break;
		case O_SETENV:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				die(EXIT_USAGE, "--setenv: '%s' is not K=V", optarg);
			strv_push(&a->setenv, optarg);
			break;
		case O_KEEPENV: strv_push(&a->keepenv, optarg); break;
		case O_CHDIR: a->chdir = optarg; break;
		case O_CLOSEFDS: a->close_fds = true; break;
		case O_KEEPFD:
			if (a->nkeep == DROP_MAX_FDS || parse_ulong(optarg, 0, INT_MAX, &v) < 0)
				die(EXIT_USAGE, "--keep-fd: '%s' is not a file descriptor number", optarg);
			a->keep_fds[a->nkeep++] = (int)v;
			break;
		case O_ROOT: a->o.allow_root_target = true; break;
		case O_PIDNS: a->pidns = true; break;
		case 'h': fputs(drop_usage, stdout); exit(EXIT_OK);
		default: fputs(drop_usage, stderr); exit(EXIT_USAGE);
		}
	}
	if (!a->have_uid || !a->have_gid || optind >= argc)
		die(EXIT_USAGE, "give --uid, --gid and the command after -- (see --help)");
}

static char **build_env(struct drop_args *a)
{
	struct strv env = { 0 };

	if (!a->clear_env)
		for (char **e = environ; *e; e++)
			strv_push(&env, *e);
	else
		strv_push(&env, "PATH=/usr/bin:/bin");
	for (size_t i = 0; a->clear_env && i < a->keepenv.n; i++) {
		const char *v = getenv(a->keepenv.v[i]);
		char *kv;

		if (v && asprintf(&kv, "%s=%s", a->keepenv.v[i], v) >= 0) {
			strv_push(&env, kv);
			free(kv);
		}
	}
	for (size_t i = 0; i < a->setenv.n; i++)
		strv_push(&env, a->setenv.v[i]);
	return env.v;
}

static void close_other_fds(const struct drop_args *a)
{
	int from = 3;

	/* close_range over the gaps between the fds to keep */
	for (int fd = 3; fd < 65536; fd++) {
		bool keep = false;

		for (size_t i = 0; i < a->nkeep; i++)
			keep |= a->keep_fds[i] == fd;
		if (!keep)
			continue;
		if (fd > from && syscall_close_range((unsigned)from, (unsigned)fd - 1) < 0)
			drop_fail("--close-fds", errno);
		from = fd + 1;
	}
	if (syscall_close_range((unsigned)from, ~0U) < 0)
		drop_fail("--close-fds", errno);
}

/* In a new pid namespace: this process forks the init (pid 1 there), which forks the command's
 * process and reaps every orphan until the command exits, then exits with its status; the kernel
 * kills whatever is left in the namespace when its init exits. Returns only in the command's
 * process; the others exit here. */
static void pidns_enter(bool die_with_parent)
{
	pid_t init, cmd;
	int st;

	if (unshare(CLONE_NEWPID) < 0)
		drop_fail("--pid-ns: unshare(CLONE_NEWPID)", errno);
	init = fork();
	if (init < 0)
		drop_fail("--pid-ns: fork", errno);
	if (init > 0) {
		while (waitpid(init, &st, 0) < 0 && errno == EINTR)
			;
		/* _exit: after unshare(CLONE_NEWPID) any new child of ours lands in the namespace whose
		 * init just died, so nothing may fork at exit (LeakSanitizer does, under ASan). */
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	if (die_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	cmd = fork();
	if (cmd < 0)
		_exit(DROP_EXIT);
	if (cmd == 0)
		return;
	for (;;) {
		pid_t p = wait(&st);

		if (p == cmd)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (p < 0 && errno != EINTR)
			_exit(DROP_EXIT);
	}
}

int cmd_drop(int argc, char **argv)
{
	struct drop_args a = { 0 };
	const char *step = NULL;
	char *cmd, **env;
	pid_t parent = getppid();
	int r;

	drop_parse(&a, argc, argv);
	/* Found before the drop, so a missing command is reported as such. */
	if (!(cmd = path_find_executable(argv[optind], NULL, NULL)))
		drop_fail(argv[optind], ENOENT);
	if ((r = drop_prepare(&a.o, &step)) < 0)
		drop_fail(step, r);
	if (a.pidns)
		pidns_enter(a.die_with_parent);
	if ((r = drop_apply(&a.o, &step)) < 0)
		drop_fail(step, r);
	if (a.new_session && setsid() < 0)
		drop_fail("--new-session", errno);
	/* After the credential change, which clears the parent-death signal. */
	if (a.die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
		drop_fail("--die-with-parent", errno ? errno : ESRCH);
	if (a.chdir && chdir(a.chdir) < 0)
		drop_fail("--chdir", errno);
	env = build_env(&a);
	if (a.close_fds)
		close_other_fds(&a);
	execve(cmd, argv + optind, env);
	drop_fail("exec", errno);
}
