/* SPDX-License-Identifier: MIT */
/* drop.c: `proctor drop [options] -- CMD ARGS...`: like setpriv, but every step is checked and
 * the result proven before CMD runs, and CMD never shares the caller's terminal, session, fds or
 * environment. proctor drop stays as CMD's supervisor (root): it forwards signals, relays a pty
 * when the caller has a terminal, and exits with CMD's status. Any failure before exec: one line
 * naming the step, exit 127. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/log.h"
#include "../lib/path.h"
#include "../lib/strv.h"
#include "../lib/util.h"
#include "../priv/drop.h"
#include "../priv/pty.h"
#include "../priv/spawn.h"

#define DROP_EXIT 127

extern char **environ;

static const char drop_usage[] =
	"usage: proctor drop --uid U --gid G [--groups G,G | --clear-groups] [options] -- CMD [ARGS...]\n"
	"Run CMD as an unprivileged identity: no_new_privs, the given groups, uid and gid in all slots,\n"
	"every capability set empty, optionally Landlock; each step is proven before CMD runs. CMD runs\n"
	"in a child in a session of its own, with only fds 0-2 and a clean environment; when any of\n"
	"fds 0-2 is a terminal, CMD gets a new pseudo-terminal relayed to it, never the caller's.\n"
	"  --uid U, --gid G          numbers or names\n"
	"  --groups G,G              supplementary groups (default: none; --clear-groups says so)\n"
	"  --landlock-rw PATH        read-write beneath PATH (repeatable)\n"
	"  --landlock-ro PATH        read-only beneath PATH (repeatable)\n"
	"  --landlock-exec PATH      read and execute beneath PATH (repeatable)\n"
	"                            any of these: everything else is denied (all filesystem rights)\n"
	"  --landlock-scope          also scope abstract unix sockets and signals (ABI 6+)\n"
	"  --no-pty                  refuse (exit 127) instead of relaying when fds 0-2 are a terminal\n"
	"  --die-with-parent         SIGKILL when proctor drop's parent dies\n"
	"  --setenv K=V              set K (repeatable); the environment starts as PATH=/usr/bin:/bin\n"
	"  --keep-env K              pass K from the caller's environment (repeatable)\n"
	"  --keep-env-all            pass the caller's whole environment\n"
	"  --keep-fd N               pass fd N too (repeatable; a terminal is refused)\n"
	"  --chdir DIR               as the new identity\n"
	"  --allow-root-target       permit --uid 0\n"
	"  --pid-ns                  run CMD in a new pid namespace under a small init: killing\n"
	"                            proctor drop's child (the init) ends the whole tree\n"
	"  --no-new-privs, --new-session, --clear-env, --close-fds: always on, accepted\n"
	"Exit: CMD's status (128+N when killed by signal N), or 127 when a step failed (the command\n"
	"never ran). See proctor-drop(1).\n";

struct drop_args {
	struct drop_opts o;
	bool have_uid, have_gid, die_with_parent, keep_env_all, pidns, no_pty;
	struct strv setenv, keepenv;
	int keep_fds[SPAWN_MAX_KEEP_FDS];
	size_t nkeep;
	const char *chdir;
};

/* What the child needs besides the options: made by the parent before the fork. */
struct drop_child {
	const char *cmd;
	char **argv, **envp;
	int report_fd; /* write end, close-on-exec: a failure before exec goes here */
	int report_fd_read;
	int alive_fd;      /* read end; the parent holds the write end (--die-with-parent) */
	int slave;         /* the pty's slave, or -1 */
	unsigned tty_mask; /* which of fds 0..2 are the caller's terminal */
	sigset_t old_mask;
};

/* Names and paths come from the command line or the system: escaped, they cannot forge a line
 * or send escape sequences to the operator's terminal. */
static noreturn void drop_fail(const char *step, int err)
{
	char *safe = str_escape(step);
	const char *s = safe ? safe : "(out of memory)";

	if (err)
		log_error("%s: %s", s, strerror(err < 0 ? -err : err));
	else
		log_error("%s", s);
	/* _exit: after unshare(CLONE_NEWPID) nothing may fork at exit (see cmd_drop). */
	_exit(DROP_EXIT);
}

static uid_t parse_user(const char *s)
{
	unsigned long v;
	struct passwd *pw;
	char msg[256];

	if (parse_ulong(s, 0, 4294967294UL, &v) == 0)
		return (uid_t)v;
	if (!(pw = getpwnam(s))) {
		snprintf(msg, sizeof(msg), "user '%.200s': no such user", s);
		drop_fail(msg, 0);
	}
	return pw->pw_uid;
}

static gid_t parse_group(const char *s)
{
	unsigned long v;
	struct group *gr;
	char msg[256];

	if (parse_ulong(s, 0, 4294967294UL, &v) == 0)
		return (gid_t)v;
	if (!(gr = getgrnam(s))) {
		snprintf(msg, sizeof(msg), "group '%.200s': no such group", s);
		drop_fail(msg, 0);
	}
	return gr->gr_gid;
}

static void parse_groups(struct drop_args *a, const char *list)
{
	char *copy = strdup(list), *save = NULL;

	if (!copy)
		drop_fail("--groups", ENOMEM);
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

static void add_keep_fd(struct drop_args *a, const char *arg)
{
	unsigned long v;

	if (a->nkeep == SPAWN_MAX_KEEP_FDS || parse_ulong(arg, 3, INT_MAX, &v) < 0)
		die(EXIT_USAGE, "--keep-fd: '%s' is not a file descriptor number above 2", arg);
	/* Checked now, before drop opens fds of its own that could take the number. */
	if (fcntl((int)v, F_GETFD) < 0)
		drop_fail("--keep-fd: that fd is not open", errno);
	if (isatty((int)v))
		drop_fail("--keep-fd: that fd is a terminal, which the command must not hold (TIOCSTI)", 0);
	a->keep_fds[a->nkeep++] = (int)v;
}

static void push_or_die(struct strv *v, const char *s)
{
	if (strv_push(v, s) < 0)
		drop_fail("arguments", ENOMEM);
}

enum {
	O_UID = 400,
	O_GID,
	O_GROUPS,
	O_CLEARGROUPS,
	O_NNP,
	O_LLRW,
	O_LLRO,
	O_LLEXEC,
	O_LLSCOPE,
	O_SESSION,
	O_PDEATH,
	O_CLEARENV,
	O_SETENV,
	O_KEEPENV,
	O_KEEPENVALL,
	O_CHDIR,
	O_CLOSEFDS,
	O_KEEPFD,
	O_ROOT,
	O_PIDNS,
	O_NOPTY,
};

static const struct option drop_opts_long[] = {
	{ "uid", required_argument, NULL, O_UID },
	{ "gid", required_argument, NULL, O_GID },
	{ "groups", required_argument, NULL, O_GROUPS },
	{ "clear-groups", no_argument, NULL, O_CLEARGROUPS },
	{ "no-new-privs", no_argument, NULL, O_NNP },
	{ "landlock-rw", required_argument, NULL, O_LLRW },
	{ "landlock-ro", required_argument, NULL, O_LLRO },
	{ "landlock-exec", required_argument, NULL, O_LLEXEC },
	{ "landlock-scope", no_argument, NULL, O_LLSCOPE },
	{ "new-session", no_argument, NULL, O_SESSION },
	{ "die-with-parent", no_argument, NULL, O_PDEATH },
	{ "clear-env", no_argument, NULL, O_CLEARENV },
	{ "setenv", required_argument, NULL, O_SETENV },
	{ "keep-env", required_argument, NULL, O_KEEPENV },
	{ "keep-env-all", no_argument, NULL, O_KEEPENVALL },
	{ "chdir", required_argument, NULL, O_CHDIR },
	{ "close-fds", no_argument, NULL, O_CLOSEFDS },
	{ "keep-fd", required_argument, NULL, O_KEEPFD },
	{ "allow-root-target", no_argument, NULL, O_ROOT },
	{ "pid-ns", no_argument, NULL, O_PIDNS },
	{ "no-pty", no_argument, NULL, O_NOPTY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void drop_parse_one(struct drop_args *a, int c)
{
	switch (c) {
	case O_UID:
		a->o.uid = parse_user(optarg);
		a->have_uid = true;
		break;
	case O_GID:
		a->o.gid = parse_group(optarg);
		a->have_gid = true;
		break;
	case O_GROUPS:
		parse_groups(a, optarg);
		break;
	case O_CLEARGROUPS:
		a->o.ngroups = 0;
		break;
	case O_LLRW:
		add_landlock(a, optarg, LANDLOCK_RW);
		break;
	case O_LLRO:
		add_landlock(a, optarg, LANDLOCK_RO);
		break;
	case O_LLEXEC:
		add_landlock(a, optarg, LANDLOCK_EXEC);
		break;
	case O_LLSCOPE:
		a->o.landlock_scope = true;
		break;
	case O_PDEATH:
		a->die_with_parent = true;
		break;
	case O_SETENV:
		if (!strchr(optarg, '=') || optarg[0] == '=')
			die(EXIT_USAGE, "--setenv: '%s' is not K=V", optarg);
		push_or_die(&a->setenv, optarg);
		break;
	case O_KEEPENV:
		if (!optarg[0] || strchr(optarg, '='))
			die(EXIT_USAGE, "--keep-env: '%s' is not a variable name", optarg);
		push_or_die(&a->keepenv, optarg);
		break;
	case O_KEEPENVALL:
		a->keep_env_all = true;
		break;
	case O_CHDIR:
		a->chdir = optarg;
		break;
	case O_KEEPFD:
		add_keep_fd(a, optarg);
		break;
	case O_ROOT:
		a->o.allow_root_target = true;
		break;
	case O_PIDNS:
		a->pidns = true;
		break;
	case O_NOPTY:
		a->no_pty = true;
		break;
	case O_NNP:
	case O_SESSION:
	case O_CLEARENV:
	case O_CLOSEFDS:
		break; /* always on */
	case 'h':
		fputs(drop_usage, stdout);
		exit(EXIT_OK);
	default:
		fputs(drop_usage, stderr);
		exit(EXIT_USAGE);
	}
}

static void drop_parse(struct drop_args *a, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "+h", drop_opts_long, NULL)) != -1)
		drop_parse_one(a, c);
	if (!a->have_uid || !a->have_gid || optind >= argc)
		die(EXIT_USAGE, "give --uid, --gid and the command after -- (see --help)");
}

/* Clean by default; --keep-env-all starts from the caller's (then --setenv on top). With a pty,
 * TERM describes the caller's terminal, which the pty relays to: it is passed too. */
static char **build_env(struct drop_args *a, bool keep_term)
{
	struct strv set = { 0 }, env = { 0 };
	int r;

	if (keep_term)
		push_or_die(&a->keepenv, "TERM");
	for (char **e = a->keep_env_all ? environ : NULL; e && *e; e++)
		if (strchr(*e, '=') && **e != '=')
			push_or_die(&set, *e);
	for (size_t i = 0; i < a->setenv.n; i++)
		push_or_die(&set, a->setenv.v[i]);
	r = spawn_env_build(environ, (const char *const *)a->keepenv.v, a->keepenv.n, (const char *const *)set.v, set.n,
			    &env);
	strv_free(&set);
	if (r < 0)
		drop_fail("environment", r);
	return env.v;
}

/* fds 0..2 open (on /dev/null when the caller closed one), so no fd of ours takes their number. */
static void std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		n = open("/dev/null", O_RDWR);
		if (n != fd)
			drop_fail("open /dev/null for a closed standard fd", n < 0 ? errno : EBADF);
	}
}

static unsigned tty_mask_of_std_fds(void)
{
	unsigned m = 0;

	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			m |= 1u << fd;
	return m;
}

/* In the child: report why, and leave without running atexit handlers of the parent's. */
static noreturn void child_fail(const struct drop_child *c, const char *step, int err)
{
	spawn_report_write(c->report_fd, step, err);
	_exit(DROP_EXIT);
}

/* SIGKILL when drop dies; and if it died before prctl took effect, do not run at all. The pipe
 * works where getppid() cannot: across a pid namespace it is 0 whether the parent lives or not. */
static void child_die_with_parent(const struct drop_child *c)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(c, "--die-with-parent: prctl", errno);
	if (spawn_parent_gone(c->alive_fd))
		child_fail(c, "--die-with-parent: the parent has already exited", ESRCH);
}

static noreturn void child_exec(const struct drop_args *a, const struct drop_child *c)
{
	int keep[SPAWN_MAX_KEEP_FDS + 1], r;
	const char *step = NULL;

	if (setsid() < 0)
		child_fail(c, "setsid (a session of its own)", errno);
	if (c->slave >= 0 && (r = pty_attach(c->slave, c->tty_mask)) < 0)
		child_fail(c, "pty: make it the controlling terminal", r);
	if ((r = drop_apply(&a->o, &step)) < 0)
		child_fail(c, step, r);
	/* After the credential change, which clears the parent-death signal. */
	if (a->die_with_parent && !a->pidns)
		child_die_with_parent(c);
	if (a->chdir && chdir(a->chdir) < 0)
		child_fail(c, "--chdir", errno);
	memcpy(keep, a->keep_fds, a->nkeep * sizeof(int));
	keep[a->nkeep] = c->report_fd;
	if ((r = spawn_close_fds_except(keep, a->nkeep + 1)) < 0)
		child_fail(c, "close inherited fds", r);
	for (size_t i = 0; i < a->nkeep; i++)
		fcntl(a->keep_fds[i], F_SETFD, 0);
	sigprocmask(SIG_SETMASK, &c->old_mask, NULL);
	execve(c->cmd, c->argv, c->envp);
	child_fail(c, "exec", errno);
}

/* The child of drop in a new pid namespace is its init (pid 1), root, running no agent code:
 * it forks the command and reaps every orphan until the command exits. */
static noreturn void child_init(const struct drop_args *a, const struct drop_child *c)
{
	pid_t cmd;
	int st;

	if (setsid() < 0)
		child_fail(c, "--pid-ns: setsid", errno);
	/* getppid() is 0 here (the parent is outside the namespace): the pipe says if it died. */
	if (a->die_with_parent)
		child_die_with_parent(c);
	cmd = fork();
	if (cmd < 0)
		child_fail(c, "--pid-ns: fork", errno);
	if (cmd == 0)
		child_exec(a, c);
	close(c->report_fd); /* the parent reads EOF once the command has exec'd */
	if (c->slave >= 0)
		close(c->slave);
	_exit(spawn_init_reap(cmd, &st) < 0 ? DROP_EXIT : spawn_exit_code(st));
}

struct relay {
	int master, in, out; /* -1: none */
	bool raw;
	struct termios saved;
};

/* Where the command's terminal output goes: the caller's terminal on fd 1, else 2, else 0. */
static void relay_setup(struct relay *rl, unsigned tty_mask)
{
	rl->in = rl->out = -1;
	rl->raw = false;
	if (rl->master < 0)
		return;
	rl->out = tty_mask & 2 ? 1 : tty_mask & 4 ? 2 : 0;
	/* Read the caller's terminal only in its foreground: a background job would be stopped. */
	if ((tty_mask & 1) && tcgetpgrp(0) == getpgrp()) {
		rl->in = 0;
		rl->raw = pty_raw_begin(0, &rl->saved) == 0;
	}
}

static void relay_end(struct relay *rl)
{
	if (rl->master >= 0)
		pty_drain(rl->master, rl->out);
	if (rl->raw)
		pty_raw_end(0, &rl->saved);
}

/* One signal for the supervisor: SIGCHLD ends the loop when the command is gone (1); a window
 * change resizes the pty; anything else goes on to the command. */
static int on_signal(int sfd, pid_t child, const struct relay *rl, int *ret_st)
{
	struct signalfd_siginfo si;
	int sig;

	if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	sig = (int)si.ssi_signo;
	if (sig == SIGCHLD) {
		/* drop is a subreaper: orphans of the command are reaped here, not left to pid 1. */
		int st, done = 0;
		pid_t p;

		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == child) {
				*ret_st = st;
				done = 1;
			}
		return done;
	}
	if (sig == SIGWINCH && rl->master >= 0)
		pty_copy_winsize(rl->out, rl->master);
	else
		kill(child, sig);
	return 0;
}

/* Wait for the command, forwarding signals and relaying the pty. The wait status, or -errno
 * (then the command has been killed). */
static int supervise(pid_t child, struct relay *rl)
{
	sigset_t set;
	int sfd, st = 0, done = 0, mfd = rl->master;

	spawn_forward_sigset(&set);
	sigaddset(&set, SIGCHLD);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		int err = errno;

		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		return -err;
	}
	/* The command may have exited before signalfd existed: its SIGCHLD is pending, not lost. */
	while (!done) {
		struct pollfd p[3] = { { sfd, POLLIN, 0 }, { rl->in, POLLIN, 0 }, { mfd, POLLIN, 0 } };

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN)
			done = on_signal(sfd, child, rl, &st);
		if (p[1].revents && pty_pump(rl->in, rl->master) <= 0)
			rl->in = -1; /* the caller's terminal hung up */
		if (p[2].revents && pty_pump(mfd, rl->out) <= 0)
			mfd = -1; /* every slave closed: nothing more will come */
	}
	close(sfd);
	if (!done && waitpid(child, &st, 0) < 0)
		return -ECHILD;
	return st;
}

/* Parent side of the fork. Returns only the command's exit code. */
static int drop_parent(pid_t child, struct drop_child *c, int master)
{
	char step[SPAWN_STEP_MAX + 1];
	struct relay rl = { .master = master };
	int err = 0, st, r;

	close(c->report_fd);
	if (c->slave >= 0)
		close(c->slave);
	/* Blocks until the command has exec'd (EOF) or a step failed (a report). */
	r = spawn_report_read(c->report_fd_read, step, &err);
	if (r < 0 || err) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		drop_fail(r < 0 ? "reading the child's report" : step, r < 0 ? r : err);
	}
	relay_setup(&rl, c->tty_mask);
	st = supervise(child, &rl);
	relay_end(&rl);
	if (st < 0)
		drop_fail("waiting for the command", st);
	return spawn_exit_code(st);
}

static void make_pipe(int p[2], const char *what)
{
	if (pipe2(p, O_CLOEXEC) < 0)
		drop_fail(what, errno);
}

int cmd_drop(int argc, char **argv)
{
	struct drop_args a = { 0 };
	struct drop_child c = { .slave = -1 };
	const char *step = NULL;
	int report[2], alive[2], master = -1, r;
	sigset_t block;
	pid_t parent = getppid(), child;

	std_fds_open();
	drop_parse(&a, argc, argv);
	/* Found before the drop, so a missing command is reported as such. */
	if (!(c.cmd = path_find_executable(argv[optind], NULL, NULL)))
		drop_fail(argv[optind], ENOENT);
	if ((r = drop_prepare(&a.o, &step)) < 0)
		drop_fail(step, r);
	c.tty_mask = tty_mask_of_std_fds();
	if (c.tty_mask && a.no_pty)
		drop_fail("--no-pty: fds 0-2 include the caller's terminal, which the command must not hold "
			  "(TIOCSTI would type into it); redirect them or drop --no-pty",
			  0);
	c.argv = argv + optind;
	c.envp = build_env(&a, c.tty_mask != 0);
	if (c.tty_mask && (r = pty_open(c.tty_mask & 1 ? 0 : c.tty_mask & 2 ? 1 : 2, &master, &c.slave)) < 0)
		drop_fail("pty: open a terminal for the command", r);
	/* drop itself dies with its parent, and the command with drop. */
	if (a.die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		drop_fail("--die-with-parent: prctl", errno);
	if (a.die_with_parent && getppid() != parent)
		drop_fail("--die-with-parent: the parent has already exited", ESRCH);
	make_pipe(report, "report pipe");
	make_pipe(alive, "parent pipe");
	c.report_fd = report[1];
	c.report_fd_read = report[0];
	c.alive_fd = alive[0];
	/* Blocked across the fork: the command unblocks them at exec, drop reads them from a signalfd. */
	spawn_forward_sigset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &c.old_mask);
	/* Orphans of the command re-parent to drop (root), which reaps them while it waits. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		drop_fail("prctl(PR_SET_CHILD_SUBREAPER)", errno);
	if (a.pidns && unshare(CLONE_NEWPID) < 0)
		drop_fail("--pid-ns: unshare(CLONE_NEWPID)", errno);
	child = fork();
	if (child < 0)
		drop_fail("fork", errno);
	if (child == 0) {
		close(report[0]);
		close(alive[1]);
		if (master >= 0)
			close(master);
		if (a.pidns)
			child_init(&a, &c);
		child_exec(&a, &c);
	}
	close(alive[0]);
	r = drop_parent(child, &c, master);
	fflush(NULL);
	/* _exit: after unshare(CLONE_NEWPID) any new child of ours would land in the namespace whose
	 * init has exited, so nothing may fork at exit (LeakSanitizer does, under ASan). */
	_exit(r);
}
