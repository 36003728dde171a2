/* SPDX-License-Identifier: MIT */
/* doctor.c: `proctor doctor [--json]`: which isolation layers this host supports, and for each
 * one missing, why and how to fix it. Probes in throwaway child processes (and a cgroup created
 * and removed at once); changes nothing. */
#include "cli.h"

#include <errno.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "../priv/drop.h"
#include "../priv/reap.h"

struct check {
	const char *name;
	bool ok;
	char detail[160];
	const char *fix;
};

static bool probe_unshare(int flags)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(unshare(flags) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void check_ids(struct check *c, const char *what, bool is_group, unsigned id)
{
	c->name = what;
	if (is_group) {
		struct group *g = getgrgid(id);

		c->ok = !g;
		snprintf(c->detail, sizeof(c->detail), "gid %u %s%s", id, g ? "belongs to group " : "is free",
			 g ? g->gr_name : "");
	} else {
		struct passwd *p = getpwuid(id);

		c->ok = !p;
		snprintf(c->detail, sizeof(c->detail), "uid %u %s%s", id, p ? "belongs to user " : "is free",
			 p ? p->pw_name : "");
	}
	c->fix = "use ids no real account has, or change the run's agent/mockd/rpc ids";
}

/* cgroup v2 with cgroup.kill: reap's atomic kill of a tree, fork races included. The probe
 * cgroup is removed at once. */
static void check_cgroup_kill(struct check *c)
{
	struct reap_cgroup cg;
	char root[128], name[64];
	int r;

	*c = (struct check){ "cgroup v2 kill", false, "",
			     "mount cgroup2 (Linux 5.14+ for cgroup.kill) and run proctor "
			     "as root; without it reap sweeps by uid" };
	if (reap_cgroup_root(root, sizeof(root)) < 0) {
		snprintf(c->detail, sizeof(c->detail), "no cgroup2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified");
		return;
	}
	snprintf(name, sizeof(name), "proctor-doctor-%d", (int)getpid());
	r = reap_cgroup_create(name, &cg);
	c->ok = r == 0 && reap_cgroup_destroy(&cg) == 0;
	snprintf(c->detail, sizeof(c->detail), "cgroup2 at %.64s: %.80s", root,
		 c->ok            ? "cgroup.kill available" :
		 r == -EOPNOTSUPP ? "no cgroup.kill (Linux before 5.14)" :
				    strerror(-r));
}

/* With legacy TIOCSTI any process holding a terminal can type into it: proctor drop never hands
 * the caller's terminal to a command, but the host setting is worth knowing. */
static void check_tiocsti(struct check *c)
{
	struct buf b;

	*c = (struct check){ "dev.tty.legacy_tiocsti", false, "",
			     "sysctl -w dev.tty.legacy_tiocsti=0 (Linux 6.2+): TIOCSTI then needs CAP_SYS_ADMIN" };
	buf_init(&b, 0);
	if (fd_read_file("/proc/sys/dev/tty/legacy_tiocsti", 64, &b) < 0 || !b.data)
		snprintf(c->detail, sizeof(c->detail), "absent: this kernel (before 6.2) always allows TIOCSTI");
	else if (b.data[0] == '0')
		c->ok = true, snprintf(c->detail, sizeof(c->detail), "0: TIOCSTI needs CAP_SYS_ADMIN");
	else
		snprintf(c->detail, sizeof(c->detail),
			 "%c: a process can push input into any terminal it holds "
			 "(TIOCSTI)",
			 b.data[0] == '1' ? '1' : '?');
	buf_free(&b);
}

static size_t run_checks(struct check *c)
{
	struct buf b;
	int abi = landlock_abi();
	size_t n = 0;

	c[n] = (struct check){ "root", geteuid() == 0, "", "run proctor run as root (it drops privileges itself)" };
	snprintf(c[n++].detail, sizeof(c[0].detail), "euid %u", (unsigned)geteuid());
	c[n] = (struct check){ "landlock", abi > 0, "", "boot a kernel >= 5.13 with lsm=...,landlock" };
	snprintf(c[n++].detail, sizeof(c[0].detail), abi ? "ABI %d enabled" : "not available (disabled or too old)",
		 abi);
	c[n++] = (struct check){ "user namespaces", probe_unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)",
				 "sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0" };
	c[n++] = (struct check){ "pid namespaces", probe_unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)",
				 "allow CLONE_NEWPID (container seccomp profile or --privileged)" };
	c[n++] = (struct check){ "net namespaces", probe_unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)",
				 "allow CLONE_NEWNET" };
	c[n++] = (struct check){ "mount namespaces", probe_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)",
				 "allow CLONE_NEWNS" };
	c[n++] = (struct check){ "seccomp", prctl(PR_GET_SECCOMP) >= 0 || errno != EINVAL, "prctl(PR_GET_SECCOMP)",
				 "a kernel built with CONFIG_SECCOMP_FILTER" };
	check_cgroup_kill(&c[n++]);
	check_tiocsti(&c[n++]);
	check_ids(&c[n++], "agent uid", false, 2000);
	check_ids(&c[n++], "mockd uid", false, 2100);
	check_ids(&c[n++], "rpc gid", true, 2200);
	buf_init(&b, 0);
	c[n] = (struct check){ "/proc hidepid", false, "",
			       "mount -o remount,hidepid=invisible /proc (the agent then "
			       "sees only its own processes)" };
	if (fd_read_file("/proc/self/mounts", 1 << 20, &b) == 0 && b.data) {
		const char *p = strstr(b.data, " /proc proc ");
		const char *nl = p ? strchr(p, '\n') : NULL;

		c[n].ok = p && nl && (memmem(p, (size_t)(nl - p), "hidepid=", 8) != NULL);
		snprintf(c[n].detail, sizeof(c[n].detail), "%s", c[n].ok ? "hidepid set" : "not set");
	}
	buf_free(&b);
	return ++n;
}

int cmd_doctor(int argc, char **argv)
{
	struct check c[20];
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	size_t n, bad = 0;

	if (argc > 1 && !json) {
		fputs("usage: proctor doctor [--json]\nReport which isolation layers this host supports; for "
		      "each one missing, why and the fix.\nExit 0 when every layer is available, 1 otherwise.\n",
		      strcmp(argv[1], "--help") ? stderr : stdout);
		return strcmp(argv[1], "--help") ? EXIT_USAGE : EXIT_OK;
	}
	n = run_checks(c);
	for (size_t i = 0; i < n; i++)
		bad += !c[i].ok;
	if (json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_pack("{s:s,s:b,s:s,s:s}", "check", c[i].name, "ok", c[i].ok,
							     "detail", c[i].detail, "fix", c[i].ok ? "" : c[i].fix));
		json_t *doc = json_pack("{s:o,s:I}", "checks", arr, "missing", (json_int_t)bad);

		json_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
	} else {
		for (size_t i = 0; i < n; i++) {
			/* details quote user and group names and system files: escaped for the terminal */
			char *detail = str_escape(c[i].detail);

			printf("%-4s %-22s %s%s%s\n", c[i].ok ? "ok" : "MISS", c[i].name, detail ? detail : "?",
			       c[i].ok ? "" : "\n     fix: ", c[i].ok ? "" : c[i].fix);
			free(detail);
		}
		printf("%zu of %zu layers available\n", n - bad, n);
	}
	return bad ? EXIT_FAILURE_ : EXIT_OK;
}
