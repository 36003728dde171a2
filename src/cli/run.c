/* SPDX-License-Identifier: MIT */
/* run.c: `proctor run TASK.json [--out DIR]` and `proctor run --suite SUITE [--index N]`: one
 * task in the whole cage, then the report. Exit codes (doc/RESULT.md): 0 result final, 3
 * infrastructure fault, 4 invalid task or suite, or missing layer, 2 usage. As pid 1 (a
 * container's entrypoint) it forks and stays the init: it reaps orphans and passes SIGTERM on
 * to the run, which then tears down and writes result.json. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "../lib/fd.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../priv/spawn.h"
#include "../run/report.h"
#include "../run/run.h"
#include "../run/suite.h"
#include "../run/verdict.h"

static const char run_usage[] =
	"usage: proctor run TASK.json [--out DIR] [OPTIONS]\n"
	"       proctor run --suite SUITE [--index N] [--out OUT] [OPTIONS]\n"
	"Evaluate one task inside the whole cage: stage the workspace and bundles, start mockd as its\n"
	"own user, arm the guard, run the agent as an unprivileged uid under Landlock (in its own pid\n"
	"namespace where the host allows), tear everything down, write DIR/result.json and print the\n"
	"report. Needs root. The task format is doc/TASK.md; result.json is doc/RESULT.md.\n"
	"  --out DIR   the run directory (default runs/<id>-<UTC time>-<pid>; must be absent or empty)\n"
	"  --suite SUITE  run task N of SUITE (a directory of *.json in byte order, or a JSON Lines\n"
	"              file of task paths) into OUT/<id>/ (OUT default runs); a final result there is\n"
	"              not redone. N: --index, else $JOB_COMPLETION_INDEX, else $SLURM_ARRAY_TASK_ID\n"
	"  --agents DIR  agent descriptors searched after the built-in ones (proctor agents list)\n"
	"  --quiet     no progress lines and no report, only errors\n"
	"  --json      print `proctor report --json` at the end instead of the text report\n"
	"  --allow-no-landlock  run where the kernel has no Landlock (gVisor) instead of refusing (exit 4);\n"
	"              result.json's landlock layer records the decision\n"
	"  --termination-log PATH  also write one JSON line (at most 4 KB: status, exit code, task id,\n"
	"              sha256 of result.json) to PATH, e.g. /dev/termination-log in a Kubernetes pod\n"
	"Exit: 0 the run is over and result.json is final; 3 infrastructure fault (retry); 4 invalid\n"
	"task or a required isolation layer missing (do not retry); 2 usage. See proctor-run(1).\n";

static void progress(const char *line)
{
	fprintf(stderr, "proctor run: %s\n", line);
}

struct run_cli {
	struct run_opts o;
	const char *suite, *index, *out, *termlog;
	bool quiet, json;
	char *vdir;                /* the run directory the verdict reports, or NULL */
	char vwhy[SUITE_WHY_SIZE]; /* why there is none */
};

/* -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct run_cli *c)
{
	static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
					      { "quiet", no_argument, NULL, 'q' },
					      { "agents", required_argument, NULL, 'a' },
					      { "json", no_argument, NULL, 'j' },
					      { "suite", required_argument, NULL, 's' },
					      { "index", required_argument, NULL, 'i' },
					      { "allow-no-landlock", no_argument, NULL, 'L' },
					      { "termination-log", required_argument, NULL, 'T' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			c->out = optarg;
			break;
		case 'a':
			c->o.agents_dir = optarg;
			break;
		case 's':
			c->suite = optarg;
			break;
		case 'i':
			c->index = optarg;
			break;
		case 'q':
			c->quiet = true;
			c->o.log = NULL;
			break;
		case 'j':
			c->json = true;
			break;
		case 'L':
			c->o.allow_no_landlock = true;
			break;
		case 'T':
			c->termlog = optarg;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return EXIT_OK;
		default:
			fputs(run_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (c->suite ? optind != argc : optind + 1 != argc)
		die(EXIT_USAGE,
		    c->suite ? "--suite takes no task file (see --help)" : "give one task file (see --help)");
	if (c->index && !c->suite)
		die(EXIT_USAGE, "--index needs --suite (see --help)");
	return -1;
}

static int run_one(struct run_cli *c)
{
	struct diag d;
	char *dir = NULL;
	int code;

	code = run_task(&c->o, &d, &dir);
	for (size_t i = 0; i < d.n; i++) {
		/* A reason can quote the agent's own error text: never raw on a terminal. */
		char *e = str_escape(d.msgs[i].text);

		fprintf(stderr, "%s: %s%s\n", log_prog(), d.msgs[i].level == DIAG_WARNING ? "warning: " : "",
			e ? e : "(unprintable)");
		free(e);
	}
	if (d.errors + d.warnings > d.n)
		fprintf(stderr, "%s: ... and %zu more\n", log_prog(), d.errors + d.warnings - d.n);
	diag_free(&d);
	if (dir && !c->quiet)
		report_print(dir, c->json, stdout);
	if (dir && !c->quiet)
		fprintf(stderr, "proctor run: result in %s/result.json (exit %d)\n", dir, code);
	c->vdir = dir;
	return code;
}

/* --suite: pick the task, then run it in OUT/<id>/ unless a final result is already there.
 * Errors in the suite or the index are the task's kind of error (4: do not retry). */
static int run_suite(struct run_cli *c)
{
	struct run_suite_ref ref = { .path = c->suite };
	const char *out = c->out ? c->out : "runs", *task = NULL;
	char why[SUITE_WHY_SIZE], id[TASK_MAX_ID_LEN + 1], status[32] = "", *dir = NULL;
	struct suite s;
	int lock = -1, code = RUN_EXIT_INVALID, r, prior = 0;

	if (suite_index_pick(c->index, environ, &ref.index, &ref.index_from, why) < 0 ||
	    suite_load(c->suite, &s, why) < 0) {
		log_error("%s", why);
		snprintf(c->vwhy, sizeof(c->vwhy), "%s", why);
		return RUN_EXIT_INVALID;
	}
	ref.tasks = s.tasks.n;
	if (suite_select(&s, ref.index, ref.index_from, &task, why) < 0 || suite_task_id(task, id, why) < 0) {
		log_error("%s", why);
		snprintf(c->vwhy, sizeof(c->vwhy), "%s", why);
		goto out;
	}
	if ((r = suite_prepare_out(out, id, task, &lock, &prior, status, why)) < 0) {
		log_error("%s", why);
		snprintf(c->vwhy, sizeof(c->vwhy), "%s", why);
		code = r == -EEXIST ? RUN_EXIT_INVALID : RUN_EXIT_INFRA;
		goto out;
	}
	if (r == SUITE_DONE) {
		log_error("already done: %s/%s/result.json is final (status %s, exit %d); not run again", out, id,
			  status, prior);
		code = prior;
		if (asprintf(&c->vdir, "%s/%s", out, id) < 0) /* the verdict is the earlier run's */
			c->vdir = NULL;
		goto out;
	}
	if (r == SUITE_MOVED)
		log_error("warning: %s/%s held no final result (an earlier start failed or was killed); kept in %s",
			  out, id, why);
	if (asprintf(&dir, "%s/%s", out, id) < 0)
		die(RUN_EXIT_INFRA, "out of memory");
	c->o.task_file = task;
	c->o.out = dir;
	ref.id = id;
	c->o.suite = &ref;
	code = run_one(c);
out:
	if (lock >= 0)
		close(lock); /* the next start of this task may look now */
	free(dir);
	suite_free(&s);
	return code;
}

/* --termination-log: one line for the container's termination message (verdict.h). The run's
 * own record is result.json: a verdict that cannot be written is a warning, not a new outcome. */
static void write_verdict(struct run_cli *c, int code)
{
	char *line = NULL;
	int fd, err;

	if ((err = verdict_line(c->vdir, code, c->vdir ? NULL : c->vwhy, &line)) == 0) {
		fd = open(c->termlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
		err = fd < 0 ? -errno : fd_write_all(fd, line, strlen(line));
		if (fd >= 0 && close(fd) < 0 && err == 0)
			err = -errno;
	}
	if (err < 0)
		log_error("warning: --termination-log %s: %s", c->termlog, strerror(-err));
	free(line);
}

static int run_main(int argc, char **argv)
{
	struct run_cli c = { .o = { .log = progress } };
	int code = parse_args(argc, argv, &c);

	if (code >= 0)
		return code;
	if (geteuid() != 0)
		die(RUN_EXIT_INVALID,
		    "needs root: it creates the agent's and mockd's identities and tears them down "
		    "(try: sudo proctor run %s)",
		    c.suite ? "--suite ..." : argv[optind]);
	if (c.suite) {
		code = run_suite(&c);
	} else {
		c.o.task_file = argv[optind];
		c.o.out = c.out;
		code = run_one(&c);
	}
	if (c.termlog)
		write_verdict(&c, code);
	free(c.vdir);
	return code;
}

/* As pid 1 (a container's entrypoint, `unshare --pid --fork`): the kernel gives every orphan
 * to pid 1 and drops a signal pid 1 has no handler for, so stay a small init (spawn.h) and run
 * in a child. The child keeps TERM, INT and HUP blocked from the fork on, so one that arrives
 * before run_task() reads them from its signalfd is not lost: it ends the run in an orderly
 * teardown with a final result.json. A child killed by a signal is an infrastructure fault. */
static int run_as_init(int argc, char **argv)
{
	sigset_t set, old;
	pid_t child;
	int st;

	spawn_forward_sigset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((child = fork()) < 0)
		die(RUN_EXIT_INFRA, "fork: %s", strerror(errno));
	if (child == 0) {
		sigaddset(&old, SIGTERM);
		sigaddset(&old, SIGINT);
		sigaddset(&old, SIGHUP);
		sigprocmask(SIG_SETMASK, &old, NULL);
		exit(run_main(argc, argv));
	}
	if (spawn_init_reap(child, &st) < 0)
		return RUN_EXIT_INFRA;
	return WIFEXITED(st) ? WEXITSTATUS(st) : RUN_EXIT_INFRA;
}

int cmd_run(int argc, char **argv)
{
	if (getpid() == 1)
		return run_as_init(argc, argv);
	return run_main(argc, argv);
}
