/* SPDX-License-Identifier: MIT */
/* doctor.c: `proctor doctor [--container] [--json]`: which isolation layers this host (or with
 * --container, this container) supports, and for each one missing, why and how to fix it. Probes in throwaway child processes (and a cgroup created
 * and removed at once); changes nothing. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/* ---- --container: what this container allows a run, and which layers it will have ---- */

/* The Pod Security "baseline" capabilities a run needs (doc/SCALE.md says why each). */
static const struct {
	int cap;
	const char *name;
} run_caps[] = {
	{ CAP_CHOWN, "CAP_CHOWN" },   { CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
	{ CAP_FOWNER, "CAP_FOWNER" }, { CAP_KILL, "CAP_KILL" },
	{ CAP_SETGID, "CAP_SETGID" }, { CAP_SETPCAP, "CAP_SETPCAP" },
	{ CAP_SETUID, "CAP_SETUID" },
};

/* A "Name:\tvalue" line of /proc/self/status, or "" (static). */
static const char *status_field(const struct buf *st, const char *name)
{
	static char val[64];
	const char *p = st->data;
	size_t n = strlen(name);

	val[0] = '\0';
	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ':') {
			p += n + 1;
			p += strspn(p, " \t");
			snprintf(val, sizeof(val), "%.*s", (int)strcspn(p, "\n"), p);
			break;
		}
	return val;
}

/* The syscalls a run makes that a container's seccomp profile may refuse: 0 or -errno. */
static int probe_syscall(const char *which)
{
	long r = -1;

	if (!strcmp(which, "openat2")) {
		struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };

		r = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
		if (r >= 0)
			close((int)r);
	} else if (!strcmp(which, "pidfd_open")) {
		r = syscall(SYS_pidfd_open, getpid(), 0);
		if (r >= 0) {
			long s = syscall(SYS_pidfd_send_signal, (int)r, 0, NULL, 0);
			int e = errno;

			close((int)r);
			errno = e;
			r = s;
		}
	} else if (!strcmp(which, "close_range")) {
		r = syscall(SYS_close_range, ~0U - 1, ~0U, CLOSE_RANGE_CLOEXEC); /* no fd that high */
	}
	return r < 0 ? -errno : 0;
}

static void container_facts(json_t *facts, const struct buf *st)
{
	struct buf b;
	const char *rt = "unknown";

	buf_init(&b, 0);
	if (access("/.dockerenv", F_OK) == 0)
		rt = "docker";
	else if (access("/run/.containerenv", F_OK) == 0)
		rt = "podman";
	else if (getenv("KUBERNETES_SERVICE_HOST"))
		rt = "kubernetes";
	else if (fd_read_file("/proc/1/environ", 1 << 16, &b) == 0 && b.data && memmem(b.data, b.len, "container=", 10))
		rt = "container (container= in pid 1's environment)";
	buf_free(&b);
	json_object_set_new(facts, "runtime_hint", json_string(rt));
	json_object_set_new(facts, "pid", json_integer(getpid()));
	json_object_set_new(facts, "cap_eff", json_string(status_field(st, "CapEff")));
	json_object_set_new(facts, "cap_bnd", json_string(status_field(st, "CapBnd")));
	json_object_set_new(facts, "no_new_privs", json_boolean(!strcmp(status_field(st, "NoNewPrivs"), "1")));
	json_object_set_new(facts, "seccomp",
			    json_string(!strcmp(status_field(st, "Seccomp"), "2") ? "filter" :
					!strcmp(status_field(st, "Seccomp"), "1") ? "strict" :
										    "none"));
}

/* Required: a run cannot start without these (exit 1 when one is missing). Layers: what a run
 * here will record, enforced or absent, with the fix for an absent one. */
static size_t container_checks(struct check *c, size_t max, struct check *l, size_t *nl, const struct buf *st)
{
	unsigned long long eff = strtoull(status_field(st, "CapEff"), NULL, 16);
	static const char *const calls[] = { "openat2", "pidfd_open", "close_range" };
	int abi = landlock_abi(), r;
	size_t n = 0, k = 0;

	c[n] = (struct check){ "root", geteuid() == 0, "",
			       "run the container as uid 0 (runAsUser: 0): proctor drops to the agent's uid itself" };
	snprintf(c[n++].detail, sizeof(c[0].detail), "euid %u", (unsigned)geteuid());
	for (size_t i = 0; i < sizeof(run_caps) / sizeof(run_caps[0]) && n < max; i++) {
		c[n] = (struct check){ run_caps[i].name, (eff >> run_caps[i].cap) & 1, "",
				       "add it: securityContext.capabilities.add (Kubernetes), --cap-add (docker, "
				       "podman); it is in the Pod Security baseline set" };
		snprintf(c[n].detail, sizeof(c[0].detail), "%s the effective set", c[n].ok ? "in" : "missing from");
		n++;
	}
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && n < max; i++) {
		r = probe_syscall(calls[i]);
		c[n] = (struct check){ calls[i], r == 0, "",
				       "the seccomp profile refuses it: use the runtime's default profile "
				       "(RuntimeDefault) of a current runtime, on Linux 5.11 or later" };
		snprintf(c[n++].detail, sizeof(c[0].detail), "%s%s",
			 r == 0 ? "allowed" : "refused: ", r == 0 ? "" : strerror(-r));
	}
	c[n] = (struct check){ "landlock", abi > 0, "",
			       "a kernel with Landlock (5.13+, lsm=...,landlock) and a runtime that passes it: gVisor "
			       "has none (use runc or crun); or accept the risk with proctor run "
			       "--allow-no-landlock" };
	snprintf(c[n++].detail, sizeof(c[0].detail), abi ? "ABI %d" : "absent: proctor run refuses (exit 4)", abi);
	check_ids(&c[n++], "agent uid", false, 2000);
	check_ids(&c[n++], "mockd uid", false, 2100);
	check_ids(&c[n++], "rpc gid", true, 2200);

	l[k] = (struct check){ "landlock_scope", abi >= 6, "", "Linux 6.12 or later (Landlock ABI 6)" };
	snprintf(l[k++].detail, sizeof(l[0].detail), "Landlock ABI %d", abi);
	l[k] = (struct check){ "pid_namespace", probe_unshare(CLONE_NEWPID), "",
			       "needs CAP_SYS_ADMIN, beyond the baseline: not worth a privileged pod, the sweep by uid "
			       "ends every agent process" };
	snprintf(l[k].detail, sizeof(l[0].detail), "%s",
		 l[k].ok ? "unshare(CLONE_NEWPID) allowed: the agent's "
			   "processes die with its worker" :
			   "unshare(CLONE_NEWPID) refused: teardown sweeps by uid");
	k++;
	l[k] = (struct check){ "private_proc", probe_unshare(CLONE_NEWPID | CLONE_NEWNS), "",
			       "needs CAP_SYS_ADMIN; or mount the container's /proc with hidepid=invisible" };
	snprintf(l[k].detail, sizeof(l[0].detail), "%s",
		 l[k].ok ? "a mount namespace with the agent's own /proc" :
			   "no mount namespace: the agent can list the container's processes");
	k++;
	*nl = k;
	return n;
}

static int doctor_container(bool json)
{
	struct check c[32], l[4];
	struct buf st;
	size_t n, nl, bad = 0;
	json_t *facts = json_object();

	buf_init(&st, 0);
	if (fd_read_file("/proc/self/status", 1 << 16, &st) < 0 || !st.data) {
		fprintf(stderr, "proctor doctor: /proc/self/status: cannot read it: is /proc mounted?\n");
		buf_free(&st);
		json_decref(facts);
		return EXIT_FAILURE_;
	}
	container_facts(facts, &st);
	n = container_checks(c, sizeof(c) / sizeof(c[0]), l, &nl, &st);
	buf_free(&st);
	for (size_t i = 0; i < n; i++)
		bad += !c[i].ok;
	if (json) {
		json_t *req = json_array(), *lay = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(req, json_pack("{s:s,s:b,s:s,s:s}", "check", c[i].name, "ok", c[i].ok,
							     "detail", c[i].detail, "fix", c[i].ok ? "" : c[i].fix));
		for (size_t i = 0; i < nl; i++)
			json_array_append_new(lay, json_pack("{s:s,s:s,s:s,s:s}", "layer", l[i].name, "state",
							     l[i].ok ? "enforced" : "absent", "detail", l[i].detail,
							     "fix", l[i].ok ? "" : l[i].fix));
		json_t *doc = json_pack("{s:o,s:o,s:o,s:I}", "container", facts, "required", req, "layers", lay,
					"missing", (json_int_t)bad);

		json_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
		return bad ? EXIT_FAILURE_ : EXIT_OK;
	}
	printf("container: %s, pid %d, capabilities %s (bounding %s), NoNewPrivs %d, seccomp %s\n",
	       json_string_value(json_object_get(facts, "runtime_hint")), (int)getpid(),
	       json_string_value(json_object_get(facts, "cap_eff")),
	       json_string_value(json_object_get(facts, "cap_bnd")),
	       json_is_true(json_object_get(facts, "no_new_privs")),
	       json_string_value(json_object_get(facts, "seccomp")));
	json_decref(facts);
	printf("\nrequired by proctor run\n");
	for (size_t i = 0; i < n; i++) {
		char *detail = str_escape(c[i].detail);

		printf("  %-4s %-18s %s%s%s\n", c[i].ok ? "ok" : "MISS", c[i].name, detail ? detail : "?",
		       c[i].ok ? "" : "\n       fix: ", c[i].ok ? "" : c[i].fix);
		free(detail);
	}
	printf("\nlayers a run here will have beyond those the checks above provide (uid, groups,\n"
	       "capabilities, no_new_privs, landlock, no_tty, non_dumpable, fixtures_private, guard)\n");
	for (size_t i = 0; i < nl; i++)
		printf("  %-8s %-18s %s%s%s\n", l[i].ok ? "enforced" : "absent", l[i].name, l[i].detail,
		       l[i].ok ? "" : "\n           to have it: ", l[i].ok ? "" : l[i].fix);
	printf("\n%s\n", bad ? "proctor run cannot run here: fix each MISS above" : "proctor run can run here");
	return bad ? EXIT_FAILURE_ : EXIT_OK;
}

int cmd_doctor(int argc, char **argv)
{
	struct check c[20];
	bool json = false, container = false, help = false;
	size_t n, bad = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--container"))
			container = true;
		else {
			help = true;
			break;
		}
	}
	if (help) {
		bool asked = !strcmp(argv[argc - 1], "--help");

		fputs("usage: proctor doctor [--container] [--json]\nReport which isolation layers this host "
		      "supports; for each one missing, why and the fix.\nExit 0 when every layer is available, 1 "
		      "otherwise.\n  --container  check what this container allows proctor run instead: root, "
		      "the seven baseline\n               capabilities, the syscalls its seccomp profile must allow, "
		      "Landlock; then the\n               layers a run here will have. Exit 1 when proctor run "
		      "cannot run here.\n",
		      asked ? stdout : stderr);
		return asked ? EXIT_OK : EXIT_USAGE;
	}
	if (container)
		return doctor_container(json);
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
